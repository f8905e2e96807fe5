"""ASGI entry point. Production settings unless told otherwise."""

import os

from django.conf import settings
from django.core.asgi import get_asgi_application

from core.statement_timeout import limit_statement_time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

# As config/wsgi.py: the web process's connections open with the statement timeout.
limit_statement_time(settings.DATABASES, settings.LINEAGE["READ_STATEMENT_TIMEOUT_MS"])

application = get_asgi_application()
