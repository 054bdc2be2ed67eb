"""A two-axis chart (lines, markers, reference lines, a legend) written as SVG text.

The report's figures are a few curves and points: drawing them as SVG takes milliseconds,
where importing matplotlib and rendering PNGs took about two CPU seconds, more than the
whole report may (issue 16). A browser, MLflow's artifact view and LaTeX (via a PDF
converter) all show SVG, and it stays sharp at any size.

Every element a reader needs to check a figure is marked up: tick marks carry their
value (`data-value`), each series its label (`data-label`), each marker a tooltip with
its exact coordinates, and the axes frame is the rect of class `axes`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from html import escape

MIN_WIDTH, HEIGHT = 900, 500
LEFT, TOP, BOTTOM = 80, 40, 55  # margins around the axes, in pixels
AXES_WIDTH = 624  # the legend goes to the right of the axes, the picture widening to fit its labels
LEGEND_GAP, LEGEND_ROW = 16, 18
FONT, CHAR_WIDTH = 12, 7.2  # a sans-serif character at 12 px is at most about this wide, on average
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")
DASHES = {"-": "", "--": "6,3", ":": "1.5,3", "-.": "6,3,1.5,3"}
# marker letter -> (vertices, rotation in degrees, inner radius for stars; 1.0 for a polygon)
SHAPES = {"s": (4, 45, 1.0), "^": (3, 0, 1.0), "v": (3, 180, 1.0), "D": (4, 0, 1.0), "<": (3, 270, 1.0),
          ">": (3, 90, 1.0), "p": (5, 0, 1.0), "X": (4, 45, 0.35), "h": (6, 0, 1.0), "*": (5, 0, 0.45)}


class ScaleKind(StrEnum):
    LINEAR = "linear"
    LOG = "log"


@dataclass(frozen=True)
class Axis:
    label: str  # with its unit in brackets
    kind: ScaleKind = ScaleKind.LINEAR
    limits: tuple[float, float] | None = None  # None: the data's range and a margin


@dataclass(frozen=True)
class Series:
    label: str
    xs: list[float]
    ys: list[float]
    line: str | None = "-"  # a key of DASHES, or None: markers only
    marker: str | None = None  # "o" or a key of SHAPES
    marker_size: float = 4.0  # radius in pixels


@dataclass(frozen=True)
class Chart:
    title: str
    x: Axis
    y: Axis
    series: list[Series]
    x_marks: list[float] = field(default_factory=list)  # vertical reference lines (e.g. speedup 1)
    y_marks: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Scale:
    """Data values to pixels along one axis."""

    kind: ScaleKind
    low: float
    high: float
    start: float  # pixel of low
    end: float  # pixel of high

    def _t(self, v: float) -> float:
        return math.log10(v) if self.kind is ScaleKind.LOG else v

    def pixel(self, v: float) -> float:
        return self.start + (self._t(v) - self._t(self.low)) / (self._t(self.high) - self._t(self.low)) * (self.end - self.start)

    def ticks(self) -> list[float]:
        return log_ticks(self.low, self.high) if self.kind is ScaleKind.LOG else linear_ticks(self.low, self.high)


def linear_ticks(low: float, high: float, target: int = 8) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten apart) inside [low, high]."""
    raw = (high - low) / target
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


def log_ticks(low: float, high: float) -> list[float]:
    """Powers of ten inside [low, high]; 2x and 5x between them where fewer than three fit."""
    for mantissas in ((1,), (1, 2, 5), tuple(range(1, 10))):
        ticks = [float(f"{m}e{e}") for e in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
                 for m in mantissas]
        ticks = [t for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
        if len(ticks) >= 3:
            return ticks
    return ticks


def fitted(values: list[float], kind: ScaleKind, margin: float = 0.05) -> tuple[float, float]:
    """The data's range widened by `margin` of it on each side (in log space on a log axis)."""
    if kind is ScaleKind.LOG:
        low, high = math.log10(min(values)), math.log10(max(values))
        pad = margin * (high - low) if high > low else 0.3
        return 10 ** (low - pad), 10 ** (high + pad)
    low, high = min(values), max(values)
    pad = margin * (high - low) if high > low else (abs(low) / 2 or 1.0)
    return low - pad, high + pad


def tick_text(v: float) -> str:
    if v == int(v) and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:.6g}"


def _marker(shape: str, x: float, y: float, r: float, colour: str, tooltip: str) -> str:
    tip = f"<title>{escape(tooltip)}</title>"
    if shape not in SHAPES:
        return f"<circle cx='{x:.2f}' cy='{y:.2f}' r='{r}' fill='{colour}'>{tip}</circle>"
    vertices, rotation, inner = SHAPES[shape]
    corners = vertices * (2 if inner < 1.0 else 1)
    points = []
    for i in range(corners):
        radius = r * 1.25 * (inner if inner < 1.0 and i % 2 else 1.0)
        angle = math.radians(rotation + 360 * i / corners)
        points.append(f"{x + radius * math.sin(angle):.2f},{y - radius * math.cos(angle):.2f}")
    return f"<polygon points='{' '.join(points)}' fill='{colour}'>{tip}</polygon>"


def _text(x: float, y: float, text: str, anchor: str = "middle", size: int = FONT, extra: str = "") -> str:
    return (f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}'{extra}>"
            f"{escape(text)}</text>")


