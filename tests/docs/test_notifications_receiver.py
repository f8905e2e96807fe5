"""docs/notifications.md's ten-line receiver, run as written against real deliveries: it
takes a delivery signed with its secret (answers 204) and refuses one signed with another
(401). Only its secret, its address and its endless serve are replaced by the test."""

import threading
from http.server import HTTPServer
from typing import Any

import pytest

from catalog.models import WebhookSubscription
from catalog.notify import delivery
from tests.docs.blocks import ROOT, blocks

pytestmark = pytest.mark.django_db
DOC = "docs/notifications.md"


def receiver_code() -> str:
    (code,) = [
        block.text
        for block in blocks(ROOT / DOC)
        if block.language == "python" and "class Hook" in block.text
    ]
    lines = [line for line in code.splitlines() if line.strip()]
    # "A receiver in ten lines", and its two imports.
    assert len([line for line in lines if not line.startswith(("import ", "from "))]) == 10
    return code


def test_the_documented_receiver_checks_the_signature(settings: Any) -> None:
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOW_PRIVATE": True, "MAX_ATTEMPTS": 3}
    code = receiver_code().replace('b"whsec_..."', "SECRET_FROM_TEST")
    serve = 'HTTPServer(("", 8080), Hook).serve_forever()'
    assert serve in code
    namespace: dict[str, Any] = {"SECRET_FROM_TEST": b"whsec_right"}
    exec(code.replace(serve, ""), namespace)  # the doc's own code, from the repository
    server = HTTPServer(("127.0.0.1", 0), namespace["Hook"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        right = WebhookSubscription.objects.create(name="right", url=url, secret="whsec_right")
        wrong = WebhookSubscription.objects.create(name="wrong", url=url, secret="whsec_wrong")
        for subscription, status, code_seen in ((right, "delivered", 204), (wrong, "failed", 401)):
            sent = delivery.test_send(subscription)
            assert delivery.deliver(str(sent.id)) == status
            sent.refresh_from_db()
            assert sent.last_status_code == code_seen
    finally:
        server.shutdown()
        server.server_close()
