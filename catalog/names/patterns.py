"""Alias-rule patterns, written in Python's syntax, matched by RE2 (docs/adr/0057).

RE2 matches in time linear in the name, whatever the pattern: no pattern a steward saves
can make a worker backtrack (``(a|a)*`` on ``aaaa…b`` took the full timeout for every name).
Stewards keep writing Python regular expressions: ``to_re2`` reads the pattern with Python's
own parser and writes the same expression in RE2's syntax, so what a pattern means does not
change. Python's shorthand classes keep their Unicode meaning (RE2's own ``\\d``, ``\\w``,
``\\s`` are ASCII): ``\\d`` is ``\\p{Nd}``, ``\\w`` letters, numbers and ``_``, ``\\s`` Python's
whitespace. What RE2 cannot run is refused by name (``PatternRefused``): backreferences,
lookahead and lookbehind, atomic groups and possessive repeats, conditionals, a ``\\W``, ``\\S``
or ``\\D`` inside ``[...]``, and, in a pattern with a capturing group, a repeat of something
that can match nothing (``(a?)*``, ``(?:.??)*(_*)``: the two engines split the name
differently between the groups, ADR 0156). Two documented differences
remain: ``\\b``/``\\B`` are word boundaries by ASCII letters, and ``$`` (without MULTILINE)
matches only at the very end, not before a final newline.
"""

import re
import re._constants as c  # the parsed form of a pattern (CPython's private parser, ADR 0057)
import re._parser as sre_parse
from typing import Any

# Python's whitespace for str patterns (str.isspace), as RE2 class items.
_SPACE = (
    r"\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
    r"\x{205f}\x{3000}"
)
_IN_CLASS = {  # category → RE2 class items, (unicode, ascii)
    c.CATEGORY_DIGIT: (r"\p{Nd}", "0-9"),
    c.CATEGORY_WORD: (r"\p{L}\p{N}_", "0-9A-Za-z_"),
    c.CATEGORY_SPACE: (_SPACE, r"\t-\r\x{20}"),
}
_NEGATED = {
    c.CATEGORY_NOT_DIGIT: c.CATEGORY_DIGIT,
    c.CATEGORY_NOT_WORD: c.CATEGORY_WORD,
    c.CATEGORY_NOT_SPACE: c.CATEGORY_SPACE,
}
_FLAGS = ((c.SRE_FLAG_IGNORECASE, "i"), (c.SRE_FLAG_MULTILINE, "m"), (c.SRE_FLAG_DOTALL, "s"))
_REFUSED = {
    c.GROUPREF: "backreferences (\\1, (?P=name))",
    c.GROUPREF_EXISTS: "conditional groups ((?(1)...))",
    c.ASSERT: "lookahead and lookbehind ((?=...), (?<=...))",
    c.ASSERT_NOT: "negative lookahead and lookbehind ((?!...), (?<!...))",
    c.ATOMIC_GROUP: "atomic groups ((?>...))",
    c.POSSESSIVE_REPEAT: "possessive repeats (a*+, a++)",
}


class PatternRefused(re.error):
    """A valid Python pattern that the linear-time engine cannot run."""


def _char(code: int) -> str:
    character = chr(code)
    return character if character.isascii() and character.isalnum() else f"\\x{{{code:x}}}"


def _class_item(op: Any, value: Any, ascii_only: bool) -> str:
    if op is c.LITERAL:
        return _char(value)
    if op is c.RANGE:
        return f"{_char(value[0])}-{_char(value[1])}"
    if op is c.CATEGORY and value in _IN_CLASS:
        return _IN_CLASS[value][ascii_only]
    if op is c.CATEGORY and value in _NEGATED:
        raise PatternRefused(
            "RE2 cannot run \\D, \\W or \\S inside [...]; write the class out instead"
        )
    raise PatternRefused(f"RE2 cannot run this character class item ({op} {value})")


