"""Template tags of the steward admin (the dashboard on the admin index)."""

from typing import Any

from django import template

from catalog.admin.dashboard import Dashboard, dashboard_for

register = template.Library()


@register.simple_tag
def lineage_dashboard(user: Any) -> Dashboard | None:
    """The (cached, bounded) dashboard figures for a user who may read them, None for
    another (catalog/admin/dashboard.py: dashboard_for)."""
    return dashboard_for(user)
