"""Redaction of secrets in events on the way out (API, export, admin).

Producers put credentials in facets more often than anyone would like: Debezium sends its
connector configuration as ``"database.password=postgres"`` strings, Spark and Airflow
send environment variables, ``--conf`` lines and connection URIs. The raw log keeps the
event as received (it is the source of truth); every read path passes payloads (and any
other text that came from a producer: derivation errors, metadata values) through
``redact``. Nothing else redacts: one function, one behaviour.

A key is secret when its lower-cased name contains one of ``LINEAGE["REDACT_KEYS"]``, or
holds one of ``LINEAGE["REDACT_WORDS"]`` as a word (``pass``: ``db_pass``, not ``bypass``).
Redacted shapes:

- the value of a secret key in an object, whatever it is (``{"password": ["x"]}``,
  ``{"credentials": {"value": "x"}}``); ``null`` and booleans are kept;
- the ``value`` of a name/value pair whose ``key`` or ``name`` is a secret key
  (``{"key": "db.password", "value": "x"}``: execution parameters, environment variables
  sent as a list of ``{"name", "value"}``);
- ``key=value`` and ``key: value`` assignments with a secret key anywhere in a string:
  a whole line when the assignment starts the line (``user=bob\\npassword=x``,
  ``Authorization: Bearer x``), else up to the next blank, ``&``, ``;`` or ``,``
  (``--conf spark.hadoop.fs.s3a.secret.key=x``, JDBC ``?user=u&password=x``, a DSN
  ``host=h password=x``), or the quoted value (JAAS ``password="x";``, escaped quotes
  inside), to the end of the text when it is never closed;
- an object or array written in text after a secret key (JSON or a Python dict in a string,
  JSON escaped inside a JSON string, JSON cut short: ``{"password": {"nested": "x"}}``,
  ``{'secrets': ['x']}``): the whole of it, to its closing bracket or the end of the text;
- the password of URLs with user info (``postgres://user:secret@host``), including
  passwords that contain ``/`` or ``@``;
- SQL credentials: the string literal after a secret key (``ALTER ROLE r PASSWORD 'x'``,
  ``WITH ENCRYPTED PASSWORD 'x'``, ``PASSWORD = N'x'``, ``password $$x$$``) and whatever
  follows ``IDENTIFIED [WITH plugin] BY|AS`` (``CREATE USER u IDENTIFIED BY 'x'``; a bare
  word only in ``CREATE|ALTER USER``, Oracle's ``IDENTIFIED BY x [REPLACE y]``), whatever
  the quoting: single or double quotes, quotes doubled or backslash-escaped inside,
  ``E'…'``/``N'…'``, ``$$…$$`` and ``$tag$…$tag$``;
- an object's keys, as a string is redacted (a column keyed ``c token=x``, a facet keyed by
  a DSN with its password): the redacted form is the key shown, while whether the value
  beside it is a secret is decided by the key as sent. Keys of one object that redact
  alike are all kept, the later ones numbered (``_untaken``; ADR 0179).

Time is linear in the text: stored strings are hostile input, so no backtracking pattern
runs over them (the patterns below fail within a bounded number of steps at each
position; the one unbounded repeat, a quoted literal's body, is possessive and read once
per literal), and at most ``SCAN_LIMIT`` characters of one string are scanned. The rest of a
longer string is kept only when it contains no secret key and no ``@`` (a C-speed
substring test); otherwise it is replaced by a marker. See docs/security.md.
"""

import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from typing import Any

from django.conf import settings

from core.sql_credentials import IDENTIFIED_WORD, MAX_KEY, QUOTED_BODY, sql_spans

REDACTED = "***REDACTED***"
# The fields that name the "value" beside them in a name/value pair object.
_PAIR = ("key", "name")
# Characters of one string that are scanned for assignments and URLs (1 MiB of text).
SCAN_LIMIT = 1 << 20
UNSCANNED = "***REDACTED: {count} characters not scanned***"
# A candidate key: a run of name characters that starts a word (the look-behind fails at
# once inside a run, so each character starts at most one attempt), optionally closed by a
# quote (JSON or a Python dict inside a string, or JSON escaped inside a JSON string:
# ``\"password\":``), then ``=`` or ``:``. Bounded quantifiers: linear overall.
_ASSIGNMENT = re.compile(rf"(?<![\w.\-])([\w.\-]{{1,{MAX_KEY}}})(\\?[\"'])?[ \t]{{0,8}}([=:])")
# Where an unquoted inline value ends.
_VALUE_END = re.compile(r"[\s&;,]")
# What a walk through an object or array in text stops at: runs of opening or of closing
# brackets (counted at once), quotes, escapes.
_STRUCTURE_MARK = re.compile(r"[\[{]{1,4096}|[\]}]{1,4096}|[\"'\\]")
# Blanks (line breaks too) between a key and the object or array that is its value.
_BLANKS_BEFORE_STRUCTURE = re.compile(r"[ \t\r\n]{0,64}[\[{]")
_URL_SCAN = 4096  # characters after ``://`` looked at for user info
_URL_END = re.compile(r"[\s\"'<>]")
# ``host:8080/path@x`` (or ``hdfs://nn:8020/path@v1``) is a port, not a password.
PORT_AND_PATH = re.compile(r"\d{1,5}/")


