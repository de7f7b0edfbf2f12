"""SVG building blocks for :mod:`contam_cli.render.svg`: the plot frame, axes, legend, elements,
numbers and escaping, deterministic to the byte."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape

import numpy as np
from numpy.typing import ArrayLike

WIDTH, HEIGHT = 480, 300
LEFT, RIGHT, TOP, BOTTOM = 60, 16, 34, 46
# NOTE: Okabe and Ito's "Color Universal Design" palette, distinct under common colour blindness.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
DASHES = ("", "6 3", "2 2", "8 3 2 3", "1 3", "10 4", "4 2 1 2")
INK, GRID, MUTED = "#222222", "#dddddd", "#888888"
HEAD = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}"'
    ' role="img" aria-labelledby="{uid}-t {uid}-d" font-family="sans-serif" font-size="11"'
    ' fill="{ink}">'
)
# NOTE: characters that XML 1.0 forbids (C0 controls, surrogates, U+FFFE/F) make a file unparsable.
NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True, slots=True)
class Frame:
    """Data ranges of the plot area, its top edge in pixels, and the mapping from data to pixels."""

    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float
    top: float = TOP

    def px(self, x: ArrayLike) -> np.ndarray:
        share = (np.asarray(x, dtype=np.float64) - self.x_lo) / (self.x_hi - self.x_lo)
        return LEFT + share * (WIDTH - LEFT - RIGHT)

    def py(self, y: ArrayLike) -> np.ndarray:
        share = (np.asarray(y, dtype=np.float64) - self.y_lo) / (self.y_hi - self.y_lo)
        return HEIGHT - BOTTOM - share * (HEIGHT - BOTTOM - self.top)


def document(title: str, desc: str, body: list[str], *, empty: bool = False) -> str:
    digest = hashlib.sha1("\n".join([title, desc, *body]).encode("utf-8", "replace")).hexdigest()
    uid = "c" + digest[:10]
    middle = (LEFT + WIDTH - RIGHT) / 2
    lines = [
        HEAD.format(w=WIDTH, h=HEIGHT, uid=uid, ink=INK),
        el("title", title, id=f"{uid}-t"),
        el("desc", desc, id=f"{uid}-d"),
        el("rect", width=WIDTH, height=HEIGHT, fill="#ffffff"),
        text(WIDTH / 2, 20, clip(title, 60), anchor="middle", font_size=14, font_weight="bold"),
        *body,
        *([text(middle, HEIGHT / 2, "no data", anchor="middle", fill=MUTED)] if empty else []),
        "</svg>",
    ]
    return "\n".join(lines) + "\n"


def axes(frame: Frame, x_label: str, y_label: str, *, x_ticks: bool = True) -> list[str]:
    left, right, bottom, top = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, num(frame.top)
    out = []
    for value, label in ticks(frame.y_lo, frame.y_hi):
        y = float(frame.py(value))
        out.append(el("path", d=f"M{left} {num(y)}H{right}", stroke=GRID))
        out.append(text(left - 5, y + 4, label, anchor="end"))
    for value, label in ticks(frame.x_lo, frame.x_hi) if x_ticks else []:
        x = float(frame.px(value))
        out.append(el("path", d=f"M{num(x)} {bottom}v4", stroke=INK))
        out.append(text(x, bottom + 15, label, anchor="middle"))
    out.append(el("path", d=f"M{left} {top}V{bottom}H{right}", fill="none", stroke=INK))
    if x_label:
        out.append(text((left + right) / 2, HEIGHT - 8, x_label, anchor="middle", font_size=12))
    if y_label:
        mid = (frame.top + bottom) / 2
        turn = f"rotate(-90 16 {num(mid)})"
        out.append(text(16, mid, y_label, anchor="middle", font_size=12, transform=turn))
    return out


def legend(items: list[tuple[str, int, str]]) -> tuple[list[str], float]:
    """Legend rows under the title, and the top of the plot area below them.

    Each item is (swatch: ``box``, ``line`` or ``dot``; series index, -1 for a guide line; text).
    """
    out: list[str] = []
    x, y = float(LEFT), TOP + 4.0
    for kind, i, label in items:
        width = 34 + 6.2 * len(label)
        if x > LEFT and x + width > WIDTH - RIGHT:
            x, y = float(LEFT), y + 15
        out += [swatch(kind, i, x, y), text(x + 20, y + 4, label)]
        x += width
    return out, (y + 14 if items else float(TOP))


def swatch(kind: str, i: int, x: float, y: float) -> str:
    if kind == "box":
        return el("rect", x=x, y=y - 5, width=14, height=10, **fill(i))
    if kind == "dot":
        return marker(i, x + 7, y, 4.5)
    return el("path", d=f"M{num(x)} {num(y)}h16", **stroke(i, 2))


def marker(i: int, cx: float, cy: float, r: float) -> str:
    """Series ``i``'s marker: a circle, or a square for odd series."""
    if i % 2:
        return el("rect", x=cx - r, y=cy - r, width=2 * r, height=2 * r, fill=colour(i))
    return el("circle", cx=cx, cy=cy, r=r, fill=colour(i))


