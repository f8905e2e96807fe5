"""Secrets shown once, on the answer to the action that made them (ADR 0178).

An API token made in the admin and a webhook subscription's signing secret (made or
rotated) are shown to the person who made them and then never again. Not in Django's
messages: their cookie is signed, not encrypted, so whoever sees the cookie (a proxy's log,
a shared browser) reads the secret, and messages that do not fit it are written into the
django_session table until shown. The action answers with this page instead: the secrets
in its body only, and headers that tell browsers and proxies to keep no copy. A reload
posts the action again (a new secret; the one shown here stops working).
"""

from django.contrib import admin
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import add_never_cache_headers


def shown_once(
    request: HttpRequest,
    model_admin: admin.ModelAdmin,
    title: str,
    secrets: list[tuple[str, str]],
    what: str,
) -> TemplateResponse:
    """The page that shows ``secrets`` (each a name and its secret) once: ``title`` says
    what was done, ``what`` what each secret is for."""
    opts = model_admin.model._meta
    changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
    context = {
        **model_admin.admin_site.each_context(request),
        "opts": opts,
        "title": title,
        "secrets": secrets,
        "what": what,
        "changelist": changelist,
    }
    response = TemplateResponse(request, "admin/shown_once.html", context)
    add_never_cache_headers(response)  # no-cache, no-store, must-revalidate, private
    response["Referrer-Policy"] = "no-referrer"
    return response
