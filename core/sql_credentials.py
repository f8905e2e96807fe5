"""SQL credentials in text, for ``core.redaction`` (its rule for SQL, see its docstring):
the string literal after a secret key (``ALTER ROLE r PASSWORD 'x'``, ``password $$x$$``)
and whatever follows ``IDENTIFIED [WITH plugin] BY|AS``, whatever the quoting.

Kept apart from the rest of redaction for its size; what is a secret key and what replaces
a value stay ``core.redaction``'s, passed in.
"""

import heapq
import re
from collections.abc import Iterable, Iterator

# The longest key name (``spark.hadoop.fs.s3a.bucket.x.secret.key``) redaction looks at.
MAX_KEY = 200

# Every quantifier is bounded (but QUOTED_BODY's), so an attempt at a position reads a
# bounded number of characters (tests/security/test_redaction.py checks the patterns of this
# module and core.redaction on the regex parser's tree).
_BLANKS = r"[ \t\r\n]"
# ``IDENTIFIED [WITH plugin] BY|AS [PASSWORD|VALUES]`` and the blanks before the value,
# with the ``CREATE|ALTER USER name`` before it when there is one: only then is a bare
# word a password (Oracle's ``ALTER USER u IDENTIFIED BY x``; prose says "rows identified
# by their id").
_USER_NAME = r"(?:\"[^\"\r\n]{1,128}\"|'[^'\r\n]{1,128}'(?:@'[^'\r\n]{0,255}')?|[\w$.@%\-]{1,128})"
_IDENTIFIED = re.compile(
    rf"(?:(?P<user>(?<![\w$])(?:create|alter){_BLANKS}{{1,16}}user"
    rf"(?:{_BLANKS}{{1,16}}if{_BLANKS}{{1,16}}(?:not{_BLANKS}{{1,16}})?exists)?"
    rf"{_BLANKS}{{1,16}}{_USER_NAME}{_BLANKS}{{1,16}}))?"
    rf"(?<![\w$])identified(?:{_BLANKS}{{1,16}}with{_BLANKS}{{1,16}}[\w$.'\"`]{{1,64}})?"
    rf"{_BLANKS}{{1,16}}(?:by|as)(?:{_BLANKS}{{1,16}}(?:password|values))?{_BLANKS}{{1,16}}"
    rf"(?=[^\s;,)])",
    re.IGNORECASE,
)
# The word alone: a C-speed test that spares most text the scan above.
IDENTIFIED_WORD = re.compile("identified", re.IGNORECASE)
# Oracle's ``IDENTIFIED BY new REPLACE old``: the old password follows.
_REPLACE = re.compile(rf"{_BLANKS}{{1,16}}replace{_BLANKS}{{1,16}}(?=[^\s;,)])", re.IGNORECASE)
# The rest of a key's word once a secret key is found in it (``db_password``), then what
# may stand between the key and a string literal: blanks, ``=``, ``(`` (``PASSWORD('x')``),
# then the literal's opening (its ``E``/``N`` prefix, a quote or ``$``).
_KEY_TAIL = re.compile(rf"[\w.\-]{{0,{MAX_KEY}}}")
_BEFORE_LITERAL = re.compile(
    rf"(?:{_BLANKS}{{1,16}}(?:={_BLANKS}{{0,16}})?|={_BLANKS}{{0,16}}|(?=\())"
    rf"(?:\({_BLANKS}{{0,16}})?(?:[EeNn](?='))?(?=['\"$])"
)
# A quoted literal's body: anything but its quote and backslash, a quote doubled, or a
# backslash escape. The one unbounded repeat of the module, and possessive: each turn
# starts with a different character, and nothing is ever given back, so it is linear.
QUOTED_BODY = {
    quote: re.compile(rf"(?:[^{quote}\\]++|{quote}{quote}|\\[\s\S])*+") for quote in "'\""
}
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]{0,62})?\$")
# Where a bare ``IDENTIFIED BY`` value ends; and the bare words that are not a password.
_BARE_END = re.compile(r"[\s;,)]")
_NOT_A_PASSWORD = {"random"}  # MySQL's IDENTIFIED BY RANDOM PASSWORD


def sql_spans(
    text: str, keywords: re.Pattern[str] | None, identified: bool, marker: str
) -> Iterator[tuple[int, int, str]]:
    """The values of SQL credentials in ``text``: string literals after a secret key, and
    what follows ``IDENTIFIED ... BY``, each as ``(start, end, marker)``; a value that is
    the marker already is left.

    Linear: the anchors (key matches, ``IDENTIFIED`` matches) are found by scans whose every
    attempt is bounded, and an anchor inside text already spoken for (a key's own word, a
    literal just redacted) is skipped at once, so each character is read by at most one
    literal's ``find``.
    """
    anchors = [_IDENTIFIED.finditer(text)] if identified else []
    if keywords is not None:
        anchors.append(keywords.finditer(text))
    done = 0  # text[:done] is spoken for
    for match in heapq.merge(*anchors, key=lambda found: found.start()):
        if done == len(text):
            break
        if match.start() < done:
            continue
        if match.re is _IDENTIFIED:
            done = match.end()
            literals: Iterable[tuple[int, int, int]] = _identified_values(text, match)
        else:
            key_end = _KEY_TAIL.match(text, match.end())
            done = key_end.end() if key_end else match.end()  # the rest of the key's word
            before = _BEFORE_LITERAL.match(text, done)
            literal = None if before is None else _literal(text, before.end())
            literals = () if literal is None else (literal,)
        for value_start, value_end, literal_end in literals:
            done = literal_end
            if value_end > value_start and text[value_start:value_end] != marker:
                yield value_start, value_end, marker


def _identified_values(text: str, match: re.Match[str]) -> Iterator[tuple[int, int, int]]:
    """The value after ``IDENTIFIED ... BY`` (and an Oracle ``REPLACE old``), each as
    ``(value start, value end, where it ends)``."""
    start = match.end()
    while True:
        literal = _literal(text, start)
        if literal is None:
            if not match["user"]:  # a bare word is a password only in a USER statement
                return
            found = _BARE_END.search(text, start)
            end = len(text) if found is None else found.start()
            if text[start:end].lower() in _NOT_A_PASSWORD:
                return
            literal = start, end, end
        yield literal
        replace = _REPLACE.match(text, literal[2])
        if replace is None:
            return
        start = replace.end()


def _literal(text: str, start: int) -> tuple[int, int, int] | None:
    """``(value start, value end, literal end)`` of the SQL string literal at ``start``
    (``'x'``, ``"x"``, ``E'x'``, ``N'x'``, ``$$x$$``, ``$tag$x$tag$``); ``None`` if there is
    none. An unterminated literal runs to the end of the text."""
    if start < len(text) - 1 and text[start] in "EeNn" and text[start + 1] == "'":
        start += 1
    if start >= len(text):
        return None
    quote = text[start]
    if quote == "$":
        tag = _DOLLAR_TAG.match(text, start)
        if tag is None:
            return None
        closing = text.find(tag[0], tag.end())
        if closing < 0:
            return tag.end(), len(text), len(text)
        return tag.end(), closing, closing + len(tag[0])
    body = QUOTED_BODY.get(quote)
    if body is None:
        return None
    found = body.match(text, start + 1)
    end = found.end() if found else start + 1
    if end >= len(text) or text[end] != quote:  # never closed (or a lone backslash last)
        return start + 1, len(text), len(text)
    return start + 1, end, end + 1
