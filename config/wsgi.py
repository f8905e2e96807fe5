"""WSGI entry point (served by config/server.py). Production settings unless told otherwise."""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

django_application = get_wsgi_application()

# Imported after Django is set up: it imports models. Single-event ingest is served in
# front of Django's request cycle (ingest/fastpath.py, ADR 0006).
from ingest.fastpath import IngestFastPath  # noqa: E402

application = IngestFastPath(django_application)

# What start-up built (modules, settings, URLconf, DRF and Django classes: ~130,000 objects)
# lives as long as the process: moved out of the collector's reach, a request's garbage
# collections no longer traverse it. Measured in process (issue 14): collections cost
# 56-93 µs CPU per single-event request before, 20 after. config/server.py imports this in
# the main process, so the forked workers also share those pages instead of copying them.
gc.collect()
gc.freeze()
