"""Project configuration: settings, URLs, the Celery app, WSGI/ASGI entry points. No logic."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