# What a text must hold for any redaction rule to find something in it, by keyword
# pattern: its keys and words, and ``identified``. Searching a short text for the
# case-insensitive alternation of ~20 keys cost ~11 µs (a run page's 50 runIds were a
# quarter of its Python, ADR 0130); twenty substring tests on the lower-cased text cost ~2.
_NEEDLES: dict[str, tuple[str, ...] | None] = {}


def _ascii_needles(keywords: tuple[str, ...]) -> tuple[str, ...] | None:
    """The substrings ``_redact_text``'s quick test looks for, or None (no quick test) when a
    keyword is not ASCII: only between ASCII texts is ``re.IGNORECASE``'s match the same as
    a substring of the lower-cased text (``K``, the Kelvin sign, matches ``k``)."""
    needles = tuple(needle.lower() for needle in (*keywords, "identified"))
    return needles if all(needle.isascii() for needle in needles) else None


@lru_cache(maxsize=8)
def _keyword_pattern(keys: tuple[str, ...], words: tuple[str, ...]) -> re.Pattern[str]:
    # Literal alternatives only: each position costs at most one comparison per key.
    # Words match only between non-letters (``db_pass``, ``PASS``; not ``passenger``).
    alternatives = [re.escape(key) for key in keys]
    alternatives += [rf"(?<![a-z]){re.escape(word)}(?![a-z])" for word in words]
    pattern = re.compile("|".join(alternatives), re.IGNORECASE)
    if len(_NEEDLES) >= 64:  # settings changed many times (tests): only evicts
        _NEEDLES.clear()
    _NEEDLES[pattern.pattern] = _ascii_needles((*keys, *words))
    return pattern


def _configured(name: str) -> tuple[str, ...]:
    configured: list[str] = settings.LINEAGE.get(name, [])  # type: ignore[assignment]
    # Derivation redacts every text it copies out of a facet (ADR 0056): lower-casing the
    # lists for each one cost more than the answer. The answer is kept with the list it
    # came from, so settings that bring another list (override_settings) get a new one.
    known = _CONFIGURED.get(name)
    if known is not None and known[0] is configured:
        return known[1]
    answer = tuple(key.lower() for key in configured if key)
    _CONFIGURED[name] = (configured, answer)
    return answer


_CONFIGURED: dict[str, tuple[list[str], tuple[str, ...]]] = {}


def redact(document: Any, keys: tuple[str, ...] | None = None) -> Any:
    """A copy of ``document`` with secrets replaced by ``***REDACTED***``.

    ``document`` is anything JSON can hold (a payload, a facet, a string). This is the
    one redaction function of every read path: API, export, admin, and the Marquez API.
    ``keys`` replaces both configured lists (``REDACT_KEYS`` and ``REDACT_WORDS``).
    Keys are redacted like strings (a key redaction leaves alone costs one dict look-up in
    the memo, as a repeated string does); redacting a redacted document changes nothing.
    """
    memo = _current_memo(keys)
    if memo is None:
        return document
    if type(document) is str:  # one text (redact_text): no walk
        return memo.text(document)
    secret_keys_seen, texts_seen, keys_seen = memo.keys, memo.texts, memo.key_forms

    def secret_name(name: str) -> bool:
        secret = secret_keys_seen.get(name)
        return memo.remember_key(name) if secret is None else secret

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            copy: dict[Any, Any] = {}
            # A name/value pair ({"key": "db.password", "value": "x"}): the value is the
            # secret key's value (execution parameters, environment variables as lists).
            pair = "value" in value and any(
                type(value.get(field)) is str and secret_name(value[field]) for field in _PAIR
            )
            numbers: dict[str, int] | None = None  # _untaken's, made when a key changes
            for key, item in value.items():
                if type(key) is str:
                    # A key is producer text too (a column keyed ``c token=x``): shown as
                    # redact_text shows it, its value's secrecy decided by the key as sent.
                    # One look-up answers both for a key seen before (keys repeat).
                    answer = keys_seen.get(key)
                    changed, secret = memo.remember_key_form(key) if answer is None else answer
                    if changed is None:
                        shown = key
                    else:
                        if numbers is None:
                            numbers = {}
                        shown = _untaken(changed, value, copy, numbers)
                else:
                    shown, secret = key, secret_name(str(key))
                if item is None or item is True or item is False:
                    copy[shown] = item
                    continue
                if secret or (pair and key == "value"):
                    copy[shown] = REDACTED
                else:
                    copy[shown] = walk(item)  # noqa: F821 (del: below)
            return copy
        if isinstance(value, list):
            return [walk(item) for item in value]  # noqa: F821 (del: below)
        if isinstance(value, str):
            redacted = texts_seen.get(value)
            return redacted if redacted is not None else memo.remember_text(value)
        return value

    try:
        return walk(document)
    finally:
        # walk refers to itself through its closure: a cycle that would leave this call's
        # functions to the garbage collector (core/heap.py); without it they die here.
        del walk


