"""Turn an HTTP request body into Python objects, within the configured limits.

Order matters for safety: the declared size is checked before reading, gzip is inflated
in bounded steps (a bomb is refused at the limit, never inflated into memory), and the
JSON nesting depth is checked before anything walks the document recursively.
"""

import json
import re
import zlib
from collections.abc import Mapping
from typing import Any

import orjson
from django.conf import settings
from django.http import HttpRequest

from core.problems import FieldError, Problem

JSON_TYPES = {"application/json", "text/json"}
NDJSON_TYPES = {"application/x-ndjson", "application/ndjson", "application/jsonlines"}
_INFLATE_STEP = 256 * 1024
# Compressed bytes handed to zlib at a time: small, since what is left of a piece after a
# member ends is copied, once per member.
_GZIP_PIECE = 16 * 1024
# A body may be a series of gzip members (``inflate``): a few when files are concatenated,
# 1,024 when BGZF's 64 KiB blocks fill the default 64 MiB inflated limit. Bounded, since
# each costs a pass in Python: 16 MB of empty members are 800,000 of them.
_MAX_GZIP_MEMBERS = 4096
_NOT_ZERO = re.compile(rb"[^\x00]")


def limits() -> Mapping[str, Any]:
    return settings.LINEAGE


def too_large(detail: str) -> Problem:
    return Problem(status=413, slug="payload-too-large", title="Payload too large", detail=detail)


def media_type(request: HttpRequest) -> str:
    return request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()


def require_media_type(request: HttpRequest, accepted: set[str]) -> str:
    kind = media_type(request)
    if kind not in accepted:
        raise Problem(
            status=415,
            slug="unsupported-media-type",
            title="Unsupported media type",
            detail=f"Content-Type {kind or '(none)'!r} is not accepted here; use one of "
            + ", ".join(sorted(accepted))
            + ".",
        )
    return kind


def read_body(request: HttpRequest) -> bytes:
    """The request body, inflated when ``Content-Encoding: gzip``, with both size limits."""
    max_request = limits()["MAX_REQUEST_BYTES"]
    declared = _declared_length(request)
    if declared > max_request:
        raise too_large(f"The request body is {declared} bytes; the limit is {max_request}.")
    body = _chunked_body(request, max_request) if not declared else None
    if body is None:
        body = request.body
    if len(body) > max_request:
        raise too_large(f"The request body is {len(body)} bytes; the limit is {max_request}.")
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding in {"", "identity"}:
        return _few_enough_values(body)
    if encoding in {"gzip", "x-gzip"}:
        return _few_enough_values(inflate(body, limits()["MAX_DECOMPRESSED_BYTES"]))
    raise Problem(
        status=415,
        slug="unsupported-content-encoding",
        title="Unsupported content encoding",
        detail=f"Content-Encoding {encoding!r} is not supported; send gzip or no encoding.",
    )


def _few_enough_values(body: bytes) -> bytes:
    """``body``, refused (413) before it is parsed when it may hold more JSON values than
    ``MAX_JSON_VALUES`` (ADR 0166).

    The count is an upper bound read in C: every value but the first follows a comma or
    opens an object or array (commas inside strings count too, so text rich in commas is
    counted high, never low). A body shorter than the limit cannot hold more values than
    bytes, so an ordinary event is not counted at all.
    """
    limit = limits()["MAX_JSON_VALUES"]
    if len(body) <= limit:
        return body
    values = body.count(b",") + body.count(b"{") + body.count(b"[") + 1
    if values > limit:
        raise too_large(
            f"The body may hold {values} JSON values; the limit is {limit}"
            " (LINEAGE_MAX_JSON_VALUES). Send it in smaller requests."
        )
    return body


