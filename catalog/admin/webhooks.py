"""Webhook subscriptions and their delivery log in the admin (ADR 0086, docs/admin.md).

Stewards add, change and switch off subscriptions (the URL is checked as the sender checks
it: no private address unless the operator allows it); the signing secret is shown once,
when made or rotated, on the answer to that action and never in a message (ADR 0178). The
delivery log is read-only: what was sent, the answer, the tries; its replay action sends a
delivery again under the same id, and a subscription's "send a test delivery" action sends
a ping through the same path.
"""

from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.db import IntegrityError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.html import format_html

from catalog.models import (
    ChangeKind,
    DeliveryStatus,
    WebhookDelivery,
    WebhookSubscription,
)
from catalog.models.webhooks import new_secret
from catalog.notify import addresses, delivery
from core.admin_base import BoundedAdmin, ChoicesFilter, pretty_json
from core.admin_scans import PresentValuesFilter
from ingest.admin.shown_once import shown_once

MAX_SCOPE_LINES = 200
# What a subscription action does at once: a rotation shows every secret on its page.
MAX_AT_ONCE = 20
# What a replay queues at once (each is an admin-log entry); the rest is replayed next time.
MAX_REPLAY = 500
# Who sees receiver URLs (and what may quote them): those who manage subscriptions.
SEES_SUBSCRIPTIONS = "catalog.change_webhooksubscription"
# The constraint that keeps names unique (the column's UNIQUE, as migration 0028 made it).
NAME_UNIQUE = "catalog_webhook_subscription_name_key"


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class _PairsField(forms.CharField):
    """One dataset a line: its namespace, a blank, its name (namespaces have no blanks)."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 80})

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, list):
            return "\n".join(f"{pair[0]} {pair[1]}" for pair in value if len(pair) == 2)
        return value

    def to_python(self, value: Any) -> list[list[str]]:  # type: ignore[override]
        pairs = []
        for line in _lines(super().to_python(value) or "")[: MAX_SCOPE_LINES + 1]:
            namespace, _, name = line.partition(" ")
            if not name.strip():
                raise forms.ValidationError(f"{line!r}: write the namespace, a blank, the name.")
            pairs.append([namespace, name.strip()])
        if len(pairs) > MAX_SCOPE_LINES:
            raise forms.ValidationError(f"At most {MAX_SCOPE_LINES} datasets.")
        return pairs


class _LinesField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 2, "cols": 80})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(str(item) for item in value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:  # type: ignore[override]
        lines = _lines(super().to_python(value) or "")
        if len(lines) > MAX_SCOPE_LINES:
            raise forms.ValidationError(f"At most {MAX_SCOPE_LINES} namespaces.")
        return lines


class SubscriptionForm(forms.ModelForm):
    url = forms.URLField(
        max_length=2000, assume_scheme="https", help_text="Where deliveries are POSTed."
    )
    kinds = forms.MultipleChoiceField(
        choices=ChangeKind.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="None ticked: every kind.",
    )
    namespaces = _LinesField(required=False, help_text="One namespace a line.")
    datasets = _PairsField(required=False, help_text="One dataset a line: namespace name.")
    downstream_of = _PairsField(
        required=False,
        help_text="Changes of these datasets and of everything downstream of them "
        "(one a line: namespace name).",
    )

    class Meta:
        model = WebhookSubscription
        fields = [
            "name",
            "url",
            "active",
            "kinds",
            "breaking_only",
            "namespaces",
            "datasets",
            "downstream_of",
            "downstream_depth",
        ]

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        try:
            addresses.resolve(url)
        except addresses.RefusedAddress as error:
            raise forms.ValidationError(str(error)) from error
        return url

    def clean_downstream_depth(self) -> int:
        depth = self.cleaned_data["downstream_depth"]
        if not 1 <= depth <= 20:
            raise forms.ValidationError("Between 1 and 20.")
        return depth


@admin.register(WebhookSubscription)
class WebhookSubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = ("name", "url", "active", "kinds_shown", "breaking_only", "deliveries_link")
    list_filter = ("active",)
    search_fields = ("name", "url")
    actions = ["send_test", "rotate_secret"]
    list_per_page = 50

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Receiver URLs often carry their own credentials (a token in the path): only those
        # who manage subscriptions see them, not every catalog reader.
        return bool(request.user.has_perm(SEES_SUBSCRIPTIONS))

    @admin.display(description="kinds")
    def kinds_shown(self, subscription: WebhookSubscription) -> str:
        return ", ".join(subscription.kinds) or "every kind"

    @admin.display(description="deliveries")
    def deliveries_link(self, subscription: WebhookSubscription) -> str:
        url = reverse("admin:catalog_webhookdelivery_changelist")
        return format_html('<a href="{}?subscription__id__exact={}">log</a>', url, subscription.pk)

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except IntegrityError as error:
            if (
                getattr(getattr(error.__cause__, "diag", None), "constraint_name", "")
                != NAME_UNIQUE
            ):
                raise
        # Another steward saved this name between this form's check of it and its insert,
        # which waited for theirs and failed (everything this try wrote is rolled back).
        # Checked again, the form now finds the name taken and says so, as it does when it
        # was taken before: a form error, not a 500.
        return super().changeform_view(request, object_id, form_url, extra_context)

    def response_add(
        self, request: HttpRequest, obj: Any, post_url_continue: str | None = None
    ) -> HttpResponse:
        return shown_once(
            request,
            self,
            f"Added {obj.name}",
            [(obj.name, obj.secret)],
            "Give the signing secret to the receiver's owner (Rotate the signing secret makes a "
            "new one).",
        )

    @admin.action(description="Send a test delivery", permissions=["change"])
    def send_test(self, request: HttpRequest, queryset: QuerySet) -> None:
        if (chosen := self._at_most(request, queryset, "send a test delivery to")) is None:
            return
        for subscription in chosen:
            sent = delivery.test_send(subscription)
            self.log_change(request, subscription, f"Sent test delivery {sent.id}.")
            self.message_user(request, f"Test delivery {sent.id} queued for {subscription}.")

    @admin.action(description="Rotate the signing secret (shown once)", permissions=["change"])
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        if (chosen := self._at_most(request, queryset, "rotate the secret of")) is None:
            return None
        for subscription in chosen:
            subscription.secret = new_secret()
            subscription.save(update_fields=["secret", "updated_at"])
            # The old secret stops working now: the log says who rotated it (never the secret).
            self.log_change(request, subscription, "Rotated the signing secret.")
        return shown_once(
            request,
            self,
            f"Rotated {len(chosen)} signing secret{pluralize(len(chosen))}",
            [(subscription.name, subscription.secret) for subscription in chosen],
            "The old secrets stopped working: give each new one to its receiver's owner.",
        )

    def _at_most(
        self, request: HttpRequest, queryset: QuerySet, what: str
    ) -> list[WebhookSubscription] | None:
        """The selected subscriptions, or None (and a message) when there are more than an
        action does at once: it did the first 20 and said nothing of the rest, so a steward
        rotating every secret after a leak left the others signing with the leaked ones."""
        chosen = list(queryset.order_by("pk")[: MAX_AT_ONCE + 1])
        if len(chosen) > MAX_AT_ONCE:
            self.message_user(
                request,
                f"Select at most {MAX_AT_ONCE} subscriptions to {what} at once "
                "(each secret is shown once, on one page): nothing was done.",
                messages.ERROR,
            )
            return None
        return chosen


class StatusFilter(ChoicesFilter):
    title = "status"
    parameter_name = "status"
    column = "status"
    options = list(DeliveryStatus.choices)


class KindFilter(PresentValuesFilter):
    title = "kind"
    column = "kind"  # catalog_webhook_kind_idx (kind, created_at, id)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(BoundedAdmin):
    list_display = (
        "id",
        "subscription",
        "kind",
        "status",
        "attempts",
        "last_status_code",
        "created_at",
        "delivered_at",
        "next_attempt_at",
    )
    list_select_related = ("subscription",)
    # Each a range of an index in the list's order (catalog_webhook_status_idx,
    # catalog_webhook_log_idx, catalog_webhook_kind_idx); the kinds offered are those
    # present, one probe a kind (Django's field filter read every delivery a visit).
    list_filter = (StatusFilter, "subscription", KindFilter)
    # Newest first by the time each was written: an id is a random UUID (uuid4), so "-id"
    # (ADR 0193) listed them in no order of time. catalog_webhook_time_idx serves the whole
    # log, catalog_webhook_log_idx one subscription's (ADR 0195).
    ordering = ("-created_at", "-id")
    sortable_by = ("created_at",)
    search_fields = ("=id",)
    actions = ["replay"]
    fields = (
        "id",
        "subscription",
        "kind",
        "status",
        "attempts",
        "created_at",
        "last_attempt_at",
        "next_attempt_at",
        "delivered_at",
        "last_status_code",
        "last_error",
        "answer",
        "sent",
    )
    readonly_fields = fields
    # The receiver's answer and the reason kept with it are the receiver's text, which may
    # echo the URL it was sent to (a 404 page, a login redirect's Location), and receiver
    # URLs often carry credentials: only those who may see subscriptions read them.
    field_permissions: ClassVar[dict[str, tuple[str, ...]]] = {
        "answer": (SEES_SUBSCRIPTIONS,),
        "last_error": (SEES_SUBSCRIPTIONS,),
    }

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet, search_term: str
    ) -> tuple[QuerySet, bool]:
        try:
            return super().get_search_results(request, queryset, search_term)
        except Exception:  # not a UUID: nothing matches (never a 500)
            return queryset.none(), False

    @admin.display(description="what was sent")
    def sent(self, obj: WebhookDelivery) -> str:
        return pretty_json(obj.payload)

    @admin.display(description="answer (start of its body)")
    def answer(self, obj: WebhookDelivery) -> str:
        return format_html("<pre>{}</pre>", obj.response_excerpt)

    def has_replay_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("catalog.change_webhookdelivery"))

    @admin.action(description="Replay (send again, same delivery id)", permissions=["replay"])
    def replay(self, request: HttpRequest, queryset: QuerySet) -> None:
        chosen = list(queryset[: MAX_REPLAY + 1])
        left = chosen[MAX_REPLAY:]
        chosen = chosen[:MAX_REPLAY]
        count = delivery.replay([str(sent.pk) for sent in chosen])
        for sent in chosen:  # sent again to a receiver: the admin log says who asked
            self.log_change(request, sent, "Replayed (same delivery id).")
        self.message_user(request, f"{count} deliveries queued again (same ids).")
        if left:  # said, not dropped in silence: a replayed one is pending, so the same
            # filter (status: dead) lists the rest for the next replay
            self.message_user(
                request,
                f"Only the first {MAX_REPLAY} selected were replayed: replay the rest again.",
                messages.WARNING,
            )
