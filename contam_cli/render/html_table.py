"""The HTML report's table of listed examples: rank, id, eval file and line, each method's
score, flag, reasons, and (for the n-gram detector) where the longest run sits in the corpus; the
page's script sorts it by any column and filters it.

Every cell carries its sort key in ``data-v`` (numbers exactly, missing values empty, sorted
last); a header's ``data-type`` says whether its column sorts as numbers and ``data-first`` which
way a first click sorts (a method's most suspicious end first).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import PurePath

import numpy as np

from contam_cli.render.html_examples import card_id, eval_where
from contam_cli.render.html_parts import el, esc, fmt_num, sort_value, void
from contam_cli.render.table import evidence_where
from contam_cli.report import ExampleResult, Report

__all__ = ["TABLE_ROWS", "examples_table", "listed_rows"]

#: Examples listed in the table at most (the JSON report holds every one).
TABLE_ROWS = 1000
HINT = "id, reason, source, path…"


def listed_rows(report: Report, limit: int = TABLE_ROWS) -> tuple[np.ndarray, int]:
    """The examples the table lists (most suspicious first, then the unscorable ones in input
    order), at most `limit`, and how many were scorable among them."""
    ranked = report.ranked_indices()
    unscorable = np.flatnonzero(~report.scorable_mask())
    listed = np.concatenate([ranked, unscorable])[: max(0, limit)]
    return listed, min(len(ranked), len(listed))


def examples_table(
    report: Report, listed: np.ndarray, scorable: int, carded: Collection[int]
) -> str:
    """The section holding the table of `listed` (of which the first `scorable` are ranked);
    ids of `carded` examples link to their cards."""
    n_all = len(report.examples)
    ngram = report.examples.ngram is not None
    shown = report.take(listed) if len(listed) else []
    rows = [
        _row(report, rank + 1 if rank < scorable else None, int(e), r, e in carded, ngram)
        for rank, (e, r) in enumerate(zip(listed.tolist(), shown))
    ]
    note = ""
    if len(listed) < n_all:
        note = el(
            "p",
            f"The {len(listed):,} most suspicious of {n_all:,} examples are listed; the JSON "
            "report holds every one.",
            class_="muted",
        )
    table = el(
        "table",
        el("thead", el("tr", "".join(_heads(report, ngram)))) + el("tbody", "".join(rows)),
        id="examples",
    )
    body = el("h2", "All listed examples") + note + _controls(len(listed))
    return el("section", body + el("div", table, class_="scroll"), id="table")


def _heads(report: Report, ngram: bool) -> list[str]:
    heads = [el("th", _button("rank"), class_="num", data_type="num", data_first="asc")]
    heads += [
        el("th", _button(name, title), data_type="str", data_first="asc")
        for name, title in (("id", None), ("eval", "the eval file and line"))
    ]
    for m in report.methods:
        first = "desc" if m.direction == "higher" else "asc"
        title = f"{m.description} ({m.direction} is more suspicious)".strip()
        button = _button(m.name, title)
        heads.append(el("th", button, class_="num", data_type="num", data_first=first))
    tail: list[tuple[str, str | None]] = [("flag", None), ("reasons", None)]
    if ngram:
        tail.append(("where", "where the longest run sits in the corpus"))
    return heads + [el("th", _button(k, t), data_type="str", data_first="asc") for k, t in tail]


def _controls(n: int) -> str:
    """The filter box, the flagged-only box and the count of rows shown (the script updates it)."""
    return el(
        "div",
        el("label", "Filter " + void("input", type="search", id="filter", placeholder=HINT))
        + el("label", void("input", type="checkbox", id="flagged-only") + " flagged only")
        + el(
            "span",
            f"{n:,} of {n:,} listed examples shown",
            id="shown",
            class_="muted",
            aria_live="polite",
        ),
        class_="controls",
    )


def _button(label: str, title: str | None = None) -> str:
    return el("button", esc(label), type="button", title=title)


def _row(
    report: Report, rank: int | None, e: int, r: ExampleResult, carded: bool, ngram: bool
) -> str:
    ident = el("a", esc(r.id), href=f"#{card_id(e)}") if carded else esc(r.id)
    full = eval_where(r)
    # NOTE: the file's name and the line in the cell (the whole path in its title); the sort
    # key pads the line, so line 10 sorts after line 9.
    line = "" if r.eval_line is None else f":{r.eval_line}"
    key = f"{r.eval_path}:{r.eval_line or 0:012d}"
    cells = [
        el("td", "" if rank is None else f"{rank:,}", class_="num", data_v=sort_value(rank)),
        el("td", ident, class_="mono", data_v=r.id),
        el("td", esc(PurePath(r.eval_path).name + line), class_="mono", data_v=key, title=full),
    ]
    for m in report.methods:
        v = r.scores.get(m.name)
        cells.append(el("td", fmt_num(v, m.integer), class_="num", data_v=sort_value(v)))
    flag = "FLAGGED" if r.flagged else ("" if r.scorable else "unscorable")
    reasons = "; ".join(str(x) for x in r.reasons)
    cells += [
        el("td", esc(flag), data_v=flag),
        el("td", esc(reasons), class_="reasons", data_v=reasons),
    ]
    if ngram:
        where, ev = evidence_where(r.evidence), r.evidence
        short = where
        if ev is not None and ev.path:
            place = PurePath(ev.path).name
            place += f":{ev.line}" if ev.line is not None else f"[{ev.record}]"
            short = place if ev.source == "corpus" else f"{ev.source}: {place}"
        cells.append(el("td", esc(short), class_="mono", data_v=where, title=where or None))
    return el(
        "tr",
        "".join(cells),
        class_="flagged" if r.flagged else None,
        data_flagged="1" if r.flagged else "0",
    )