def _declared_length(request: HttpRequest) -> int:
    """The body's ``Content-Length``, 0 when none was sent.

    A value that is not a non-negative integer is refused here: Django's ``request.body``
    parses it again without a guard, so ``Content-Length: abc`` reached the view as a 500.
    granian refuses such a header before the application; another WSGI server may not.
    """
    raw = request.META.get("CONTENT_LENGTH") or "0"
    if not (isinstance(raw, str) and raw.isascii() and raw.isdigit()):
        raise Problem(
            status=400,
            slug="invalid-content-length",
            title="Invalid Content-Length",
            detail=f"Content-Length {raw[:40]!r} is not a number of bytes.",
        )
    return int(raw)


def _chunked_body(request: Any, max_request: int) -> bytes | None:
    """A body sent without Content-Length (``Transfer-Encoding: chunked``), read up to the
    limit; None when there is none to read.

    Django reads only Content-Length bytes, so a chunked event was "empty" and lost. A
    server that de-chunks and marks the end of the input (``wsgi.input_terminated``, set
    by granian and gunicorn) can be read to its end; without that mark a read could block, so the
    body is left to Django.
    """
    django_request = getattr(request, "_request", request)  # DRF wraps the HttpRequest
    environ = getattr(django_request, "environ", None) or {}
    if not environ.get("wsgi.input_terminated") or getattr(django_request, "_read_started", True):
        return None
    stream = environ["wsgi.input"]
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = stream.read(min(_INFLATE_STEP, max_request + 1 - total))
        if not chunk:
            break
        total += len(chunk)
        if total > max_request:
            raise too_large(f"The request body is over the limit of {max_request} bytes.")
        chunks.append(chunk)
    body = b"".join(chunks)
    django_request._body = body  # what ``request.body`` answers from now on
    django_request._read_started = True
    return body


def inflate(data: bytes, max_bytes: int) -> bytes:
    """Inflate gzip data, refusing (413) as soon as the output would pass ``max_bytes``.

    Every member is inflated, the limit counted over all of them: a gzip body may be a
    series of members (RFC 1952; what ``cat a.gz b.gz`` makes and ``gzip.open`` reads for
    backfill), and reading only the first answered an NDJSON batch "success" without its
    later members' events. Bytes after a member that do not start another are corrupt
    (400), as ``gzip.open`` finds them; zero bytes after a member are padding, skipped as
    it skips them.
    """
    chunks: list[bytes] = []
    total = 0
    members = 0
    position = 0
    view = memoryview(data)
    try:
        while True:  # one member a pass
            members += 1
            if members > _MAX_GZIP_MEMBERS:
                raise too_large(f"The body holds more than {_MAX_GZIP_MEMBERS} gzip members.")
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            while not inflater.eof:
                piece: bytes | memoryview = inflater.unconsumed_tail
                if not piece:
                    # Fed in pieces: what follows a member comes back as a copy
                    # (``unused_data``), which must not be the whole rest of the body.
                    piece = view[position : position + _GZIP_PIECE]
                    position += len(piece)
                # With no input left, one more call takes what zlib still holds.
                chunk = inflater.decompress(piece, _INFLATE_STEP)
                if not piece and not chunk and not inflater.eof:
                    raise zlib.error("truncated gzip stream")
                total += len(chunk)
                if total > max_bytes:
                    raise too_large(f"The body inflates past the limit of {max_bytes} bytes.")
                chunks.append(chunk)
            position -= len(inflater.unused_data)  # the next member's start, read again
            after_padding = _NOT_ZERO.search(data, position)
            if after_padding is None:
                break
            position = after_padding.start()
    except zlib.error as error:
        raise Problem(
            status=400,
            slug="invalid-gzip",
            title="The body is not valid gzip",
            detail=str(error),
        ) from error
    return b"".join(chunks)


