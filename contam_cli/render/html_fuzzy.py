"""The HTML card's reworded leak: the eval text beside the aligned corpus passage, the matched
words highlighted on both sides (from the pairs' character offsets), with the fuzzy scores.

Everything shown goes through :func:`~contam_cli.render.html_parts.highlight` (which escapes);
with ``report.redact`` only offsets are shown.
"""

from __future__ import annotations

from contam_cli.render.html_parts import el, esc, excerpt, fmt_num, highlight
from contam_cli.render.table import evidence_where
from contam_cli.report import ExampleResult, FuzzyMatch, Report

__all__ = ["fuzzy_facts", "fuzzy_section", "merged_spans"]


def fuzzy_facts(r: ExampleResult) -> list[tuple[str, str]]:
    """The fuzzy detector's figures for the card's facts (none when it did not score `r`)."""
    fz = r.fuzzy
    if fz is None or not fz.scorable:
        return []
    return [
        ("aligned fraction", fmt_num(fz.aligned_fraction)),
        ("identity", fmt_num(fz.identity)),
    ]


def fuzzy_section(report: Report, r: ExampleResult) -> str:
    """The reworded leak of `r` when a fuzzy rule flagged it (else nothing)."""
    fz = r.fuzzy
    if fz is None or fz.evidence is None or not any(x.detector == "fuzzy" for x in r.reasons):
        return ""
    ev = fz.evidence
    head = el(
        "h4",
        "Reworded copy "
        + el(
            "span",
            esc(
                f"(fuzzy {fmt_num(fz.score)}: {len(ev.pairs):,} words matched, "
                f"aligned fraction {fmt_num(fz.aligned_fraction)}, "
                f"identity {fmt_num(fz.identity)})"
            ),
            class_="muted",
        ),
    )
    sides = el("div", _eval_side(report, r, ev) + _corpus_side(report, ev), class_="sides")
    return el("section", head + sides, class_="fuzzy")


def merged_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` sorted, without empty or negative ones, overlapping ones merged (what
    :func:`highlight` takes).

    >>> merged_spans([(5, 7), (0, 2), (1, 3), (-1, -1), (4, 4)])
    [(0, 3), (5, 7)]
    """
    out: list[tuple[int, int]] = []
    for a, b in sorted(s for s in spans if 0 <= s[0] < s[1]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _eval_side(report: Report, r: ExampleResult, ev: FuzzyMatch) -> str:
    where = f"tokens {ev.eval_token:,}–{ev.eval_token_end - 1:,}"
    if ev.eval_char_start >= 0:
        where += f", characters {ev.eval_char_start:,}–{ev.eval_char_end:,}"
    head = el("h4", "Eval example " + el("span", f"({esc(where)})", class_="muted"))
    if report.redact:
        return el("div", head + _redacted(), class_="side")
    text = r.text
    if text is None or ev.eval_char_start < 0 or ev.eval_char_end > len(text):
        body = el("p", "The eval text is not in this report.", class_="muted")
        return el("div", head + body, class_="side")
    a, b = excerpt(text, (ev.eval_char_start, ev.eval_char_end))
    marks = merged_spans([(p[2] - a, p[3] - a) for p in ev.pairs])
    return el("div", head + _text(a, b, len(text), highlight(text[a:b], marks)), class_="side")


def _corpus_side(report: Report, ev: FuzzyMatch) -> str:
    place = evidence_where(ev) or "the document could not be read again"
    facts = [
        ("source", ev.source),
        ("where", place),
        ("document", ev.doc_id or "–"),
        ("span", f"{ev.length:,} tokens from token {ev.doc_token:,}"),
    ]
    if ev.char_start >= 0:
        facts.append(("characters", f"{ev.char_start:,}–{ev.char_end:,}"))
    body = el("dl", "".join(el("dt", esc(k)) + el("dd", esc(v)) for k, v in facts), class_="kv")
    if report.redact:
        body += _redacted()
    elif ev.text is None:
        body += el("p", "The aligned text is not in this report.", class_="muted")
    else:
        # NOTE: the pairs' document offsets are in the document; the text starts at char_start.
        base = ev.char_start
        a, b = excerpt(ev.text, (0, len(ev.text)))
        marks = merged_spans([(p[4] - base - a, p[5] - base - a) for p in ev.pairs])
        body += _text(a, b, len(ev.text), highlight(ev.text[a:b], marks))
    return el("div", el("h4", "Corpus passage") + body, class_="side")


def _redacted() -> str:
    return el("p", "Text redacted (--redact): offsets only.", class_="muted")


def _text(a: int, b: int, n: int, inner: str) -> str:
    """`inner` (characters `a` to `b` of `n`) in a text block, with an ellipsis where text was
    left out."""
    before = el("span", f"[… {a:,} characters] ", class_="muted") if a > 0 else ""
    after = el("span", f" [… {n - b:,} characters]", class_="muted") if b < n else ""
    return el("div", before + inner + after, class_="text")
