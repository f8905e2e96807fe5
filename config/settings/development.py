"""Local development (``make run``): debug on, a throwaway secret key when none is given.

With DEBUG on and a known key, the server must not be reachable by others: ``make run``
listens on 127.0.0.1 (scripts/run_local.py) and, as in base, only loopback Host names are
accepted (``DJANGO_ALLOWED_HOSTS`` adds more), so a web page cannot reach it by DNS
rebinding either.
"""

from config.env import env_str
from config.settings.base import *  # noqa: F403

DEBUG = True
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "development-only-insecure-key-do-not-deploy")