def _untaken(
    shown: str, sent: dict[Any, Any], copy: dict[Any, Any], numbers: dict[str, int]
) -> str:
    """``shown``, the redacted form of a key, or, when a key of the object as sent or one
    already given in its copy holds it (two keys that redact alike, ``c token=a`` and
    ``c token=b``), ``shown`` followed by `` (2)``, `` (3)``, ...: the first number no such
    key holds. No value is lost, the object stays valid JSON (unique keys), and a key as
    sent keeps its name. ``numbers`` (the object's own) carries on from the last number
    given to each form, so an object of n keys that redact alike costs O(n), not O(n²):
    each number passed over is a distinct key of the object."""
    if shown not in sent and shown not in copy:
        return shown
    number = numbers.get(shown, 2)
    while (candidate := f"{shown} ({number})") in sent or candidate in copy:
        number += 1
    numbers[shown] = number + 1
    return candidate


def _current_memo(keys: tuple[str, ...] | None) -> "_Memo | None":
    """The memo of ``redact``'s patterns for ``keys`` (None: the configured lists), or None
    when there is nothing to redact."""
    words: tuple[str, ...] = ()
    if keys is not None:
        secret_keys = tuple(key.lower() for key in keys if key)
    else:
        secret_keys, words = _configured("REDACT_KEYS"), _configured("REDACT_WORDS")
    if not secret_keys and not words:
        return None
    return _memo(_keyword_pattern(secret_keys, words))


def text_redactor() -> Callable[[str], str]:
    """``redact_text`` with the configured lists looked up once, for the many texts of one
    answer (a run page's 50 runIds: the look-ups were two thirds of each call, ADR 0141).
    Settings read when it is made: one answer's worth, not kept."""
    memo = _current_memo(None)
    return _unchanged if memo is None else memo.text


def _unchanged(text: str) -> str:
    return text


# Events repeat their keys and most of their short strings (facet names, schema URLs,
# producers, field names and types), and a page of events or a detail walks thousands of
# them: a regex search each cost ~10 µs, two thirds of an events page's CPU. Both answers
# are pure functions of (text, patterns), so remembering them changes no result. The memo
# is a plain dict per pattern (a dict lookup in the walk, where an lru_cache call cost a
# Python call and a hash of the pattern each time); it keeps only text of up to
# _MEMO_TEXT characters and is emptied when it reaches _MEMO_ENTRIES, so hostile text
# only evicts, never grows memory.
_MEMO_TEXT = 256
_HEX = "0123456789abcdef-"
_MEMO_ENTRIES = 16384


