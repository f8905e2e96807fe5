"""The admin log of curations: who changed what, and when (Django's ``LogEntry``)."""

import json
from typing import Any

from django.contrib.admin.models import CHANGE, LogEntry


def log_curation(user: Any, obj: Any, message: str, **details: Any) -> LogEntry:
    """Record a curation in the admin log (Django's LogEntry: user, time, object, message)."""
    return LogEntry.objects.log_actions(
        user_id=user.pk,
        queryset=[obj],
        action_flag=CHANGE,
        change_message=json.dumps([{"curation": {"message": message, **details}}]),
        single_object=True,
    )
