"""Field helpers for the catalog's models."""

from typing import Any

from django.db import models


def covered_fk(to: Any, **options: Any) -> models.ForeignKey:
    """A foreign key without its own index: a unique constraint or an index that starts
    with the column already serves it, and each index costs every write (ADR 0025)."""
    return models.ForeignKey(to, db_index=False, **options)
