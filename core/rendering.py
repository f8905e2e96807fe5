"""The JSON renderer of every API answer: DRF's JSONRenderer's output, encoded by orjson.

Why: encoding is a large share of a read's CPU once the data is fetched. A lineage graph of
500 nodes took DRF's renderer 8 ms (a Python call per datetime), orjson under 1 ms; every
list page pays the same per-value cost on a smaller scale.

The bytes are DRF's (compact, UTF-8, U+2028/U+2029 escaped, UTC datetimes ending in "Z",
non-string keys as strings, what orjson cannot encode handed to DRF's own encoder) with
one difference: a float in exponent form is written the shortest way (1e-7, where Python
writes 1e-07), the same number to every JSON reader. Anything orjson refuses (an integer
beyond 64 bits, nesting deeper than 254, a time with a zone) is rendered by DRF's
renderer as before, and so is an indented answer (``Accept: application/json; indent=2``).
``tests/core/test_rendering.py`` holds the two to the same bytes.
"""

from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS


class RawJSON:
    """A value already written as JSON text (by PostgreSQL: the lineage graph's nodes and
    edges, ADR 0109), put in an answer as it is: orjson writes its text without parsing it.
    The caller vouches that it is what orjson would write for the value (the same escapes,
    compact); U+2028/U+2029 are escaped over the whole answer below, as for the rest."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Encoder(JSONEncoder):
    """DRF's encoder, for the answers orjson does not write (indented ones): a ``RawJSON``
    is parsed back to the value, and DRF writes that as it would have."""

    def default(self, obj: Any) -> Any:
        if isinstance(obj, RawJSON):
            return orjson.loads(obj.text)
        return super().default(obj)


_drf_default = _Encoder().default


def _default(obj: Any) -> Any:
    if isinstance(obj, RawJSON):
        return orjson.Fragment(obj.text)
    return _drf_default(obj)


class JSONRenderer(renderers.JSONRenderer):
    encoder_class = _Encoder

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        if self.get_indent(accepted_media_type or "", renderer_context or {}) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        return compact(data)


_drf = JSONRenderer()


def compact(data: Any) -> bytes:
    """What ``JSONRenderer().render(data)`` writes for a value (no indent asked; ``None`` is
    ``null`` here), without the renderer's per-call set-up: the Marquez graph renders each
    of its nodes on its own (~3,000 at the 1M store) for its byte budget (ADR 0129)."""
    try:
        rendered = orjson.dumps(data, default=_default, option=_OPTIONS)
    except (orjson.JSONEncodeError, TypeError, ValueError):
        return renderers.JSONRenderer.render(_drf, data)
    # As DRF does: these two are valid JSON but end a line in JavaScript source.
    if b"\xe2\x80\xa8" in rendered or b"\xe2\x80\xa9" in rendered:
        rendered = rendered.replace(b"\xe2\x80\xa8", b"\\u2028")
        rendered = rendered.replace(b"\xe2\x80\xa9", b"\\u2029")
    return rendered
