"""The chart's webhook sender (ADR 0101): by default a worker of threads on the ``webhooks``
queue beside a derive worker on ``lineage``, the queues config/settings routes the tasks
to; disabled, one worker consumes both."""

from django.conf import settings

from tests.deploy.rendering import containers, render_values


def _command(rendered, suffix: str) -> list[str]:
    (container,) = containers(rendered.named("Deployment", suffix)["spec"]["template"]["spec"])
    return container["command"]


def test_the_sender_consumes_the_webhooks_queue_and_the_worker_derives_only() -> None:
    rendered = render_values({})
    sender = _command(rendered, "-webhooks")
    assert "--queues=webhooks" in sender and "--pool=threads" in sender
    assert "--queues=lineage" in _command(rendered, "-worker")
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert routed == {"webhooks"}
    declared = {queue.name for queue in settings.CELERY_TASK_QUEUES}
    assert declared == {"webhooks", settings.CELERY_TASK_DEFAULT_QUEUE}


def test_without_the_sender_the_worker_consumes_every_queue() -> None:
    rendered = render_values({"webhooks": {"enabled": False}})
    names = {d["metadata"]["name"] for d in rendered.of_kind("Deployment")}
    assert not any(name.endswith("-webhooks") for name in names)
    assert not any(part.startswith("--queues") for part in _command(rendered, "-worker"))