class _Memo:
    def __init__(self, keywords: re.Pattern[str]) -> None:
        self.keywords = keywords
        self.needles = _NEEDLES.get(keywords.pattern)
        self.keys: dict[str, bool] = {}
        self.texts: dict[str, str] = {}
        # Per key of an object: (how it is shown, None if as sent; whether its value is secret).
        self.key_forms: dict[str, tuple[str | None, bool]] = {}
        # Whether no needle can be found in a text of lower-case hex digits and dashes (a
        # UUID as PostgreSQL and Python write one: most runIds): such a text has no ``://``,
        # ``@`` nor ``identified``, so the quick test clears it, unless a needle is itself
        # made of those characters (a key ``dead``). Told apart by one C-speed ``strip``,
        # and not remembered: each runId is its own and would only evict the memo's texts.
        self.hex_clear = self.needles is not None and all(
            needle.strip(_HEX) for needle in self.needles
        )

    def text(self, text: str) -> str:
        """``text`` redacted: ``redact`` of one string."""
        if self.hex_clear and not text.strip(_HEX) and len(text) <= SCAN_LIMIT:
            return text
        redacted = self.texts.get(text)
        return redacted if redacted is not None else self.remember_text(text)

    def remember_key_form(self, key: str) -> tuple[str | None, bool]:
        """How ``redact`` shows an object's ``key`` (None when redaction leaves it alone)
        and whether its value is a secret."""
        shown = self.texts.get(key)
        if shown is None:
            shown = self.remember_text(key)
        secret = self.keys.get(key)
        if secret is None:
            secret = self.remember_key(key)
        answer = (None if shown == key else shown), secret
        if len(key) <= _MEMO_TEXT:
            _bounded_put(self.key_forms, key, answer)
        return answer

    def remember_key(self, key: str) -> bool:
        secret = self.keywords.search(key) is not None
        if len(key) <= _MEMO_TEXT:
            _bounded_put(self.keys, key, secret)
        return secret

    def remember_text(self, text: str) -> str:
        redacted = _redact_text(text, self.keywords, self.needles)
        if len(text) <= _MEMO_TEXT:
            _bounded_put(self.texts, text, redacted)
        return redacted


def _bounded_put(memo: dict[str, Any], text: str, answer: Any) -> None:
    if len(memo) >= _MEMO_ENTRIES:
        memo.clear()  # dict operations are atomic: a concurrent reader only misses
    memo[text] = answer


@lru_cache(maxsize=8)
def _memo(keywords: re.Pattern[str]) -> _Memo:
    return _Memo(keywords)


def is_secret_key(key: str) -> bool:
    """Whether ``redact`` hides the value of ``key`` (with the configured key lists)."""
    secret_keys, words = _configured("REDACT_KEYS"), _configured("REDACT_WORDS")
    if not secret_keys and not words:
        return False
    return _keyword_pattern(secret_keys, words).search(key) is not None


def redact_text(text: str, keys: tuple[str, ...] | None = None) -> str:
    """``text`` with secret assignments and URL passwords replaced (``redact`` for a string)."""
    result = redact(text, keys)
    return result if isinstance(result, str) else text


def _redact_text(
    text: str, keywords: re.Pattern[str], needles: tuple[str, ...] | None = None
) -> str:
    # The quick test (``_NEEDLES``): an ASCII text without a URL's user info whose lower-cased
    # text holds none of them has no keyword and no ``identified`` for the searches below to
    # find, and nothing past SCAN_LIMIT: the scan would return it whole. A text it cannot
    # clear is scanned as before.
    if (
        needles is not None
        and len(text) <= SCAN_LIMIT
        and text.isascii()
        and not ("://" in text and "@" in text)
    ):
        lowered = text.lower()
        for needle in needles:
            if needle in lowered:
                break
        else:
            return text
    scanned, rest = text[:SCAN_LIMIT], text[SCAN_LIMIT:]
    if rest and ("@" in rest or keywords.search(rest) or IDENTIFIED_WORD.search(rest)):
        rest = UNSCANNED.format(count=len(rest))
    has_key = keywords.search(scanned) is not None
    identified = IDENTIFIED_WORD.search(scanned) is not None
    if has_key or identified:
        # SQL literals first: they know where a quoted value really ends (``'it''s'``),
        # and what they redact leaves nothing for the assignments to find.
        spans = sql_spans(scanned, keywords if has_key else None, identified, REDACTED)
        scanned = splice(scanned, spans)
    if has_key:
        scanned = _redact_assignments(scanned, keywords)
    if "://" in scanned and "@" in scanned:
        scanned = _redact_url_passwords(scanned)
    return scanned + rest


def _redact_assignments(text: str, keywords: re.Pattern[str]) -> str:
    return splice(text, _assignment_spans(text, keywords))


def _assignment_spans(text: str, keywords: re.Pattern[str]) -> Iterator[tuple[int, int, str]]:
    done = 0  # text[:done] is spoken for
    for match in _ASSIGNMENT.finditer(text):
        if done == len(text):
            break
        if match.start() < done or not keywords.search(match[1]):
            continue
        start = match.end()
        structure = _BLANKS_BEFORE_STRUCTURE.match(text, start)
        if structure is not None:  # {"password": {"nested": "x"}}: the whole value
            start = structure.end() - 1
            end = _structure_end(text, start, _STRING_QUOTES[match[2] or ""])
            mark = match[2] if match[2] in ('"', "'") else ""
            yield start, end, f"{mark}{REDACTED}{mark}"
            done = end
            continue
        while start < len(text) and text[start] in " \t":
            start += 1
        start, end = _value_span(text, match.start(), start)
        if end <= start:
            continue
        yield start, end, REDACTED
        done = end


