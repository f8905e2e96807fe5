"""Redaction's cost: per string of the corpus, and over hostile text at n and 4n characters.

The linear-time argument is structural (every pattern over stored text has bounded or
possessive repeats; tests/security/test_redaction.py checks it on the regex parser's tree).
This prints the figures behind it: the cost of ``_redact_text`` per corpus string (the
memo of ``redact`` bypassed, so every string is scanned), and for each hostile string of
the tests (1 MB each), the time at 256 KB and at 1 MB and their ratio. Linear text costs
about 4x at 4x the length; a quadratic scan costs about 16x.

With ``--against REV``, the corpus figure is also taken for ``core/redaction.py`` as of
git revision REV, alternating with the current one in the same process.

``--documents N`` prints what a read path pays: ``redact`` of each corpus event whole (its
keys and its values, ADR 0179), process CPU per event, with the memo kept (a web process's
steady state) and emptied before each pass (its first sight of each key and string), the
medians of N alternated rounds; ``--documents-only`` skips the rest.

Usage: .venv/bin/python -m bench.redaction [--repeat 3] [--against cd086a2~3]
       [--documents 15] [--documents-only]
"""

import argparse
import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openlineage"


def _strings(value: object, found: list[str]) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _strings(item, found)
    elif isinstance(value, list):
        for item in value:
            _strings(item, found)
    elif isinstance(value, str):
        found.append(value)


def _best(repeat: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def _documents(modules: dict[str, ModuleType], rounds: int) -> None:
    """``redact`` of each corpus event whole, per module, warm and cold memo, alternated."""
    documents: list[dict[str, object]] = []
    for path in sorted(CORPUS.rglob("*.json")):
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        found = value if isinstance(value, list) else [value]
        documents += [item for item in found if isinstance(item, dict)]
    answers = [[module.redact(document) for document in documents] for module in modules.values()]
    keys_changed = sum(answer != answers[0] for answer in answers[1:])
    for cold in (False, True):
        figures: dict[str, list[float]] = {name: [] for name in modules}
        for _ in range(rounds):
            for name, module in modules.items():
                if cold:
                    module._memo.cache_clear()
                started = time.process_time()
                for document in documents:
                    module.redact(document)
                elapsed = time.process_time() - started
                figures[name].append(elapsed / len(documents) * 1e6)
        for name, values in figures.items():
            values.sort()
            print(
                f"redact of {len(documents)} corpus events ({name}, "
                f"{'cold' if cold else 'warm'} memo): median {values[len(values) // 2]:.1f} "
                f"µs/event (min {values[0]:.1f}, max {values[-1]:.1f})"
            )
    if keys_changed:
        print(f"({keys_changed} module(s) answer differently on the corpus)")


def _module_at(revision: str) -> ModuleType:
    """``core/redaction.py`` as of ``revision``, loaded as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{revision}:core/redaction.py"],
        check=True,
        capture_output=True,
        text=True,
        cwd=CORPUS.parents[2],
    ).stdout
    module = ModuleType(f"redaction_at_{revision}")
    exec(compile(source, f"{revision}:core/redaction.py", "exec"), module.__dict__)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--against", help="also time the corpus with this revision's module")
    parser.add_argument("--documents", type=int, default=0, help="rounds of whole events")
    parser.add_argument("--documents-only", action="store_true", help="only those")
    args = parser.parse_args()
    django.setup()
    from core import redaction
    from tests.security.test_redaction import HOSTILE

    keys = redaction._configured("REDACT_KEYS")
    words = redaction._configured("REDACT_WORDS")
    keywords = redaction._keyword_pattern(keys, words)

    strings: list[str] = []
    for path in sorted(CORPUS.rglob("*.json")):
        try:
            _strings(json.loads(path.read_text(encoding="utf-8")), strings)
        except ValueError:
            continue  # NDJSON and deliberately broken fixtures
    modules = {"current": redaction}
    if args.against:
        modules[args.against] = _module_at(args.against)
    if args.documents:
        _documents(modules, args.documents)
    if args.documents_only:
        return
    best = dict.fromkeys(modules, float("inf"))
    for _ in range(args.repeat):  # alternating, so that load changes hit both alike
        for name, module in modules.items():
            pattern = module._keyword_pattern(keys, words)
            seconds = _best(1, lambda m=module, p=pattern: [m._redact_text(t, p) for t in strings])
            best[name] = min(best[name], seconds)
    # One short text through the public function, answered from the memo: what derivation
    # pays per text it copies out of a facet (ADR 0056).
    calls = 20_000
    for name, module in modules.items():
        seconds = _best(
            args.repeat, lambda m=module: [m.redact_text("DIRECT") for _ in range(calls)]
        )
        print(f"redact_text of a remembered short text ({name}): {seconds / calls * 1e6:.2f} µs")
    characters = sum(map(len, strings))
    for name, seconds in best.items():
        print(
            f"corpus ({name}): {len(strings)} strings, {characters} characters: "
            f"{seconds * 1000:.1f} ms, {seconds / len(strings) * 1e6:.2f} µs per string "
            "(memo bypassed)"
        )
    print(f"{'hostile string':<34} {'256 KB s':>9} {'1 MB s':>9} {'ratio':>6}")
    worst = 0.0
    for text in HOSTILE:
        quarter = text[: len(text) // 4]
        small = _best(args.repeat, lambda q=quarter: redaction._redact_text(q, keywords))
        large = _best(args.repeat, lambda t=text: redaction._redact_text(t, keywords))
        ratio = large / max(small, 1e-6)
        worst = max(worst, ratio)
        print(f"{text[:30]!r:<34} {small:>9.3f} {large:>9.3f} {ratio:>6.1f}")
    print(f"largest 4x ratio: {worst:.1f} (linear ~4, quadratic ~16)")


if __name__ == "__main__":
    main()
