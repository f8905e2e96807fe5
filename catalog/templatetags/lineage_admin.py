"""Template tags of the steward admin (the dashboard on the admin index)."""

from django import template

from catalog.admin.dashboard import Dashboard, get_dashboard

register = template.Library()


@register.simple_tag
def lineage_dashboard() -> Dashboard:
    """The (cached, bounded) dashboard figures; see catalog/admin/dashboard.py."""
    return get_dashboard()
