"""The HTML report's flagged examples: one card each, the leaked span highlighted in the eval
text beside the corpus evidence, with the reasons, scores and fingerprint; for a reworded leak
(a fuzzy rule fired) the aligned corpus passage beside the eval text, matched words highlighted
(:mod:`~contam_cli.render.html_fuzzy`).

With ``report.redact`` a card holds no eval or corpus text: the span is given as token and
character offsets only.
"""

from __future__ import annotations

from collections.abc import Sequence

from contam_cli.engine.evidence import Evidence
from contam_cli.render.html_fuzzy import fuzzy_facts, fuzzy_section
from contam_cli.render.html_parts import (
    el,
    esc,
    eval_span,
    excerpt,
    fmt_num,
    highlight,
    norm_config,
)
from contam_cli.render.table import evidence_where, short_path
from contam_cli.report import ExampleResult, Report
from contam_cli.text import NormConfig

__all__ = ["card_id", "eval_where", "flagged_section"]


def card_id(e: int) -> str:
    """The anchor of example `e`'s card (by index: ids may hold any character)."""
    return f"ex-{e}"


def eval_where(e: ExampleResult) -> str:
    """Where an example is: ``path:line`` (the path alone when the line is not known)."""
    path = short_path(e.eval_path) if e.eval_path else "<memory>"
    return path if e.eval_line is None else f"{path}:{e.eval_line}"


def flagged_section(report: Report, flagged: Sequence[int], top: int) -> str:
    """The cards of the first `top` of `flagged` (indices, most suspicious first) and a count of
    the rest."""
    shown = list(flagged[: max(0, top)])
    norm = norm_config(report)
    cards = [_card(report, e, r, norm) for e, r in zip(shown, report.take(shown) if shown else [])]
    rest = len(flagged) - len(shown)
    if not flagged:
        cards.append(el("p", "No example was flagged.", class_="muted"))
    elif rest:
        cards.append(
            el(
                "p",
                f"{rest:,} more flagged examples are not shown in full here; the table below "
                "lists the most suspicious, and the JSON report holds every one.",
                class_="muted",
            )
        )
    title = f"Flagged examples ({len(flagged):,}" + (
        f", top {len(shown):,} shown)" if rest else ")"
    )
    return el("section", el("h2", esc(title)) + "".join(cards), id="flagged")


def _card(report: Report, e: int, r: ExampleResult, norm: NormConfig) -> str:
    reasons = "".join(el("span", esc(str(x)), class_="tag") for x in r.reasons)
    head = el(
        "header",
        el("h3", "id " + el("code", esc(r.id)))
        + reasons
        + el("span", esc(eval_where(r)), class_="where mono"),
    )
    facts = _facts(report, r)
    fuzzy = fuzzy_section(report, r)
    if fuzzy and r.evidence is None:
        # NOTE: a reworded leak alone: its section shows the eval text beside the passage.
        sides = ""
    elif r.ngram is None and r.text is None and not report.redact:
        # NOTE: a detector without corpus evidence (a probe, a combination) and no text kept:
        # one line says so instead of two empty panels.
        sides = el("p", "The eval text is not in this report.", class_="muted")
    else:
        sides = el(
            "div", _eval_side(report, r, norm) + _corpus_side(report, r.evidence), class_="sides"
        )
    body = head + facts + sides + fuzzy + _per_source(r)
    return el("article", body, class_="card", id=card_id(e))


def _facts(report: Report, r: ExampleResult) -> str:
    pairs = [(m.name, fmt_num(r.scores.get(m.name), m.integer)) for m in report.methods]
    if r.ngram is not None:
        ng = r.ngram
        pairs += [
            ("z-score", fmt_num(ng.zscore)),
            ("tokens", f"{ng.n_tokens:,}"),
            ("n-grams matched", f"{ng.matched_ngrams:,} of {ng.total_ngrams:,}"),
        ]
    pairs += fuzzy_facts(r)
    label = r.details.get("label")
    if isinstance(label, dict) and label.get("label") in (0, 1):
        pairs.append(("label", "contaminated" if label["label"] == 1 else "clean"))
    pairs.append(("fingerprint", el("code", esc(r.fingerprint))))
    items = "".join(
        el("div", el("dt", esc(k)) + el("dd", v if k == "fingerprint" else esc(v)))
        for k, v in pairs
    )
    return el("dl", items, class_="facts")


