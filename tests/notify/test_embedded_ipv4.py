"""ADR 0178, SSRF: docs/notifications.md refuses a receiver whose host resolves to a
non-global address, but IPv6 forms that carry an IPv4 address passed: NAT64
(64:ff9b::a9fe:a9fe is 169.254.169.254, the cloud metadata service, through a translator),
6to4, IPv4-compatible, the local-use NAT64 prefix; Python 3.11's ``is_global`` is true of
several of them. Each is refused when a steward saves the subscription and again when a
delivery is tried, after the name's DNS answer changed from a public address to it (the
sender connects only to the address it has just checked); a public address still passes
both."""

import socket
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from catalog.models import DeliveryStatus, WebhookSubscription
from catalog.notify import addresses, delivery
from catalog.permissions import STEWARDS, apply_registry_permissions
from tests.notify.receivers import receiver

pytestmark = pytest.mark.django_db
ADD = "/admin/catalog/webhooksubscription/add/"
NAME = "receiver.example"
PUBLIC = "2606:4700:4700::1111"  # a global unicast address (Cloudflare's resolver)
# Each form, and the IPv4 address its refusal names.
FORMS = {
    "64:ff9b::a9fe:a9fe": "169.254.169.254",  # NAT64 of the metadata service
    "64:ff9b::a00:1": "10.0.0.1",  # NAT64
    "2002:a00:1::1": "10.0.0.1",  # 6to4
    "::a9fe:a9fe": "169.254.169.254",  # IPv4-compatible
    "::ffff:a9fe:a9fe": "169.254.169.254",  # IPv4-mapped
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "192.0.2.45",  # Teredo (its client)
    "64:ff9b:1::a00:1": "10.0.0.1",  # local-use NAT64
}


@pytest.fixture
def steward_client(refuse_private: None) -> Client:
    apply_registry_permissions()
    user = User.objects.create_user("steward", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=STEWARDS))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """What ``receiver.example`` resolves to now (the test changes it), and every connection
    to ``PUBLIC`` taken to the test's receiver on 127.0.0.1 (this machine may have no route
    out): the sender connects to the address it checked, never to the name."""
    answer = [PUBLIC]
    real_lookup, real_connect = socket.getaddrinfo, socket.create_connection

    def getaddrinfo(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host != NAME:
            return real_lookup(host, port, *args, **kwargs)
        return [
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))
            for address in answer
        ]

    def create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
        if address[0] == PUBLIC:
            address = ("127.0.0.1", address[1])
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    yield answer


def form(url: str) -> dict[str, Any]:
    return {"name": "orders team", "url": url, "active": "on", "downstream_depth": "5"}


@pytest.mark.parametrize("address", FORMS)
def test_a_form_that_carries_a_refused_ipv4_address_is_refused_when_saved(
    steward_client: Client, address: str
) -> None:
    response = steward_client.post(ADD, form(f"http://[{address}]:8080/hook"))
    page = response.content.decode()
    assert response.status_code == 200 and "resolves to" in page and FORMS[address] in page
    assert not WebhookSubscription.objects.exists()


@pytest.mark.parametrize("address", FORMS)
def test_a_name_that_turns_to_such_a_form_is_refused_when_sent(
    steward_client: Client, dns: list[str], address: str
) -> None:
    with receiver() as hook:
        url = f"http://{NAME}:{hook.port}/hook"
        saved = steward_client.post(ADD, form(url))  # public when saved: its secret's page
        assert saved.status_code == 200 and "shown-once" in saved.content.decode()
        subscription = WebhookSubscription.objects.get()
        first = delivery.test_send(subscription)
        assert delivery.deliver(str(first.id)) == DeliveryStatus.DELIVERED  # public passes
        dns[:] = [address]  # the name's owner changes its answer
        second = delivery.test_send(subscription)
        assert delivery.deliver(str(second.id)) == DeliveryStatus.FAILED
        assert len(hook.received) == 1  # the second never reached anything
        # A public address beside the form: every address must pass.
        dns[:] = [PUBLIC, address]
        with pytest.raises(addresses.RefusedAddress):
            addresses.resolve(url)
    second.refresh_from_db()
    assert second.last_error.startswith(f"refused: {NAME} resolves to ")
    assert FORMS[address] in second.last_error


def test_an_allowed_translator_lets_in_only_what_its_ipv4_addresses_may_reach(
    refuse_private: None, settings: Any
) -> None:
    """An operator whose receivers are reached through NAT64 allows its prefix; the IPv4
    address inside is checked all the same: allowing the translator is not allowing the
    metadata service behind it."""
    with pytest.raises(addresses.RefusedAddress, match="NAT64 address"):
        addresses.resolve("http://[64:ff9b::808:808]/hook")  # 8.8.8.8, not allowed by default
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_NETWORKS": ["64:ff9b::/96"]}
    assert addresses.resolve("http://[64:ff9b::808:808]/hook").address == "64:ff9b::808:808"
    for refused in ("64:ff9b::a9fe:a9fe", "64:ff9b::a00:1"):
        with pytest.raises(addresses.RefusedAddress, match="NAT64 form of"):
            addresses.resolve(f"http://[{refused}]/hook")
    settings.WEBHOOKS = {**settings.WEBHOOKS, "ALLOWED_NETWORKS": ["64:ff9b::/96", "10.0.0.0/8"]}
    assert addresses.resolve("http://[64:ff9b::a00:1]/hook").address == "64:ff9b::a00:1"


def test_public_addresses_pass_in_every_family(refuse_private: None) -> None:
    for public in ("8.8.8.8", "[2606:4700:4700::1111]", "[::ffff:808:808]", "[2002:808:808::1]"):
        assert addresses.resolve(f"https://{public}/hook").port == 443
