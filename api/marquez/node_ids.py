"""Marquez's node ids (``dataset:<ns>:<name>``, ``job:…``, ``datasetField:…:<field>``)."""

import re
from dataclasses import dataclass

from api.marquez.errors import MarquezError

# Marquez's node ids: split on ":" except where ":" starts "//" or a digit (a scheme or a
# port), so "dataset:postgres://db:5432:public.orders" is (dataset, postgres://db:5432,
# public.orders). A "#<version>" suffix names a version; this catalog answers the current one.
_ID_SPLIT = re.compile(r":(?!//|\d)")
_VERSION = re.compile(r"#[0-9a-fA-F-]{36}$")
_PARTS = {"dataset": 3, "job": 3, "datasetField": 4}


@dataclass(frozen=True)
class NodeId:
    kind: str  # dataset, job or datasetField
    namespace: str
    name: str
    field: str = ""


def parse_node_id(value: str) -> NodeId:
    text = _VERSION.sub("", value.strip())
    kind = text.split(":", 1)[0]
    expected = _PARTS.get(kind)
    if expected is None:
        raise MarquezError(
            400, f"nodeId must start with dataset:, job: or datasetField: (got {value!r})."
        )
    parts = text.split(":")
    if len(parts) != expected:
        parts = _ID_SPLIT.split(text)
    if len(parts) < expected or not all(parts[1:]):
        raise MarquezError(400, f"nodeId {value!r} is not {kind}:<namespace>:<name>.")
    if len(parts) > expected:
        # A name holding ":" that the split could not tell apart: it belongs to the name.
        if kind == "datasetField":
            parts = [parts[0], parts[1], ":".join(parts[2:-1]), parts[-1]]
        else:
            parts = [parts[0], parts[1], ":".join(parts[2:])]
    return NodeId(kind, parts[1], parts[2], parts[3] if kind == "datasetField" else "")


def node_id(kind: str, namespace: str, name: str, field: str | None = None) -> str:
    text = f"{kind}:{namespace}:{name}"
    return f"{text}:{field}" if field is not None else text
