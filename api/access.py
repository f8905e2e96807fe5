"""The Django view permissions a session needs on each read endpoint (issue 27, item 10).

Tokens with the read scope read everything; a staff session reads an endpoint only when
its user holds the view permission of every kind of object the answer shows (the steward
and reader groups of catalog/permissions.py hold them all). Views name theirs in
``read_permissions`` (``detail_read_permissions`` for a viewset's detail, which shows more);
ingest.authentication.HasReadScope checks them.
"""

# Who reads what is retired (ADR 0078): one rule, shared with the admin.
from catalog.permissions import sees_retired as sees_retired

JOB = "catalog.view_job"
RUN = "catalog.view_run"
DATASET = "catalog.view_dataset"
EDGE = "catalog.view_lineageedge"
COLUMN_EDGE = "catalog.view_columnlineageedge"
METADATA = "catalog.view_metadatarecord"
# Issue 40 (ADR 0082): the change records of datasets.
CHANGE = "catalog.view_datasetchange"
EVENT = "ingest.view_event"
# Issue 26 (ADR 0061): jobs' JobEvent declarations (static lineage: declared inputs and
# outputs, declared column edges) and what runs reported about datasets (run facts).
STATIC = "catalog.view_staticdataset"
STATIC_COLUMN = "catalog.view_staticcolumnlineage"
RUN_FACT = "catalog.view_rundatasetfacet"