# How strings are quoted inside an object or array, by how its key was quoted: JSON (``"``),
# a Python dict's repr (``'``, and ``"`` around text holding a ``'``), JSON escaped inside
# a JSON string (its quotes are escapes, skipped as such), or a bare key (either quote).
_STRING_QUOTES = {'"': '"', "'": "'\"", '\\"': "", "\\'": "", "": "'\""}


def _structure_end(text: str, start: int, quotes: str) -> int:
    """Where the object or array opening at ``text[start]`` closes (just after its closing
    bracket), or the end of the text when it never does (JSON cut short: the rest of the
    text is the secret value).

    Brackets inside strings do not count: a string is skipped whole, with the possessive
    ``QUOTED_BODY`` (backslash escapes; a doubled quote over-redacts at worst). Each
    character is read once, and the caller skips every key inside: linear.
    """
    depth, position = 0, start
    while True:
        found = _STRUCTURE_MARK.search(text, position)
        if found is None:
            return len(text)
        mark, position = found[0], found.end()
        if mark[0] in "[{":
            depth += len(mark)
        elif mark[0] in "]}":
            if len(mark) >= depth:
                return found.start() + depth
            depth -= len(mark)
        elif mark == "\\":
            position += 1  # an escaped character: an escaped quote opens no string
        elif mark in quotes:
            position = QUOTED_BODY[mark].match(text, position).end() + 1  # type: ignore[union-attr]
            if position > len(text):
                return len(text)


def _value_span(text: str, key_start: int, value_start: int) -> tuple[int, int]:
    """The value of an assignment: inside its quotes (to the end of the text when it is
    never closed), its line, or its word."""
    if value_start >= len(text):
        return value_start, value_start
    if text.startswith(('\\"', "\\'"), value_start):  # JSON escaped in a JSON string
        mark = text[value_start : value_start + 2]
        closing = text.find(mark, value_start + 2)
        while closing >= 0 and text[closing - 1] == "\\":  # an escaped quote inside
            closing = text.find(mark, closing + 2)
        return (value_start + 2, closing) if closing >= 0 else (value_start, len(text))
    quote = text[value_start]
    if quote in "\"'":
        # Backslash escapes (and doubled quotes) stay inside: "a\\"b c" is one value.
        body_end = QUOTED_BODY[quote].match(text, value_start + 1).end()  # type: ignore[union-attr]
        if body_end < len(text):  # keep the quotes: ``password="***REDACTED***"``
            return value_start + 1, body_end
        return value_start, len(text)
    before = key_start  # only blanks between the line's start and the key: its own line
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before == 0 or text[before - 1] in "\r\n":
        line_end = text.find("\n", value_start)
        return value_start, len(text) if line_end < 0 else line_end
    found = _VALUE_END.search(text, value_start)
    return value_start, len(text) if found is None else found.start()


def url_windows(text: str) -> Iterator[tuple[int, int]]:
    """For each ``://`` in ``text``: where what follows it starts, and where the next
    ``://`` starts (or the text ends).

    Each character belongs to one URL's window, so a walk that looks only inside the
    window is linear, however many ``://`` there are. Redaction here and the credential
    stripping of dataset names (``catalog.names.naming``) both walk URLs this way.
    """
    position = text.find("://")
    while position >= 0:
        start = position + 3
        following = text.find("://", start)
        yield start, following if following >= 0 else len(text)
        position = following


def splice(text: str, replacements: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with each ``(start, end, new)`` put in place of ``text[start:end]``.

    The spans come in order and do not overlap; ``text`` itself is returned when there
    are none.
    """
    pieces: list[str] = []
    done = 0  # text[:done] is already in pieces
    for start, end, new in replacements:
        pieces.append(text[done:start])
        pieces.append(new)
        done = end
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def _redact_url_passwords(text: str) -> str:
    return splice(text, _url_password_spans(text))


def _url_password_spans(text: str) -> Iterator[tuple[int, int, str]]:
    for start, window_end in url_windows(text):
        limit = min(window_end, start + _URL_SCAN)
        end_match = _URL_END.search(text, start, limit)
        end = end_match.start() if end_match else limit
        colon = text.find(":", start, end)
        at = text.rfind("@", start, end)
        if colon >= 0 and at > colon + 1:
            user, secret = text[start:colon], text[colon + 1 : at]
            if (
                not any(mark in user for mark in "/@?#")
                and not PORT_AND_PATH.match(secret)
                and secret != REDACTED
            ):
                yield colon + 1, at, REDACTED