def render(chart: Chart) -> str:
    """The chart as a standalone SVG document."""
    width_needed = max((len(s.label) for s in chart.series), default=0) * CHAR_WIDTH
    left, top, right = LEFT, TOP, LEFT + AXES_WIDTH
    bottom = HEIGHT - BOTTOM
    width = max(MIN_WIDTH, math.ceil(right + LEGEND_GAP + 36 + width_needed + 10))  # the legend's longest label fits
    height = max(HEIGHT, top + LEGEND_ROW * len(chart.series) + 10)
    xs = [v for s in chart.series for v in s.xs] + chart.x_marks
    ys = [v for s in chart.series for v in s.ys] + chart.y_marks
    sx = Scale(chart.x.kind, *(chart.x.limits or fitted(xs, chart.x.kind)), left, right)
    sy = Scale(chart.y.kind, *(chart.y.limits or fitted(ys, chart.y.kind)), bottom, top)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}'"
           " font-family='DejaVu Sans, Helvetica, Arial, sans-serif'>",
           f"<rect width='{width}' height='{height}' fill='white'/>",
           f"<clipPath id='plot'><rect x='{left}' y='{top}' width='{right - left}' height='{bottom - top}'/></clipPath>"]
    for v in sx.ticks():
        x = sx.pixel(v)
        out.append(f"<line class='grid' x1='{x:.2f}' y1='{top}' x2='{x:.2f}' y2='{bottom}' stroke='#000' stroke-opacity='0.12'/>")
        out.append(f"<line class='tick-x' data-value='{v!r}' x1='{x:.2f}' y1='{bottom}' x2='{x:.2f}' y2='{bottom + 5}' stroke='#000'/>")
        out.append(_text(x, bottom + 18, tick_text(v)))
    for v in sy.ticks():
        y = sy.pixel(v)
        out.append(f"<line class='grid' x1='{left}' y1='{y:.2f}' x2='{right}' y2='{y:.2f}' stroke='#000' stroke-opacity='0.12'/>")
        out.append(f"<line class='tick-y' data-value='{v!r}' x1='{left - 5}' y1='{y:.2f}' x2='{left}' y2='{y:.2f}' stroke='#000'/>")
        out.append(_text(left - 8, y + 4, tick_text(v), anchor="end"))
    for v in chart.x_marks:
        out.append(f"<line class='mark' x1='{sx.pixel(v):.2f}' y1='{top}' x2='{sx.pixel(v):.2f}' y2='{bottom}' stroke='grey' stroke-dasharray='4,3'/>")
    for v in chart.y_marks:
        out.append(f"<line class='mark' x1='{left}' y1='{sy.pixel(v):.2f}' x2='{right}' y2='{sy.pixel(v):.2f}' stroke='grey' stroke-dasharray='4,3'/>")

    out.append("<g clip-path='url(#plot)'>")
    for i, s in enumerate(chart.series):
        colour = COLOURS[i % len(COLOURS)]
        label = escape(s.label, quote=True)
        if s.line is not None:
            points = " ".join(f"{sx.pixel(x):.2f},{sy.pixel(y):.2f}" for x, y in zip(s.xs, s.ys, strict=True))
            dash = f" stroke-dasharray='{DASHES[s.line]}'" if DASHES[s.line] else ""
            out.append(f"<polyline class='series' data-label='{label}' points='{points}' fill='none' stroke='{colour}' stroke-width='1.5'{dash}/>")
        if s.marker is not None:
            out.append(f"<g class='markers' data-label='{label}'>")
            out += [_marker(s.marker, sx.pixel(x), sy.pixel(y), s.marker_size, colour, f"{s.label}: {x:.6g}, {y:.6g}")
                    for x, y in zip(s.xs, s.ys, strict=True)]
            out.append("</g>")
    out.append("</g>")
    out.append(f"<rect class='axes' x='{left}' y='{top}' width='{right - left}' height='{bottom - top}' fill='none' stroke='#000'/>")
    out.append(_text((left + right) / 2, top - 14, chart.title, size=FONT + 2))
    out.append(_text((left + right) / 2, bottom + 40, chart.x.label, extra=" class='x-label'"))
    out.append(_text(18, (top + bottom) / 2, chart.y.label,
                     extra=f" class='y-label' transform='rotate(-90 18 {(top + bottom) / 2:.1f})'"))

    # the legend: beside the axes, so that no label covers data or another label
    out.append("<g class='legend'>")
    for i, s in enumerate(chart.series):
        colour, x, y = COLOURS[i % len(COLOURS)], right + LEGEND_GAP, top + 8 + LEGEND_ROW * i
        entry = [f"<g class='legend-entry' data-label='{escape(s.label, quote=True)}'>"]
        if s.line is not None:
            dash = f" stroke-dasharray='{DASHES[s.line]}'" if DASHES[s.line] else ""
            entry.append(f"<line x1='{x}' y1='{y}' x2='{x + 28}' y2='{y}' stroke='{colour}' stroke-width='1.5'{dash}/>")
        if s.marker is not None:
            entry.append(_marker(s.marker, x + 14, y, s.marker_size, colour, s.label))
        entry.append(_text(x + 36, y + 4, s.label, anchor="start"))
        out.append("".join(entry) + "</g>")
    out.append("</g></svg>")
    return "\n".join(out) + "\n"
