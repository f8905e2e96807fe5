"""JSON Pointer reference tokens (RFC 6901): how a key is written in a problem's path.

Every path an ingest answer gives (``errors[].path``, ``warnings[].path``) is a JSON Pointer
into the body (docs/problems.md); a key holding "/" or "~" written as it is points
elsewhere ("a/b" read back as two keys), so each key is escaped, and read back unescaped.
"""


def token(key: str) -> str:
    """``key`` as one reference token of a pointer."""
    return key.replace("~", "~0").replace("/", "~1")


def key(reference_token: str) -> str:
    """The key a reference token names (``token``'s inverse)."""
    return reference_token.replace("~1", "/").replace("~0", "~")
