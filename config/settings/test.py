"""Settings for the test suite: real PostgreSQL and Redis, fast password hashing."""

from config.env import env_str
from config.settings.base import *  # noqa: F403
from config.settings.base import LINEAGE

SECRET_KEY = "test-only-secret-key"
DEBUG = False
ALLOWED_HOSTS = ["*"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/15")
CELERY_BROKER_URL = REDIS_URL
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LINEAGE = {**LINEAGE, "ENQUEUE_BACKOFF_SECONDS": 0}
