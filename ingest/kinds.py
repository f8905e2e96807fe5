"""What an event in the raw log is: an OpenLineage run, dataset or job event, an edge the
edge API adapted, or a metadata record. A module of its own so that the models and their
querysets both read it without importing each other."""

from django.db import models


class EventKind(models.TextChoices):
    RUN = "run", "RunEvent"
    DATASET = "dataset", "DatasetEvent"
    JOB = "job", "JobEvent"
    EDGE = "edge", "Lineage edge"
    METADATA = "metadata", "Metadata record"


# The kinds that are OpenLineage events as sent (the others are adapted edges and records).
OPENLINEAGE_KINDS = (EventKind.RUN, EventKind.DATASET, EventKind.JOB)
