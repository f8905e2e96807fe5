"""``schema`` (dataset): the dataset's fields, nested fields flattened with dotted names, in
the order of their ``ordinal_position`` where the producer sent one (facet 1-2-0)."""

from typing import Any

from catalog.facets.base import DATASET, Facet, opened
from catalog.names.naming import producer_text

NAME = "schema"
FACET = Facet(
    NAME,
    appears=(DATASET,),
    schemas=("SchemaDatasetFacet",),
    extracts="merged into the dataset's facets by version (inputs, outputs, DatasetEvents)",
    projects="DatasetField rows (name, type, description; nested fields as a.b), in "
    "`ordinal_position` order where sent, replaced whole when the merged facet changes",
    native="dataset detail `fields`, and in `facets`",
    marquez="dataset `fields`; a dataset version's `fields` from that run's own facet",
)


def flattened(facets: Any) -> list[tuple[str, str, str]]:
    """(name, type, description) of every field, nested ones after their parent as
    ``parent.child``; producer text, stored redacted (ADR 0056)."""
    return _flatten(opened(facets, NAME).get("fields"))


def ordered(fields: Any) -> list[Any]:
    """The fields of one level in their ``ordinal_position`` order (1-indexed), those
    without one after them in the order sent (a stable sort); not a list: none."""
    if not isinstance(fields, list):
        return []
    return sorted(fields, key=_position)


def _position(field: Any) -> tuple[int, int | float]:
    position = field.get("ordinal_position") if isinstance(field, dict) else None
    if isinstance(position, int | float) and not isinstance(position, bool):
        return (0, position)
    return (1, 0)


def _flatten(fields: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    result: list[tuple[str, str, str]] = []
    for field in ordered(fields):
        if not isinstance(field, dict) or not isinstance(field.get("name"), str):
            continue
        name = prefix + producer_text(field["name"])
        type_, description = field.get("type") or "", field.get("description") or ""
        result.append((name, producer_text(type_), producer_text(description)))
        result.extend(_flatten(field.get("fields"), name + "."))
    return result


def field_tags(facets: Any) -> list[tuple[str, Any]]:
    """(field name as ``flattened`` spells it, the field's own ``tags`` as sent) of every
    field that has tags (not in the spec's schema facet; dbt-style producers send them)."""
    return _field_tags(opened(facets, NAME).get("fields"))


def _field_tags(fields: Any, prefix: str = "") -> list[tuple[str, Any]]:
    result: list[tuple[str, Any]] = []
    for field in ordered(fields):
        if not isinstance(field, dict) or not isinstance(field.get("name"), str):
            continue
        name = prefix + producer_text(field["name"])
        if field.get("tags"):
            result.append((name, field["tags"]))
        result.extend(_field_tags(field.get("fields"), name + "."))
    return result


def marquez_fields(facets: Any, tags: dict[str, list[str]] | None = None) -> list[dict[str, Any]]:
    """The facet's top-level fields as Marquez lists them (facets already redacted), with
    each field's tag names from ``tags`` (field name → names)."""
    answer = []
    for item in ordered(opened(facets, NAME).get("fields")):
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            answer.append(
                {
                    "name": item["name"],
                    "type": item.get("type") if isinstance(item.get("type"), str) else None,
                    "tags": (tags or {}).get(item["name"], []),
                    "description": item.get("description")
                    if isinstance(item.get("description"), str)
                    else None,
                }
            )
    return answer
