"""Draw the curves of ``bench/derive.py --curve --out FILE`` as an SVG (no plotting library).

Two panels over the number of stored events: the derivation rate of each chunk, and its
CPU per event (client + PostgreSQL backend), one line per stream.

CURVES is the JSON of --out, or the printed log of a run (so a run stopped early can be
drawn from the chunks it finished).

Usage: .venv/bin/python -m bench.plot_curve CURVES docs/derivation-curve.svg [--title T]
"""

import argparse
import re
from pathlib import Path
from xml.sax.saxutils import escape

import orjson

COLOURS = {"shared-datasets": "#1f77b4", "fleet": "#d62728", "hot": "#2ca02c"}
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 760, 300, 70, 130, 30, 45


def _nice(value: float) -> float:
    """A round upper bound for an axis."""
    step = 10 ** (len(str(int(value))) - 1) if value >= 1 else 0.1
    while step * 10 < value:
        step *= 10
    for factor in (1, 2, 2.5, 5, 10):
        if step * factor >= value:
            return step * factor
    return step * 10


def _panel(
    curves: dict[str, list[dict[str, float]]], key: str, label: str, offset: int
) -> list[str]:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    max_x = _nice(max(row["events"] for rows in curves.values() for row in rows))
    max_y = _nice(max(row[key] for rows in curves.values() for row in rows) * 1.1)
    parts = [
        f'<g transform="translate(0,{offset})">',
        f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#999"/>',
        f'<text x="{LEFT}" y="{TOP - 10}" font-size="13">{escape(label)}</text>',
    ]
    for tick in range(5):
        value = max_y * tick / 4
        y = TOP + plot_h - plot_h * tick / 4
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>'
        )
        text = f"{value:,.0f}" if max_y >= 10 else f"{value:.2f}"
        parts.append(
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{text}</text>'
        )
        x_value = max_x * tick / 4
        x = LEFT + plot_w * tick / 4
        parts.append(
            f'<text x="{x:.1f}" y="{TOP + plot_h + 16}" font-size="11" text-anchor="middle">'
            f"{x_value / 1000:,.0f}k</text>"
        )
    parts.append(
        f'<text x="{LEFT + plot_w / 2}" y="{TOP + plot_h + 34}" font-size="12" '
        'text-anchor="middle">events stored</text>'
    )
    for index, (stream, rows) in enumerate(curves.items()):
        colour = COLOURS.get(stream, "#555")
        points = " ".join(
            f"{LEFT + plot_w * row['events'] / max_x:.1f},"
            f"{TOP + plot_h - plot_h * row[key] / max_y:.1f}"
            for row in rows
        )
        parts.append(
            f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        for point in points.split():
            x, y_point = point.split(",")
            parts.append(f'<circle cx="{x}" cy="{y_point}" r="2.5" fill="{colour}"/>')
        y = TOP + 15 + index * 18
        parts.append(
            f'<line x1="{LEFT + plot_w + 12}" x2="{LEFT + plot_w + 32}" y1="{y}" y2="{y}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        parts.append(
            f'<text x="{LEFT + plot_w + 38}" y="{y + 4}" font-size="12">{escape(stream)}</text>'
        )
    parts.append("</g>")
    return parts


def render(curves: dict[str, list[dict[str, float]]], title: str) -> str:
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{2 * HEIGHT + 30}" '
        'font-family="sans-serif">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<text x="{LEFT}" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    parts += _panel(curves, "rate", "derivation rate per chunk (events/s, one worker)", 20)
    cpu_label = "CPU per derived event (ms, client + PostgreSQL)"
    parts += _panel(curves, "cpu_ms", cpu_label, 30 + HEIGHT)
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


_LINE = re.compile(
    r"^([\w-]+): +([\d,]+) events stored, chunk derived at +([\d,]+) events/s, "
    r"([\d.]+) ms CPU/event"
)


def load(path: Path) -> dict[str, list[dict[str, float]]]:
    text = path.read_bytes()
    if text.lstrip().startswith(b"{"):
        document = orjson.loads(text)  # bench/derive.py --out: {"curves": …, "baselines": …}
        return document.get("curves", document)
    curves: dict[str, list[dict[str, float]]] = {}
    for line in text.decode().splitlines():
        match = _LINE.match(line)
        if match:
            stream, events, rate, cpu = match.groups()
            curves.setdefault(stream, []).append(
                {
                    "events": float(events.replace(",", "")),
                    "rate": float(rate.replace(",", "")),
                    "cpu_ms": float(cpu),
                }
            )
    return curves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("curves")
    parser.add_argument("svg")
    parser.add_argument("--title", default="Derivation as the log grows (bench/derive.py --curve)")
    options = parser.parse_args()
    curves = load(Path(options.curves))
    Path(options.svg).write_text(render(curves, options.title))


if __name__ == "__main__":
    main()
