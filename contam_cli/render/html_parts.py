"""HTML building blocks for :mod:`contam_cli.render.html`: escaping, elements, highlighted text,
numbers, and where in an example its leaked span sits.

Everything that reaches the page from a report goes through :func:`esc` (or :func:`highlight`,
which escapes too), so an id or a text holding ``<script>`` shows as text and never runs.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from contam_cli.engine.evidence import Evidence
from contam_cli.report import ExampleResult, Report
from contam_cli.text import DEFAULT_NORM, NormConfig, token_range

__all__ = [
    "MAX_TEXT",
    "el",
    "esc",
    "eval_span",
    "excerpt",
    "fmt_num",
    "highlight",
    "norm_config",
    "short_hash",
    "sort_value",
    "void",
]

#: Characters of an eval or corpus text shown at most; longer texts are cut around the span.
MAX_TEXT = 4000
# NOTE: characters HTML5 calls parse errors (C0 and C1 controls but tab, newline, return),
# lone surrogates (which cannot be encoded as UTF-8 at all) and the non-characters. Each is
# replaced by one U+FFFD, so character offsets into the text stay true.
_NOT_HTML = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]"
)


def esc(value: object) -> str:
    """`value` as text for HTML content or a double-quoted attribute.

    >>> esc('<script>alert("x")</script> & \\x00')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; \\ufffd'
    """
    return html.escape(_NOT_HTML.sub("\ufffd", str(value)), quote=True)


def el(tag: str, content: str = "", /, **attrs: object) -> str:
    """An element around `content` (already HTML); ``a_b`` names the attribute ``a-b``, a
    trailing ``_`` is dropped (``class_``), None and False leave an attribute out, True writes it
    bare.

    >>> el("td", "1", class_="num", data_v=1.5, hidden=False)
    '<td class="num" data-v="1.5">1</td>'
    """
    parts = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        parts.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return f"<{tag}{''.join(parts)}>{content}</{tag}>"


def void(tag: str, /, **attrs: object) -> str:
    """A void element (no content, no end tag), attributes as for :func:`el`.

    >>> void("input", type="checkbox", id="x", checked=True)
    '<input type="checkbox" id="x" checked>'
    """
    return el(tag, **attrs)[: -len(f"></{tag}>")] + ">"


def highlight(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """Escaped `text` with each of `spans` (character offsets, sorted, not overlapping) in
    ``<mark>``.

    >>> highlight("a <b> c", [(2, 5)])
    'a <mark>&lt;b&gt;</mark> c'
    """
    out, done = [], 0
    for a, b in spans:
        a, b = max(a, done), min(b, len(text))
        if a >= b:
            continue
        out += [esc(text[done:a]), "<mark>", esc(text[a:b]), "</mark>"]
        done = b
    out.append(esc(text[done:]))
    return "".join(out)


def excerpt(text: str, span: tuple[int, int] | None, limit: int = MAX_TEXT) -> tuple[int, int]:
    """The part ``[start, stop)`` of `text` to show: all of it when it fits in `limit`
    characters, else a window that starts shortly before `span` (or at the start).

    >>> excerpt("x" * 10, (2, 4), limit=20)
    (0, 10)
    >>> excerpt("x" * 100, (50, 60), limit=20)
    (45, 65)
    """
    if len(text) <= limit:
        return 0, len(text)
    a = 0 if span is None else max(0, span[0] - limit // 4)
    return a, min(len(text), a + limit)


def norm_config(report: Report) -> NormConfig:
    """The normalization the report's tokens were made with (the default when it says none)."""
    norm = report.config.get("normalization")
    if not isinstance(norm, Mapping):
        return DEFAULT_NORM
    return NormConfig(
        nfkc=norm.get("unicode", "NFKC") == "NFKC", casefold=bool(norm.get("casefold", True))
    )


def eval_span(e: ExampleResult, norm: NormConfig) -> tuple[int, int] | None:
    """Character offsets of the leaked span (the evidence's tokens) in the example's text;
    None without a text or evidence, or when the text has fewer tokens than the evidence says
    (it is not the text that was scanned)."""
    ev: Evidence | None = e.evidence
    if e.text is None or ev is None or ev.length <= 0:
        return None
    try:
        return token_range(e.text, ev.eval_token, ev.eval_token + ev.length - 1, norm)
    except IndexError:
        return None


def fmt_num(value: float | None, integer: bool = False) -> str:
    """A score for people: whole numbers as such, 3 decimals below 100, 1 from there on.

    >>> [fmt_num(v) for v in (None, 0.28571, 1.0, 12345.678, 1e-7)]
    ['–', '0.286', '1.000', '12,345.7', '1.000e-07']
    >>> fmt_num(23.0, integer=True)
    '23'
    """
    if value is None or not math.isfinite(value):
        return "–"
    if integer:
        return f"{int(value):,}"
    a = abs(value)
    if a != 0 and (a < 1e-3 or a >= 1e9):
        return f"{value:.3e}"
    return f"{value:,.1f}" if a >= 100 else f"{value:.3f}"


def sort_value(value: Any) -> str:
    """The ``data-v`` sort key of a cell: numbers exactly (``repr``), strings as they are,
    None (and NaN) empty, which the page's script sorts last.

    >>> [sort_value(v) for v in (0.1, 3, None, float("nan"), "q1")]
    ['0.1', '3', '', '', 'q1']
    """
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(value) if isinstance(value, (int, float)) else str(value)


def short_hash(digest: object, n: int = 12) -> str:
    """The first `n` characters of a hex digest (``–`` when there is none)."""
    return "–" if not digest else str(digest)[:n]