def _eval_side(report: Report, r: ExampleResult, norm: NormConfig) -> str:
    ev = r.evidence
    span = eval_span(r, norm)
    where = ""
    if ev is not None:
        where = f"tokens {ev.eval_token:,}–{ev.eval_token + ev.length - 1:,}"
        if span is not None:
            where += f", characters {span[0]:,}–{span[1]:,}"
    if report.redact:
        body = el("p", "Text redacted (--redact): offsets only.", class_="muted")
    elif r.text is None:
        body = el("p", "The eval text is not in this report.", class_="muted")
    else:
        a, b = excerpt(r.text, span)
        spans = [] if span is None else [(span[0] - a, span[1] - a)]
        body = el("div", _cut(a, b, len(r.text), highlight(r.text[a:b], spans)), class_="text")
        if ev is not None and span is None:
            body += el("p", "The leaked span could not be placed in this text.", class_="muted")
    note = " " + el("span", f"({esc(where)})", class_="muted") if where else ""
    head = el("h4", "Eval example" + note)
    return el("div", head + body, class_="side")


def _corpus_side(report: Report, ev: Evidence | None) -> str:
    if ev is None:
        return el(
            "div", el("h4", "Corpus evidence") + el("p", "None.", class_="muted"), class_="side"
        )
    place = evidence_where(ev) or "the document could not be read again"
    facts = [
        ("source", ev.source),
        ("where", place),
        ("document", ev.doc_id or "–"),
        ("run", f"{ev.length:,} tokens from token {ev.doc_token:,}"),
    ]
    if ev.char_start >= 0:
        facts.append(("characters", f"{ev.char_start:,}–{ev.char_end:,}"))
    items = "".join(el("dt", esc(k)) + el("dd", esc(v)) for k, v in facts)
    body = el("dl", items, class_="kv")
    if report.redact:
        body += el("p", "Text redacted (--redact): offsets only.", class_="muted")
    elif ev.text is None:
        body += el("p", "The matched text is not in this report.", class_="muted")
    else:
        # NOTE: the evidence text IS the matched run, so all of it is highlighted.
        a, b = excerpt(ev.text, (0, len(ev.text)))
        body += el(
            "div", _cut(a, b, len(ev.text), highlight(ev.text[a:b], [(0, b - a)])), class_="text"
        )
    return el("div", el("h4", "Corpus evidence") + body, class_="side")


def _cut(a: int, b: int, n: int, inner: str) -> str:
    """`inner` (characters `a` to `b` of `n`) with an ellipsis where text was left out."""
    before = el("span", f"[… {a:,} characters] ", class_="muted") if a > 0 else ""
    after = el("span", f" [… {n - b:,} characters]", class_="muted") if b < n else ""
    return before + inner + after


def _per_source(r: ExampleResult) -> str:
    if len(r.per_source) < 2:
        return ""
    rows = "".join(
        el(
            "tr",
            el("td", esc(name))
            + el("td", f"{s.matched_ngrams:,}", class_="num")
            + el("td", fmt_num(s.overlap_fraction), class_="num")
            + el("td", f"{s.longest_run:,}", class_="num"),
        )
        for name, s in r.per_source.items()
    )
    head = el(
        "tr",
        el("th", "source")
        + el("th", "matched n-grams", class_="num")
        + el("th", "overlap", class_="num")
        + el("th", "longest run", class_="num"),
    )
    return el(
        "details", el("summary", "Per source") + el("table", el("thead", head) + el("tbody", rows))
    )
