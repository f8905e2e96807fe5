"""What every row a steward makes carries: who made it, when, and that rederive keeps it."""

from django.conf import settings
from django.db import models
from django.db.models.functions import Now


class StewardInput(models.Model):
    """Base of the steward's own rows (alias rules, title pins): not derived from events,
    so ``manage.py rederive`` keeps them (``catalog.services.derived_tables``)."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(db_default=Now(), editable=False)
    kept_by_rederive = True

    class Meta:
        abstract = True
