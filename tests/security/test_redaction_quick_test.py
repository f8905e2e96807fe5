"""The quick test before a text's scan (``core.redaction._NEEDLES``, ADR 0130): a text it
returns whole is one the scan returns whole, and a text it cannot clear is scanned."""

import uuid

from django.conf import settings as django_settings
from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from core import redaction
from core.redaction import redact_text

# Pieces that make the scan find something, or nearly: keys and words in every case, the
# SQL word, assignments, URLs with and without user info, quotes, and characters whose
# case folding is not ASCII's (the Kelvin sign matches ``k``; dotted and dotless i, long s).
_PIECES = [
    "password",
    "PassWord",
    "PASSWD",
    "secret",
    "Token",
    "api-key",
    "sasl.jaas.config",
    "pass",
    "bypass",
    "PW",
    "pw1",
    "identified",
    "IDENTIFIED BY",
    "create user u ",
    "=",
    ": ",
    "'",
    '"',
    "$$",
    "postgres://u:x@h/db",
    "://",
    "@",
    " ",
    "\n",
    "&",
    "\u212a",
    "to\u212aen",
    "\u0130",
    "\u0131",
    "\u017f",
    "é",
    "x",
    "0f3e",
    "-",
]
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


def _both(text: str, keys: tuple[str, ...], words: tuple[str, ...]) -> tuple[str, str]:
    pattern = redaction._keyword_pattern(keys, words)
    needles = redaction._NEEDLES[pattern.pattern]
    return (
        redaction._redact_text(text, pattern, needles),
        redaction._redact_text(text, pattern),
    )


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_the_quick_test_changes_no_answer(text: str) -> None:
    keys, words = redaction._configured("REDACT_KEYS"), redaction._configured("REDACT_WORDS")
    quick, scanned = _both(text, keys, words)
    assert quick == scanned


@settings(max_examples=200, deadline=None)
@given(_TEXTS, st.sampled_from([("tok",), ("k",), ("0f",), ("Secret",), ("passé",)]))
def test_the_quick_test_changes_no_answer_with_other_keys(text: str, keys) -> None:
    quick, scanned = _both(text, tuple(key.lower() for key in keys), ("pw",))
    assert quick == scanned


class _Unsearchable:
    """A keyword pattern that fails if the scan runs."""

    pattern = "unsearchable"

    def search(self, text: str) -> None:
        raise AssertionError(f"scanned {text!r}")


def test_a_runid_is_returned_without_a_scan() -> None:
    keys, words = redaction._configured("REDACT_KEYS"), redaction._configured("REDACT_WORDS")
    pattern = redaction._keyword_pattern(keys, words)
    needles = redaction._NEEDLES[pattern.pattern]
    assert needles is not None and "password" in needles and "identified" in needles
    text = str(uuid.uuid4())
    assert redaction._redact_text(text, _Unsearchable(), needles) == text  # type: ignore[arg-type]
    assert redact_text(text) == text


def test_what_the_quick_test_cannot_clear_is_scanned() -> None:
    assert redact_text("db_PASS=x") == "db_PASS=***REDACTED***"
    assert redact_text("jdbc://u:pw@h") == "jdbc://u:***REDACTED***@h"
    assert redact_text("CREATE USER u IDENTIFIED BY hunter2") == (
        "CREATE USER u IDENTIFIED BY ***REDACTED***"
    )
    # Not ASCII: the Kelvin sign matches ``k`` case-insensitively, which lower() misses.
    assert redact_text("to\u212aen=x") == "to\u212aen=***REDACTED***"
    assert redaction._ascii_needles(("mot_de_passé",)) is None
    assert redaction._ascii_needles(("to\u212aen",)) == ("token", "identified")  # lower()
    assert redaction._ascii_needles(("PassWord",)) == ("password", "identified")


_HEXES = st.lists(
    st.sampled_from(["0f3e", "dead", "be", "-", "a", "9", "c0ffee", "F"]), max_size=10
)


@settings(max_examples=300, deadline=None)
@given(
    _HEXES.map("".join),
    st.sampled_from([None, ("dead",), ("0f", "pw"), ("-",), ("Secret",), ("passé",)]),
)
def test_a_hex_text_cleared_without_the_quick_test_is_what_the_scan_answers(
    text: str, keys: tuple[str, ...] | None
) -> None:
    # The memo's shortcut for a text of lower-case hex digits and dashes (ADR 0141) is taken
    # only when no needle is made of those characters (not for ``dead``, ``0f`` nor ``-``).
    redacted = redaction.redact(text, keys)
    words = ()
    if keys is None:
        keys, words = redaction._configured("REDACT_KEYS"), redaction._configured("REDACT_WORDS")
    lowered = tuple(key.lower() for key in keys)
    assert redacted == redaction._redact_text(text, redaction._keyword_pattern(lowered, words))


def test_a_runid_is_cleared_by_its_characters_and_not_remembered() -> None:
    memo = redaction._current_memo(None)
    assert memo is not None and memo.hex_clear
    text = str(uuid.uuid4())
    memo.keywords = _Unsearchable()  # type: ignore[assignment]
    try:
        assert memo.text(text) == text and text not in memo.texts
    finally:
        memo.keywords = redaction._keyword_pattern(
            redaction._configured("REDACT_KEYS"), redaction._configured("REDACT_WORDS")
        )
    assert redaction.text_redactor()(text) == text
    assert redaction.text_redactor()("password=x") == "password=***REDACTED***"
    assert not redaction._current_memo(("dead",)).hex_clear  # type: ignore[union-attr]


def test_a_redactor_with_nothing_configured_returns_the_text() -> None:
    lineage = {**django_settings.LINEAGE, "REDACT_KEYS": [], "REDACT_WORDS": []}
    with override_settings(LINEAGE=lineage):
        assert redaction.text_redactor()("password=x") == "password=x"
