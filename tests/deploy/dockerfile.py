"""A small Dockerfile reader: instructions grouped by build stage (no engine runs here)."""

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parent.parent.parent / "Dockerfile"


@dataclass
class Stage:
    base: str
    name: str
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [argument for key, argument in self.instructions if key == keyword]

    def last(self, keyword: str) -> str | None:
        found = self.all(keyword)
        return found[-1] if found else None


def parse(text: str | None = None) -> tuple[dict[str, str], list[Stage]]:
    """Global ARG defaults and the stages, with line continuations joined, comments dropped."""
    text = DOCKERFILE.read_text() if text is None else text
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    arguments: dict[str, str] = {}
    stages: list[Stage] = []
    for line in lines:
        keyword, _, argument = line.partition(" ")
        keyword = keyword.upper()
        argument = argument.strip()
        if keyword == "ARG" and not stages:
            name, _, default = argument.partition("=")
            arguments[name] = default
        elif keyword == "FROM":
            match = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", argument, flags=re.IGNORECASE)
            assert match, f"unreadable FROM {argument!r}"
            base = re.sub(r"\$\{(\w+)\}", lambda m: arguments[m.group(1)], match.group(1))
            stages.append(Stage(base=base, name=match.group(2) or str(len(stages))))
        else:
            assert stages, f"{keyword} before any FROM"
            stages[-1].instructions.append((keyword, argument))
    return arguments, stages


def exec_form(argument: str) -> list[str]:
    """CMD/ENTRYPOINT in exec (JSON) form; shell form is refused (no signal forwarding)."""
    value = json.loads(argument)
    assert isinstance(value, list) and all(isinstance(part, str) for part in value)
    return value
