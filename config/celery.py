"""The Celery application. Tasks live in the apps; settings come from Django (CELERY_*)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")

app = Celery("lineage_catalog")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
