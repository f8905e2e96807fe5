"""Who may read the mount without a token: the one rule, asked by the view and the middleware."""

from django.conf import settings
from django.http import HttpRequest
from django.http.request import split_domain_port


def on_marquez_host(request: HttpRequest) -> bool:
    """Whether the request's Host is one of MARQUEZ_API["HOSTS"] (port and case ignored)."""
    hosts = settings.MARQUEZ_API["HOSTS"]
    if not hosts:
        return False
    host, _port = split_domain_port(request.get_host())
    return host in hosts


def anonymous_reads_allowed(request: HttpRequest) -> bool:
    """Reads without a token: only when switched on and, when hosts are named, on them.

    The hosts are the Marquez UI's own names (an internal DNS name, say): anonymous reads
    must not open on the catalog's public host because the UI needs them on its own.
    """
    if not settings.MARQUEZ_API["ALLOW_ANONYMOUS_READS"]:
        return False
    return on_marquez_host(request) if settings.MARQUEZ_API["HOSTS"] else True
