"""Template tags of the steward admin (the dashboard on the admin index)."""

from typing import Any

from django import template

from catalog.admin.dashboard import Dashboard, get_dashboard
from catalog.reads import stats

register = template.Library()


@register.simple_tag
def lineage_dashboard(user: Any) -> Dashboard | None:
    """The (cached, bounded) dashboard figures (catalog/admin/dashboard.py) for a user who
    may read them, None for another: they show the event log (failed events, producers,
    every table's size), so the rule of /api/v1/stats and the front page decides, not
    merely reaching the admin (a staff user given single permissions sees only those)."""
    return get_dashboard() if stats.may_read(user) else None
