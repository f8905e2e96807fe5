"""drf-spectacular extensions: how the service's own authentication appears in OpenAPI."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "ingest.authentication.BearerTokenAuthentication"
    name = "bearerToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A token from `manage.py create_token --scope read|ingest`. Read "
            "endpoints need a read token (an ingest token gets 403), ingest endpoints an "
            "ingest token.",
        }
