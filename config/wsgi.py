"""WSGI entry point (served by config/server.py). Production settings unless told otherwise."""

import os

import django
from django.conf import settings
from django.utils.module_loading import import_string

from config.env import web_threads
from core.body_reads import BodyReads
from core.heap import FreeingWSGIHandler, freeze_startup_heap
from core.statement_timeout import limit_statement_time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

# The web process's connections open with the statement timeout; the worker's, the
# consumer's and the commands' (which never import this module) without it.
limit_statement_time(settings.DATABASES, settings.LINEAGE["READ_STATEMENT_TIMEOUT_MS"])

# What get_wsgi_application() does, with a handler whose finished requests are freed by
# reference counting, not left to the garbage collector (core/heap.py, ADR 0132).
django.setup(set_prefix=False)
django_application = FreeingWSGIHandler()

# Imported after Django is set up: they import models. Single-event ingest (ingest/fastpath.py,
# ADR 0006) and the API's authenticated reads (config/read_front.py, ADR 0144) are served in
# front of Django's request cycle; every other request reaches Django untouched.
from config.read_front import ReadFrontPath  # noqa: E402
from ingest.fastpath import IngestFastPath  # noqa: E402

# At most WEB_THREADS - 1 threads of a worker wait on request bodies at once, so a peer
# sending bodies a byte at a time cannot take the thread the probes need (ADR 0197).
application = BodyReads(ReadFrontPath(IngestFastPath(django_application)), web_threads() - 1)

# Modules the first requests of every worker imported lazily, holding the GIL in the middle
# of its first batches (ADR 0096): the publisher's (Celery, kombu) and the message storage
# that MessageMiddleware imports on the first request through Django's handler.
from ingest.enqueue import import_publisher_modules  # noqa: E402

import_publisher_modules()
import_string(settings.MESSAGE_STORAGE)

# What start-up built lives as long as the process (core/heap.py). config/server.py imports
# this in the main process, so the forked workers also share those pages.
freeze_startup_heap()
