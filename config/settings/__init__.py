"""Settings split by environment: ``base`` holds everything, the others adjust it.

``manage.py`` and the Celery app default to ``development``; the container image sets
``DJANGO_SETTINGS_MODULE=config.settings.production``; pytest uses ``test``.
"""