def _items(items: Any, flags: int, names: dict[int, str], groups: bool) -> str:
    """``items`` in RE2's syntax; ``groups``: the whole pattern has a capturing group."""
    ascii_only = bool(flags & c.SRE_FLAG_ASCII)
    out = []
    for op, value in items:
        if op in _REFUSED:
            raise PatternRefused(f"RE2, the linear-time engine, cannot run {_REFUSED[op]}")
        if op is c.LITERAL:
            out.append(_char(value))
        elif op is c.NOT_LITERAL:
            out.append(f"[^{_char(value)}]")
        elif op is c.ANY:
            out.append("(?s:.)" if flags & c.SRE_FLAG_DOTALL else "(?-s:.)")
        elif op is c.IN:
            negate = bool(value) and value[0][0] is c.NEGATE
            members = value[1:] if negate else value
            if len(members) == 1 and members[0][0] is c.CATEGORY and members[0][1] in _NEGATED:
                negate, members = not negate, [(c.CATEGORY, _NEGATED[members[0][1]])]
            body = "".join(_class_item(o, v, ascii_only) for o, v in members)
            out.append(f"[{'^' if negate else ''}{body}]")
        elif op is c.BRANCH:
            out.append("(?:" + "|".join(_items(b, flags, names, groups) for b in value[1]) + ")")
        elif op is c.SUBPATTERN:
            group, add, remove, sub = value
            inner = _items(sub, (flags | add) & ~remove, names, groups)
            if (add | remove) & c.SRE_FLAG_IGNORECASE:  # a scoped (?i:...) or (?-i:...)
                inner = f"(?{'' if add & c.SRE_FLAG_IGNORECASE else '-'}i:{inner})"
            if group is None:
                out.append(f"(?:{inner})")
            elif group in names:
                out.append(f"(?P<{names[group]}>{inner})")
            else:
                out.append(f"({inner})")
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, sub = value
            # The engines end a repeat's empty turns differently, so with a group anywhere
            # in the pattern they can split the name differently between the groups:
            # ``(?:.??)*(_*)`` on "1_" is "_" in Python and "" in RE2.
            if high > 1 and groups and _nullable(sub):
                raise PatternRefused(
                    "a repeat of something that can match nothing, like (a?)* or (?:.??)*, "
                    "puts different text in the groups in RE2 than in Python; make the "
                    "repeated part required, like (a)* or .*"
                )
            bound = (
                "*"
                if (low, high) == (0, c.MAXREPEAT)
                else "+"
                if (low, high) == (1, c.MAXREPEAT)
                else f"{{{low},}}"
                if high == c.MAXREPEAT
                else f"{{{low},{high}}}"
            )
            lazy = "?" if op is c.MIN_REPEAT else ""
            out.append(f"(?:{_items(sub, flags, names, groups)}){bound}{lazy}")
        elif op is c.AT:
            out.append(_at(value, flags))
        else:
            raise PatternRefused(f"RE2 cannot run this part of the pattern ({op})")
    return "".join(out)


def _nullable(items: Any) -> bool:
    """Whether ``items`` can match the empty string."""
    for op, value in items:
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            if value[0] > 0 and not _nullable(value[2]):
                return False
        elif op is c.SUBPATTERN:
            if not _nullable(value[-1]):
                return False
        elif op is c.BRANCH:
            if not any(_nullable(branch) for branch in value[1]):
                return False
        elif op not in (c.AT, c.ASSERT, c.ASSERT_NOT):
            return False  # a character, a class or a backreference consumes
    return True


def _captures(items: Any) -> bool:
    """Whether ``items`` hold a capturing group."""
    for op, value in items:
        if op is c.SUBPATTERN and (value[0] is not None or _captures(value[-1])):
            return True
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and _captures(value[2]):
            return True
        if op is c.BRANCH and any(_captures(branch) for branch in value[1]):
            return True
    return False


def _at(value: Any, flags: int) -> str:
    multiline = bool(flags & c.SRE_FLAG_MULTILINE)
    if value is c.AT_BEGINNING:
        return "(?m:^)" if multiline else r"\A"
    if value is c.AT_BEGINNING_STRING:
        return r"\A"
    if value is c.AT_END:
        return "(?m:$)" if multiline else r"\z"
    if value is c.AT_END_STRING:
        return r"\z"
    if value is c.AT_BOUNDARY:
        return r"\b"
    if value is c.AT_NON_BOUNDARY:
        return r"\B"
    raise PatternRefused(f"RE2 cannot run this anchor ({value})")


class UnsafePattern(re.error):
    """A valid pattern refused because matching it can take exponential time."""


_REPEATS = {c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT}
_BACKREFERENCES = {c.GROUPREF, c.GROUPREF_EXISTS}


def check_pattern(pattern: str) -> None:
    """Raise ``re.error`` (``UnsafePattern`` for a catastrophic shape) unless ``pattern``
    is a valid regular expression whose matching time stays polynomial."""
    _check(sre_parse.parse(pattern))


def _check(parsed: Any) -> None:
    """``check_pattern`` on a parsed pattern: the one walk both it and ``to_re2`` run."""

    def walk(items: Any, inside_repeat: bool) -> None:
        for op, value in items:
            if op in _BACKREFERENCES:
                raise UnsafePattern("backreferences are not allowed in alias rules")
            if op in _REPEATS:
                _, high, sub = value
                repeats = high > 1  # MAXREPEAT (unbounded) included
                if repeats and inside_repeat:
                    raise UnsafePattern(
                        "a repeated group contains another repeat (like (a+)+): matching it "
                        "can take exponential time; repeat the group or its content, not both"
                    )
                walk(sub, inside_repeat or repeats)
            elif op is c.SUBPATTERN:
                walk(value[-1], inside_repeat)
            elif op is c.BRANCH:
                for branch in value[1]:
                    walk(branch, inside_repeat)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                walk(value[1], inside_repeat)
            elif op is c.ATOMIC_GROUP:
                walk(value, inside_repeat)

    walk(parsed, False)


def to_re2(pattern: str) -> str:
    """``pattern`` (Python syntax) in RE2's syntax, meaning the same; ``re.error`` when
    Python refuses it, ``UnsafePattern`` for a catastrophic shape (checked first, as a
    steward saving it is told), ``PatternRefused`` when RE2 cannot run it."""
    parsed = sre_parse.parse(pattern)
    _check(parsed)
    flags = parsed.state.flags
    names = {number: name for name, number in parsed.state.groupdict.items()}
    body = _items(parsed, flags, names, _captures(parsed))
    letters = "".join(letter for flag, letter in _FLAGS if flags & flag and letter == "i")
    return f"(?{letters}:{body})" if letters else body
