"""Errors inside the mount are Marquez's ``{code, message, details}``, not problem documents.

Marquez's UI shows ``message``; its Python client only looks at the status. Every error the
read side can raise (our ``Problem``, DRF's authentication/permission/throttle errors) is
translated here, so a client of the mount never sees two error formats.
"""

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler

from core.problems import Problem, request_error_detail, unreadable_request
from core.problems import bad_request as project_bad_request


class MarquezError(Exception):
    def __init__(self, code: int, message: str, details: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details


def body(code: int, message: str, details: str | None = None) -> dict[str, Any]:
    return {"code": code, "message": message, "details": details}


def error_response(code: int, message: str, details: str | None = None) -> JsonResponse:
    """For answers given before DRF is involved (unknown path, mount switched off)."""
    return JsonResponse(body(code, message, details), status=code)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """The project's handler400 (config/urls.py): under the mount, Marquez's shape; else
    the project's (a problem document under /api/)."""
    if request.path.startswith("/marquez/api/"):
        return error_response(400, request_error_detail(exception))
    return project_bad_request(request, exception)


def not_found(what: str) -> MarquezError:
    return MarquezError(404, f"{what} not found.")


def marquez_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, MarquezError):
        return Response(body(exc.code, exc.message, exc.details), status=exc.code)
    if isinstance(exc, Problem):
        return Response(
            body(exc.status, exc.detail or exc.title), status=exc.status, headers=exc.headers
        )
    if isinstance(exc, Http404):
        return Response(body(404, "Not found."), status=404)
    if unreadable_request(exc):  # handler400's answer, also in front of Django (core.problems)
        return Response(body(400, request_error_detail(exc)), status=400)
    response = exception_handler(exc, context)  # keeps WWW-Authenticate, Retry-After
    if response is None:
        return None
    detail = exc.detail if isinstance(exc, exceptions.APIException) else ""
    response.data = body(response.status_code, str(detail) or "Request failed.")
    return response
