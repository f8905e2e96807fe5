"""WSGI entry point (gunicorn config.wsgi). Production settings unless told otherwise."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

django_application = get_wsgi_application()

# Imported after Django is set up: it imports models. Single-event ingest is served in
# front of Django's request cycle (ingest/fastpath.py, ADR 0006).
from ingest.fastpath import IngestFastPath  # noqa: E402

application = IngestFastPath(django_application)
