"""Static SVG charts (histogram, ROC curves, scatter, intervals): arrays in, one SVG document out.

The output is self-contained (no script, font, image or link), so it can be inlined in HTML or
Markdown or attached to a CI run, and deterministic: coordinates are rounded to 2 decimals, sampling
is seeded and element ids come from the content, so the same input gives the same bytes. Colours are
the Okabe-Ito palette (blue and orange first), which colour-blind readers can tell apart, and series
also differ by dash pattern or marker shape. Each chart has a ``<title>`` and a ``<desc>`` that says
in words what it shows; the legend sits above the plot, never over the data. Non-finite values are
left out of every chart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from contam_cli.render import svg_parts as p

__all__ = ["histogram", "interval_plot", "roc_curves", "scatter"]


def histogram(
    groups: Mapping[str, ArrayLike],
    *,
    bins: int = 30,
    title: str,
    x_label: str,
    normalize: bool = False,
) -> str:
    """Overlaid distributions over shared bins, e.g. the scores of flagged and other examples.

    ``normalize`` plots each group's share of its own values per bin, so a small group stays
    visible beside a large one.
    """
    data = {str(name): p.floats(values, finite=True) for name, values in groups.items()}
    lo, hi = p.span(np.concatenate([np.zeros(0), *data.values()]))
    edges = np.linspace(lo, hi, p.positive("bins", bins) + 1)
    heights = [
        np.histogram(v, edges)[0] / (max(1, v.size) if normalize else 1) for v in data.values()
    ]
    top = max((float(h.max()) for h in heights), default=0.0)
    legend, plot_top = p.legend(
        [("box", i, f"{k} (n={v.size:,})") for i, (k, v) in enumerate(data.items())]
    )
    frame = p.Frame(lo, hi, 0.0, top * 1.05 if top > 0 else 1.0, plot_top)
    body = p.axes(frame, x_label, "share of group" if normalize else "count") + legend
    for i, h in enumerate(heights):
        ys = np.concatenate([[0.0], np.repeat(h, 2), [0.0]])
        body.append(
            p.el("path", d=p.path(frame.px(np.repeat(edges, 2)), frame.py(ys)) + "Z", **p.fill(i))
        )
    desc = f"Histogram of {x_label} in {int(bins)} bins. " + "; ".join(
        f"{name}: {v.size:,} values, median {p.fmt(float(np.median(v)) if v.size else None)}"
        for name, v in data.items()
    )
    return p.document(title, desc, body, empty=not any(v.size for v in data.values()))


def roc_curves(
    curves: Mapping[str, tuple[ArrayLike, ArrayLike, float | None]], *, title: str
) -> str:
    """One ROC line per method with its AUC in the legend, over the dashed chance diagonal."""
    labels = [f"{name} (AUC {p.fmt(area, '.3f')})" for name, (_, _, area) in curves.items()]
    legend, plot_top = p.legend(
        [*(("line", i, s) for i, s in enumerate(labels)), ("line", -1, "chance")]
    )
    frame = p.Frame(0.0, 1.0, 0.0, 1.0, plot_top)
    body = p.axes(frame, "false positive rate", "true positive rate") + legend
    diagonal = p.path(frame.px([0.0, 1.0]), frame.py([0.0, 1.0]))
    body.append(p.el("path", d=diagonal, fill="none", **p.stroke(-1, 1)))
    for i, (name, (fpr, tpr, _)) in enumerate(curves.items()):
        f, t = p.floats(fpr), p.floats(tpr)
        if f.shape != t.shape:
            raise ValueError(f"ROC curve {name!r}: {f.size} fpr values but {t.size} tpr values")
        keep = np.isfinite(f) & np.isfinite(t)
        xs, ys = p.thin(frame.px(np.clip(f[keep], 0, 1)), frame.py(np.clip(t[keep], 0, 1)))
        if xs.size:
            d = p.path(xs, ys)
            body.append(p.el("path", d=d, fill="none", stroke_linejoin="round", **p.stroke(i, 2)))
    methods = "; ".join(labels) or "no method"
    desc = f"ROC curves, true against false positive rate: {methods}. Dashed diagonal: chance."
    return p.document(title, desc, body)


def scatter(
    x: ArrayLike,
    y: ArrayLike,
    groups: ArrayLike,
    *,
    title: str,
    x_label: str,
    y_label: str,
    max_points: int = 5000,
) -> str:
    """Points coloured by group (e.g. ``np.where(flagged, "flagged", "not flagged")``).

    Above ``max_points`` the points are sampled with a fixed seed, a group keeping all its points
    when it fits its fair share of the budget, so a small group is never thinned for a large one;
    the legend says how many were drawn. Groups are drawn largest first, the smaller ones on top.
    """
    xs, ys, g = p.floats(x), p.floats(y), np.asarray(groups).reshape(-1)
    if not xs.shape == ys.shape == g.shape:
        raise ValueError(f"x, y and groups differ in length: {xs.size}, {ys.size}, {g.size}")
    keep = np.isfinite(xs) & np.isfinite(ys)
    xs, ys = xs[keep], ys[keep]
    names, codes = np.unique(g[keep], return_inverse=True)
    sizes, picks = p.sample(codes.reshape(-1), names.size, p.positive("max_points", max_points))
    labels = [
        f"{name} (n={int(n):,}" + (f", {p.size:,} drawn)" if p.size < n else ")")
        for name, n, p in zip(names.tolist(), sizes, picks)
    ]
    legend, plot_top = p.legend([("dot", i, label) for i, label in enumerate(labels)])
    frame = p.Frame(*p.span(xs, pad=0.04), *p.span(ys, pad=0.06), plot_top)
    body = p.axes(frame, x_label, y_label) + legend
    for i in sorted(range(names.size), key=lambda k: (-sizes[k], k)):
        px, py = p.nums(frame.px(xs[picks[i]])), p.nums(frame.py(ys[picks[i]]))
        # NOTE: a zero-length segment with a round or square cap draws a dot: ~15 bytes a point.
        dots = "".join(f"M{a} {b}h0" for a, b in zip(px, py))
        caps = "square" if i % 2 else "round"
        style = {"stroke_width": 4.5, "stroke_opacity": 0.7, "stroke_linecap": caps}
        body.append(p.el("path", d=dots, stroke=p.colour(i), **style))
    desc = f"Scatter plot of {y_label} against {x_label}: " + "; ".join(labels or ["no points"])
    return p.document(title, desc + ".", body, empty=not names.size)


def interval_plot(
    labels: Sequence[str],
    values: ArrayLike,
    lows: ArrayLike,
    highs: ArrayLike,
    *,
    title: str,
    y_label: str,
    series: Sequence[str] | None = None,
    reference: float | None = None,
) -> str:
    """A value with its interval per category, e.g. scores by strictness level.

    ``values``, ``lows`` and ``highs`` hold one entry per label, or one row per series (e.g. clean
    and dirty) of one entry per label; ``reference`` draws a dashed line (e.g. at 0).
    """
    names = [str(label) for label in labels]
    v, lo, hi = (p.rows(a, len(names)) for a in (values, lows, highs))
    tags = p.series_names(series, v, lo, hi)
    shown = series is not None or len(v) > 1
    legend, plot_top = p.legend([("dot", k, tag) for k, tag in enumerate(tags)] if shown else [])
    extra = [] if reference is None else [float(reference)]
    y_range = p.span(np.concatenate([v.ravel(), lo.ravel(), hi.ravel(), extra]), pad=0.08)
    frame = p.Frame(0.0, float(max(1, len(names))), *y_range, plot_top)
    body = p.axes(frame, "", y_label, x_ticks=False) + legend + _categories(frame, names)
    if reference is not None:
        d = p.path(frame.px([0.0, frame.x_hi]), frame.py([reference, reference]))
        body.append(p.el("path", d=d, **p.stroke(-1, 1)))
    step = min(14.0, 0.6 * (p.WIDTH - p.LEFT - p.RIGHT) / max(1, len(names)) / len(v))
    entries = []
    for k, tag in enumerate(tags):
        for j, name in enumerate(names):
            cx = float(frame.px(j + 0.5)) + (k - (len(v) - 1) / 2) * step
            text = f"{name}, {tag}: {p.fmt(v[k, j])} [{p.fmt(lo[k, j])}, {p.fmt(hi[k, j])}]"
            body.append(_interval(frame, cx, k, text, (v[k, j], lo[k, j], hi[k, j])))
            entries.append(text)
    desc = f"{y_label}, a value with its interval per category: " + ("; ".join(entries) or "none")
    return p.document(title, desc + ".", body, empty=not names)


def _categories(frame: p.Frame, names: list[str]) -> list[str]:
    """Category names under their slots, cut to fit (each whisker's title holds the full name)."""
    chars = (p.WIDTH - p.LEFT - p.RIGHT) / max(1, len(names)) / 6.2
    y = p.HEIGHT - p.BOTTOM + 16
    return [
        p.text(float(frame.px(j + 0.5)), y, p.clip(name, chars), anchor="middle")
        for j, name in enumerate(names)
    ]


def _interval(frame: p.Frame, cx: float, k: int, text: str, vlh: tuple[float, float, float]) -> str:
    """One whisker (low to high, with caps) and value marker, titled for screen readers."""
    value, lo, hi = vlh
    parts = [f"<g><title>{p.esc(text)}</title>"]
    if math.isfinite(lo) and math.isfinite(hi):
        (y0, y1), (a, c, b) = p.nums(frame.py([lo, hi])), p.nums(np.array([-5, 0, 5]) + cx)
        d = f"M{c} {y0}V{y1}M{a} {y0}H{b}M{a} {y1}H{b}"
        parts.append(p.el("path", d=d, stroke=p.colour(k), stroke_width=1.5))
    if math.isfinite(value):
        parts.append(p.marker(k, cx, float(frame.py(value)), 4.5))
    return "".join(parts) + "</g>"
