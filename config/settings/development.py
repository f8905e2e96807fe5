"""Local development (``make run``): debug on, a throwaway secret key when none is given."""

from config.env import env_str
from config.settings.base import *  # noqa: F403

DEBUG = True
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "development-only-insecure-key-do-not-deploy")
ALLOWED_HOSTS = ["*"]
