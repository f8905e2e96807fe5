from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "Read API"

    def ready(self) -> None:
        # Registers the OpenAPI extensions (drf-spectacular finds them by subclassing).
        from api import schema  # noqa: F401