class DuplicateKeyError(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(f"duplicate key {key[:100]!r}")
            seen.add(key)
    return document


# Builds the document: refuses duplicate keys (which parsers resolve differently, so the
# event we stored would not be the event that was sent) and keeps integers exact at any size.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_object)


def parse_json(data: bytes, path: str = "") -> Any:
    """Parse one JSON document strictly.

    orjson checks validity first (UTF-8, no lone surrogates, no NaN/Infinity, no numbers
    beyond float range) and builds the document. It resolves duplicate keys silently and
    turns integers beyond 64 bits into floats, so its document is taken only when it is
    provably the one sent (``_exact``); otherwise the stdlib decoder builds it again,
    refusing duplicate keys and keeping big integers exact.
    """
    if not data.strip():
        raise Problem(status=400, slug="invalid-json", title="The body is empty")
    try:
        # orjson's document is walked (iteratively) for depth *before* the stdlib decoder,
        # which recurses: 990-1024 levels passed orjson and then hit the recursion limit.
        max_depth = limits()["MAX_JSON_DEPTH"]
        checked = _orjson_document(data, max_depth, path)
        if _may_nest_past(data, max_depth) and not _shallow(checked, max_depth):
            check_depth(checked, max_depth, path)
        if _exact(checked, data):
            return checked
        document = _DECODER.decode(data.decode())
    except (orjson.JSONDecodeError, ValueError) as error:
        raise Problem(
            status=400,
            slug="invalid-json",
            title="The body is not valid JSON",
            detail=str(error),
            errors=[FieldError(path or "/", str(error))],
        ) from error
    except RecursionError as error:  # only if MAX_JSON_DEPTH is set near the stack's limit
        raise too_deep(limits()["MAX_JSON_DEPTH"], path) from error
    return document


# What orjson says of a document nested past its own limit (1,024 levels), before it reads
# whether the rest is JSON at all.
_ORJSON_DEPTH_ERROR = "depth limit exceeded"


def _orjson_document(data: bytes, max_depth: int, path: str) -> Any:
    """orjson's document of ``data``; a body nested past orjson's own limit is ``too-deep``.

    Why: orjson stops at 1,024 levels with its own error, which was answered as
    ``invalid-json`` although such a body is nested deeper than ``max_depth`` (64) and the
    stable type for that is ``too-deep`` (docs/problems.md): 65 levels were ``too-deep``,
    1,025 "not JSON". Whatever follows the 1,024th level, it is nested too deep already.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as error:
        if str(error).startswith(_ORJSON_DEPTH_ERROR) and max_depth < 1024:
            raise too_deep(max_depth, path) from error
        raise


# Where the bracket count below looks first: a body that holds more brackets than the depth
# limit there (a batch, in its first event or two) needs no count of the rest.
_COUNTED_PREFIX = 16 * 1024


def _may_nest_past(data: bytes, max_depth: int) -> bool:
    """Whether ``data`` holds more than ``max_depth`` "{" and "[" bytes, so that it might
    nest deeper than that.

    Every container opens with one of them, so a body with no more than the limit cannot
    nest past it: counted in C, this spares the depth check for small events (brackets
    inside strings only raise the count). A large body is counted in its first
    ``_COUNTED_PREFIX`` bytes first: two passes over every byte of a 500-event batch
    were 5.9% of its instructions and decided nothing (ADR 0145).
    """
    head = data.count(b"{", 0, _COUNTED_PREFIX) + data.count(b"[", 0, _COUNTED_PREFIX)
    if head > max_depth or len(data) <= _COUNTED_PREFIX:
        return head > max_depth
    rest = data.count(b"{", _COUNTED_PREFIX) + data.count(b"[", _COUNTED_PREFIX)
    return head + rest > max_depth


def _exact(document: Any, data: bytes) -> bool:
    """Whether orjson's ``document`` is exactly what the stdlib decoder would build.

    When orjson writes the document back, compact, byte for byte as it came (what the
    Java and Spark clients send), nothing was lost: a duplicate key orjson dropped would
    be missing from the output, an integer beyond 64 bits would come out as a float, and
    every other value reads back as it was written. In C (a few microseconds per event),
    this spares the stdlib decoder and its per-object hook, the larger part of parsing a
    batch (issue 42; docs/benchmarks.md). Anything else (spaces, escapes such as \\u00e9,
    numbers written otherwise) takes the stdlib decoder, as before.
    """
    try:
        return orjson.dumps(document) == data.strip()
    except orjson.JSONEncodeError:
        return False


def _shallow(document: Any, max_depth: int) -> bool:
    """Whether ``document`` surely nests no deeper than ``max_depth``, seen in C.

    orjson's indented output puts every member of a container at depth d (the document
    is depth 1) on a line indented 2d spaces, and raw newlines occur nowhere else (strings
    escape them): without a line indented 2 x ``max_depth`` spaces nothing sits deeper
    than ``max_depth``. False sends the document to the exact walk (``check_depth``),
    which also tells a scalar at that depth (allowed) from a container (refused).
    """
    try:
        indented = orjson.dumps(document, option=orjson.OPT_INDENT_2)
    except orjson.JSONEncodeError:  # orjson writes at most 255 levels: the walk decides
        return False
    return b"\n" + b" " * (2 * max_depth) not in indented


# What bytes.strip() strips: a line of only these is blank (as in ingest.json_stream).
_NONBLANK = re.compile(rb"[^ \t\n\r\x0b\x0c]")
# Where a line ends, as bytes.splitlines ends it: "\n", "\r" or "\r\n".
_LINE_BREAK = re.compile(rb"[\r\n]")


def _breaks(data: bytes, start: int, end: int) -> int:
    """The line breaks in ``data[start:end]``, "\r\n" counted once (as splitlines does)."""
    return (
        data.count(b"\n", start, end)
        + data.count(b"\r", start, end)
        - data.count(b"\r\n", start, end)
    )


def parse_ndjson(data: bytes, max_documents: int) -> tuple[list[Any], list[int]]:
    """One JSON document per non-empty line, and each one's line number (from 0): what the
    batch's answer calls it, as a line that does not parse is called (docs/problems.md).
    Blank lines are skipped, not counted out: with one before it, an event refused for its
    content was reported one line before the one that held it.

    More than ``max_documents`` lines is refused (413) before the next line is parsed, and
    blank runs are passed over by C-level searches: ``splitlines`` made an object per line
    first, so 64 KB of gzipped newlines (64 MiB inflated) took 512 MiB and a 64 MiB body
    of short lines 1.2 GiB, and each line was parsed before the count was checked.
    """
    documents: list[Any] = []
    numbers: list[int] = []
    position = number = 0  # ``position`` starts line ``number``
    while (found := _NONBLANK.search(data, position)) is not None:
        start = found.start()
        number += _breaks(data, position, start)
        # The line's start: after the last break before its first non-blank byte, if any.
        start = 1 + max(
            position - 1, data.rfind(b"\n", position, start), data.rfind(b"\r", position, start)
        )
        ended = _LINE_BREAK.search(data, start)
        end = ended.start() if ended is not None else len(data)
        if len(documents) == max_documents:
            raise too_large(f"At most {max_documents} events per batch.")
        documents.append(parse_json(data[start:end], f"/{number}"))
        numbers.append(number)
        position = end + (2 if data[end : end + 2] == b"\r\n" else 1)
        number += 1
    return documents, numbers


def check_depth(document: Any, max_depth: int, path: str = "") -> None:
    """Refuse documents nested deeper than ``max_depth`` containers (iterative, no recursion)."""
    stack: list[tuple[Any, int]] = [(document, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > max_depth:
            raise too_deep(max_depth, path)
        for child in children:
            if isinstance(child, dict | list):
                stack.append((child, depth + 1))


def too_deep(max_depth: int, path: str = "") -> Problem:
    return Problem(
        status=400,
        slug="too-deep",
        title="The JSON document is nested too deeply",
        detail=f"Nesting deeper than {max_depth} levels is refused.",
        errors=[FieldError(path or "/", f"nesting exceeds {max_depth} levels")],
    )
