"""Small inline SVG charts (grouped horizontal bars, line charts) with no outside resources."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563")


def _fmt(v: float) -> str:
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}"


def _legend(names: Sequence[str], x: float, y: float) -> list[str]:
    out = []
    for i, name in enumerate(names):
        yy = y + i * 16
        color = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x:.1f}" y="{yy - 9:.1f}" width="10" height="10" fill="{color}"/>')
        out.append(f'<text x="{x + 14:.1f}" y="{yy:.1f}" class="legend">{escape(name)}</text>')
    return out


def bar_chart(
    categories: Sequence[str], series: Mapping[str, Sequence[float]], *, chart_id: str, title: str, width: int = 720
) -> str:
    """Grouped horizontal bars: one group per category, one bar per series, value printed at the end."""
    names = list(series)
    if any(len(v) != len(categories) for v in series.values()):
        raise ValueError("bar_chart: every series needs one value per category")
    bar, gap, left, right, top = 14, 10, 230, 60, 30
    group = bar * max(1, len(names)) + gap
    height = top + group * max(1, len(categories)) + 16 * len(names) + 20
    biggest = max([v for vs in series.values() for v in vs] + [1])
    scale = (width - left - right) / biggest
    parts = [
        f'<svg id="{escape(chart_id)}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="8" y="18" class="title">{escape(title)}</text>',
    ]
    for ci, cat in enumerate(categories):
        y0 = top + ci * group
        parts.append(
            f'<text x="{left - 8}" y="{y0 + group / 2:.1f}" class="axis" text-anchor="end">{escape(cat)}</text>'
        )
        for si, name in enumerate(names):
            v = float(series[name][ci])
            y = y0 + si * bar
            w = max(v * scale, 1.0)
            color = PALETTE[si % len(PALETTE)]
            parts.append(
                f'<rect class="bar" x="{left}" y="{y:.1f}" width="{w:.1f}" height="{bar - 2}" fill="{color}">'
                f"<title>{escape(cat)} / {escape(name)}: {_fmt(v)}</title></rect>"
            )
            parts.append(f'<text x="{left + w + 4:.1f}" y="{y + bar - 4:.1f}" class="value">{_fmt(v)}</text>')
    parts += _legend(names, left, top + group * max(1, len(categories)) + 12)
    parts.append("</svg>")
    return "\n".join(parts)


def line_chart(
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    chart_id: str,
    title: str,
    x_label: str,
    y_label: str,
    y_max: float | None = 1.0,
    width: int = 720,
    height: int = 360,
) -> str:
    """Lines with point markers; x and y axes with four ticks each."""
    left, right, top, bottom = 56, 150, 30, 46
    xs = [x for pts in series.values() for x, _ in pts] or [0.0, 1.0]
    ys = [y for pts in series.values() for _, y in pts] or [0.0, 1.0]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi == x_lo:
        x_hi = x_lo + 1
    y_hi = y_max if y_max is not None else max(ys) or 1.0
    pw, ph = width - left - right, height - top - bottom
    int_x = all(float(x).is_integer() for x in xs)

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * pw

    def py(y: float) -> float:
        return top + ph - (y / y_hi) * ph

    parts = [
        f'<svg id="{escape(chart_id)}" class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="8" y="18" class="title">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" class="axisline"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph}" class="axisline"/>',
    ]
    for i in range(5):
        yv = y_hi * i / 4
        xv = x_lo + (x_hi - x_lo) * i / 4
        xv = float(round(xv)) if int_x or x_hi - x_lo >= 10 else xv
        parts.append(f'<text x="{left - 6}" y="{py(yv) + 4:.1f}" class="axis" text-anchor="end">{_fmt(yv)}</text>')
        parts.append(f'<line x1="{left}" y1="{py(yv):.1f}" x2="{left + pw}" y2="{py(yv):.1f}" class="grid"/>')
        parts.append(f'<text x="{px(xv):.1f}" y="{top + ph + 16}" class="axis" text-anchor="middle">{_fmt(xv)}</text>')
    parts.append(
        f'<text x="{left + pw / 2:.1f}" y="{height - 8}" class="axis" text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text x="14" y="{top + ph / 2:.1f}" class="axis" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + ph / 2:.1f})">{escape(y_label)}</text>'
    )
    for si, (name, pts) in enumerate(series.items()):
        color = PALETTE[si % len(PALETTE)]
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        if len(pts) > 1:
            parts.append(f'<polyline class="line" points="{coords}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in pts:
            parts.append(
                f'<circle class="point" cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}">'
                f"<title>{escape(name)}: ({_fmt(x)}, {y:.3f})</title></circle>"
            )
    parts += _legend(list(series), left + pw + 12, top + 10)
    parts.append("</svg>")
    return "\n".join(parts)


__all__ = ["PALETTE", "bar_chart", "line_chart"]
