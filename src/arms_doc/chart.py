"""An inline SVG line chart of latency against corpus size, both axes logarithmic.

No JavaScript and no plotting library: the chart is a string of SVG written here. Axes, labels
and one series are drawn in ``currentColor``, so they take the text colour of whatever scheme
shows the page (Material's light ``default`` and dark ``slate`` alike); the other series use
Material's primary and accent colour variables, with fixed fallbacks for other themes, and
differ in dash pattern and marker too, so they stay apart without colour. Every point is a
``<circle class="point">`` with ``data-series``, ``data-files`` and ``data-ms`` attributes and a
``<title>`` tooltip. The output has no blank line, so Markdown passes it through as one HTML
block.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH = 680
HEIGHT = 350
#: The plot area.
LEFT = 84
RIGHT = 664
TOP = 14
BOTTOM = 270
#: The baseline of the legend, one row under the x axis title.
LEGEND_Y = 334
#: A rough width of one character at the chart's font size, to lay the legend out in a row.
CHAR_WIDTH = 6.6


@dataclass(frozen=True)
class Style:
    stroke: str
    dash: str
    #: Marker fill; ``None`` draws a hollow marker filled with the page background.
    fill: str | None
    radius: float


#: Series styles by key. Colours go through CSS so they follow the theme's scheme.
STYLES = {
    "primary": Style("var(--md-primary-fg-color, #009485)", "", "solid", 4.0),
    "accent": Style("var(--md-accent-fg-color, #e65100)", "7 4", None, 4.0),
    "text": Style("currentColor", "2 4", "solid", 3.0),
}
BACKGROUND = "var(--md-default-bg-color, #fff)"


@dataclass(frozen=True)
class Series:
    """One line: a label, a style key from :data:`STYLES` and (files, ms) points."""

    key: str
    label: str
    style: str
    points: Sequence[tuple[int, float]]


@dataclass(frozen=True)
class Goal:
    """A target: at most ``ms`` at ``files``; drawn as a short bar with a label."""

    files: int
    ms: float


def size_label(files: int) -> str:
    """2000 -> "2k", 1500 -> "1.5k", 1000000 -> "1M", 500 -> "500"."""
    for limit, suffix in ((1_000_000, "M"), (1_000, "k")):
        if files >= limit:
            return f"{files / limit:.4g}{suffix}"
    return str(files)


def ms_label(ms: float) -> str:
    return f"{ms:g} ms"


def number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


class LogScale:
    """Maps values in [low, high] (both > 0) onto [start, end] logarithmically."""

    def __init__(self, low: float, high: float, start: float, end: float) -> None:
        self.low, self.high = math.log10(low), math.log10(high)
        self.start, self.end = start, end

    def __call__(self, value: float) -> float:
        share = (math.log10(value) - self.low) / (self.high - self.low)
        return self.start + share * (self.end - self.start)


def value_ticks(low: float, high: float) -> list[float]:
    """1, 10, 100 ... covering [low, high]; with 2 and 5 between when there are few decades."""
    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    steps = (1, 2, 5) if last - first <= 2 else (1,)
    ticks = [step * 10.0**power for power in range(first, last + 1) for step in steps]
    return [tick for tick in ticks if low * 0.999 <= tick <= high * 1.001]


def latency_chart(
    series: Sequence[Series],
    goals: Sequence[Goal] = (),
    *,
    title: str,
    description: str,
) -> str:
    """The chart as one ``<svg>`` element (no blank lines). Points at or below 0 are left
    out, since a logarithmic axis cannot place them."""
    plotted = [
        Series(s.key, s.label, s.style, [(x, y) for x, y in s.points if x > 0 and y > 0])
        for s in series
    ]
    plotted = [s for s in plotted if s.points]
    xs = sorted({x for s in plotted for x, _ in s.points} | {g.files for g in goals})
    ys = [y for s in plotted for _, y in s.points] + [g.ms for g in goals]
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="arms-doc-chart" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
        'aria-labelledby="latency-chart-title latency-chart-desc" '
        'style="max-width: 100%; height: auto" '
        'font-family="inherit" font-size="12" fill="currentColor">',
        f'<title id="latency-chart-title">{escape(title)}</title>',
        f'<desc id="latency-chart-desc">{escape(description)}</desc>',
    ]
    if not xs or not ys:
        out.append(
            f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle">No latency measured'
            "</text>"
        )
        out.append("</svg>")
        return "\n".join(out)
    x_low, x_high = (xs[0] / 1.3, xs[-1] * 1.3) if len(xs) > 1 else (xs[0] / 2, xs[0] * 2)
    y_low = 10.0 ** math.floor(math.log10(min(ys)))
    y_high = 10.0 ** math.ceil(math.log10(max(ys)))
    if y_high <= y_low:
        y_high = y_low * 10
    x_at = LogScale(x_low, x_high, LEFT, RIGHT)
    y_at = LogScale(y_low, y_high, BOTTOM, TOP)
    out.extend(axes(xs, value_ticks(y_low, y_high), x_at, y_at))
    for goal in goals:
        x, y = x_at(goal.files), y_at(goal.ms)
        right = x > (LEFT + RIGHT) / 2  # label on the side with room
        out.append(
            f'<g class="goal" data-files="{goal.files}" data-ms="{goal.ms:g}">'
            f"<title>target: at most {escape(ms_label(goal.ms))} at "
            f"{goal.files:,} files</title>"
            f'<line x1="{number(x - 14)}" y1="{number(y)}" x2="{number(x + 14)}" '
            f'y2="{number(y)}" stroke="currentColor" stroke-width="2" stroke-opacity="0.6"/>'
            f'<text x="{number(x - 18 if right else x + 18)}" y="{number(y + 4)}" '
            f'text-anchor="{"end" if right else "start"}" font-size="11" fill-opacity="0.8">'
            f"target ≤ {escape(ms_label(goal.ms))}</text></g>"
        )
    for line in plotted:
        out.extend(series_svg(line, x_at, y_at))
    out.extend(legend(plotted, bool(goals)))
    out.append("</svg>")
    return "\n".join(out)


def axes(xs: list[int], y_ticks: list[float], x_at: LogScale, y_at: LogScale) -> list[str]:
    out = ['<g class="axes">']
    for tick in y_ticks:
        y = number(y_at(tick))
        out.append(
            f'<line x1="{LEFT}" y1="{y}" x2="{RIGHT}" y2="{y}" stroke="currentColor" '
            'stroke-opacity="0.15"/>'
        )
        out.append(
            f'<text x="{LEFT - 8}" y="{number(y_at(tick) + 4)}" text-anchor="end">'
            f"{escape(ms_label(tick))}</text>"
        )
    for files in xs:
        x = number(x_at(files))
        out.append(
            f'<line x1="{x}" y1="{BOTTOM}" x2="{x}" y2="{BOTTOM + 5}" stroke="currentColor"/>'
        )
        out.append(
            f'<text x="{x}" y="{BOTTOM + 19}" text-anchor="middle">{size_label(files)}</text>'
        )
    out.append(
        f'<path d="M{LEFT} {TOP}V{BOTTOM}H{RIGHT}" fill="none" stroke="currentColor" '
        'stroke-opacity="0.6"/>'
    )
    out.append(
        f'<text x="{(LEFT + RIGHT) / 2}" y="{BOTTOM + 40}" text-anchor="middle">'
        "files in the store (log scale)</text>"
    )
    out.append(
        f'<text transform="translate(14 {(TOP + BOTTOM) / 2}) rotate(-90)" '
        'text-anchor="middle">p50 latency (log scale)</text>'
    )
    out.append("</g>")
    return out


def series_svg(line: Series, x_at: LogScale, y_at: LogScale) -> list[str]:
    style = STYLES[line.style]
    points = sorted(line.points)
    coords = [(x_at(x), y_at(y)) for x, y in points]
    out = [f'<g class="series" data-series="{escape(line.key)}">']
    if len(coords) > 1:
        path = " ".join(f"{number(x)},{number(y)}" for x, y in coords)
        dash = f' stroke-dasharray="{style.dash}"' if style.dash else ""
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{style.stroke}" '
            f'stroke-width="2"{dash}/>'
        )
    fill = style.stroke if style.fill else BACKGROUND
    for (files, ms), (x, y) in zip(points, coords, strict=True):
        out.append(
            f'<circle class="point" data-series="{escape(line.key)}" data-files="{files}" '
            f'data-ms="{ms:g}" cx="{number(x)}" cy="{number(y)}" r="{style.radius:g}" '
            f'fill="{fill}" stroke="{style.stroke}" stroke-width="2">'
            f"<title>{escape(line.label)}: {ms:g} ms at {files:,} files</title></circle>"
        )
    out.append("</g>")
    return out


def legend(plotted: list[Series], goals: bool) -> list[str]:
    """One row under the plot: a line sample with its marker, then the label, per series."""
    out = ['<g class="legend">']
    x = float(LEFT)
    y = LEGEND_Y
    for line in plotted:
        style = STYLES[line.style]
        dash = f' stroke-dasharray="{style.dash}"' if style.dash else ""
        fill = style.stroke if style.fill else BACKGROUND
        out.append(
            f'<line x1="{number(x)}" y1="{y}" x2="{number(x + 28)}" y2="{y}" '
            f'stroke="{style.stroke}" stroke-width="2"{dash}/>'
            f'<circle cx="{number(x + 14)}" cy="{y}" r="{style.radius:g}" fill="{fill}" '
            f'stroke="{style.stroke}" stroke-width="2"/>'
            f'<text x="{number(x + 36)}" y="{y + 4}">{escape(line.label)}</text>'
        )
        x += 36 + CHAR_WIDTH * len(line.label) + 20
    if goals:
        out.append(
            f'<line x1="{number(x)}" y1="{y}" x2="{number(x + 28)}" y2="{y}" '
            'stroke="currentColor" stroke-width="2" stroke-opacity="0.6"/>'
            f'<text x="{number(x + 36)}" y="{y + 4}">fused p50 target</text>'
        )
    out.append("</g>")
    return out
