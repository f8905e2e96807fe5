from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "Read API"
    # The OpenAPI extensions (api/schema.py) are registered by api/urls.py, not by ready():
    # every schema is generated from the URL map, so they are in place before any is, and a
    # process that never loads the URL map (a worker, most `manage.py` commands) does not
    # import drf-spectacular's machinery at start-up (ADR 0113).