def stroke(i: int, width: float) -> dict[str, object]:
    """Colour, width and dash pattern of series ``i``'s lines; -1: a grey dashed guide line."""
    if i < 0:
        return {"stroke": MUTED, "stroke_width": width, "stroke_dasharray": "4 4"}
    dash = DASHES[i % len(DASHES)]
    return {"stroke": colour(i), "stroke_width": width, "stroke_dasharray": dash}


def fill(i: int) -> dict[str, object]:
    """Translucent fill and outline of series ``i``'s areas."""
    return {"fill": colour(i), "fill_opacity": 0.25, **stroke(i, 1.5)}


def el(tag: str, text: str | None = None, /, **attrs: object) -> str:
    """An element; ``a_b`` names the attribute ``a-b``; empty attributes are left out."""
    parts = "".join(f' {k.replace("_", "-")}="{value(v)}"' for k, v in attrs.items() if v != "")
    return f"<{tag}{parts}/>" if text is None else f"<{tag}{parts}>{esc(text)}</{tag}>"


def text(x: float, y: float, text: str, *, anchor: str = "start", **attrs: object) -> str:
    return el("text", text, x=x, y=y, text_anchor="" if anchor == "start" else anchor, **attrs)


def ticks(lo: float, hi: float, count: int = 5) -> list[tuple[float, str]]:
    """Round tick values (1, 2 or 5 times a power of ten) within [lo, hi], with their labels."""
    span = hi - lo
    if not (math.isfinite(span) and span > 0):
        return []
    raw = span / count
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    out = []
    for k in range(first, last + 1):
        value = k * step
        label = f"{value:.3g}" if step >= 1e5 or decimals > 4 else f"{value:.{decimals}f}"
        out.append((value, "0" if k == 0 else label))
    return out


def span(values: np.ndarray, *, pad: float = 0.0) -> tuple[float, float]:
    """Finite range of ``values`` widened by ``pad`` of itself; (0, 1) when empty, +-0.5 if flat."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:
        half = max(0.5, abs(lo) * 0.05)
        return lo - half, hi + half
    margin = (hi - lo) * pad
    return lo - margin, hi + margin


def positive(name: str, value: int) -> int:
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


def sample(codes: np.ndarray, groups: int, budget: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Group sizes, and per group the points to draw: small groups all, large ones a fair share.

    Water-filling: groups in increasing size each take all their points or an equal share of what
    the smaller groups left, whichever is less; a group cut down is sampled with a fixed seed.
    """
    sizes = np.bincount(codes, minlength=groups)
    quotas = np.zeros(groups, dtype=np.int64)
    remaining = budget
    for rank, i in enumerate(np.argsort(sizes, kind="stable")):
        quotas[i] = min(int(sizes[i]), remaining // (groups - rank))
        remaining -= int(quotas[i])
    rng = np.random.default_rng(0)
    picks = [np.flatnonzero(codes == i) for i in range(groups)]
    return sizes, [
        idx if q >= idx.size else np.sort(rng.choice(idx, size=int(q), replace=False))
        for idx, q in zip(picks, quotas)
    ]


def thin(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates snapped to a half-pixel grid, consecutive repeats dropped."""
    qx, qy = np.round(xs * 2) / 2, np.round(ys * 2) / 2
    keep = np.ones(qx.size, dtype=bool)
    keep[1:] = (np.diff(qx) != 0) | (np.diff(qy) != 0)
    return qx[keep], qy[keep]


def path(xs: np.ndarray, ys: np.ndarray) -> str:
    points = [f"{a} {b}" for a, b in zip(nums(xs), nums(ys))]
    return "M" + "L".join(points) if points else ""


def series_names(series: Sequence[str] | None, *rows: np.ndarray) -> list[str]:
    """Names of the rows of values (checked to match their lows and highs)."""
    if len({r.shape for r in rows}) > 1:
        raise ValueError("values, lows and highs must have the same shape")
    n = len(rows[0])
    names = [f"series {k + 1}" for k in range(n)] if series is None else [str(s) for s in series]
    if len(names) != n:
        raise ValueError(f"{len(names)} series names for {n} rows of values")
    return names


def rows(values: ArrayLike, n: int) -> np.ndarray:
    """One row per series of ``n`` values each."""
    out = np.array(values, dtype=np.float64)
    out = out.reshape(1, -1) if out.ndim <= 1 else out
    if out.ndim != 2 or out.shape[1] != n:
        raise ValueError(f"expected {n} values per series, got shape {out.shape}")
    return out


def floats(values: ArrayLike, *, finite: bool = False) -> np.ndarray:
    out = np.array(values, dtype=np.float64).reshape(-1)
    return out[np.isfinite(out)] if finite else out


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def value(v: object) -> str:
    return num(v) if isinstance(v, float) else esc(v)


def num(v: float) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def nums(values: np.ndarray) -> list[str]:
    return [num(v) for v in np.asarray(values, dtype=np.float64).tolist()]


def fmt(value: float | None, spec: str = ".3g") -> str:
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)


def clip(text: str, max_chars: float) -> str:
    limit = max(2, int(max_chars))
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def esc(text: object) -> str:
    return escape(NOT_XML.sub("\ufffd", str(text)), {'"': "&quot;"})
