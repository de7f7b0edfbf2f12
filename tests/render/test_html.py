"""The HTML report: well-formed, self-contained, highlighted at the right characters, escaped,
redacted, deterministic, and bounded for a report of 100,000 examples."""

from __future__ import annotations

import html
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_builders import (
    HOSTILE,
    MIXED,
    PLANTED,
    all_reports,
    bench_module,
    combined_report,
    hostile_report,
    probe_report,
    scan_report,
)

from contam_cli.render.html import render_html
from contam_cli.render.html_parts import esc, highlight
from contam_cli.render.html_table import TABLE_ROWS
from contam_cli.report import load_report, save_report
from contam_cli.text import token_range

VOID = {"meta", "link", "input", "br", "img", "hr", "wbr", "source", "col", "area", "base"}
REPORTS = all_reports()


class Tree(HTMLParser):
    """Checks that every element is closed in order; collects the text of each <mark>, the
    rows of the examples table and every attribute value."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, int]] = []
        self.errors: list[str] = []
        self.marks: list[str] = []
        self.section: str | None = None
        self.marks_by_section: dict[str, list[str]] = {}
        self.attrs: list[tuple[str, str]] = []
        self.rows: list[dict[str, str | None]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]
        a = dict(attrs)
        if tag == "section":
            self.section = a.get("id")
        if tag == "tr" and "data-flagged" in a:
            self.rows.append(a)
        if tag == "mark":
            self.marks.append("")
            self.marks_by_section.setdefault(self.section or "", []).append("")
        if tag not in VOID:
            self.stack.append((tag, self.getpos()[0]))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(k, v or "") for k, v in attrs]  # self-closed SVG elements

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            self.errors.append(f"end tag of void element {tag}")
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at line {self.getpos()[0]} closes {self.stack[-1:]}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        if any(t == "mark" for t, _ in self.stack):
            self.marks[-1] += data
            self.marks_by_section[self.section or ""][-1] += data


def parse(page: str) -> Tree:
    tree = Tree()
    tree.feed(page)
    tree.close()
    assert not tree.errors, tree.errors[:5]
    assert not tree.stack, f"unclosed: {tree.stack[:5]}"
    return tree


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_report_gives_a_well_formed_self_contained_page(name: str) -> None:
    page = render_html(REPORTS[name])
    tree = parse(page)
    assert page.startswith('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">')
    assert tree.tags.count("html") == tree.tags.count("head") == tree.tags.count("body") == 1
    csp = next(v for k, v in tree.attrs if k == "content" and "default-src" in v)
    assert "default-src 'none'" in csp and "unsafe" not in csp
    # NOTE: nothing the page could load: the only URLs are the SVG namespace.
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert not [(k, v) for k, v in tree.attrs if k in ("src", "srcset", "action", "poster")]
    assert all(v.startswith(("#", "data:")) for k, v in tree.attrs if k == "href")
    assert "@import" not in page and "url(" not in page
    assert tree.tags.count("script") == 1 and tree.tags.count("style") == 1
    page.encode("utf-8")  # no lone surrogate


def test_the_leaked_span_is_highlighted_at_its_characters() -> None:
    report = scan_report()
    tree = parse(render_html(report))
    q1, q2 = report.take([0, 1])
    # NOTE: q1's whole text is the leak (all 23 tokens; the final full stop is no token).
    assert q1.text is not None and q2.text is not None
    assert q1.evidence is not None and q2.evidence is not None
    flagged = tree.marks_by_section["flagged"]
    assert flagged[0] == q1.text.removesuffix(".")
    assert flagged[1] == q1.evidence.text  # the corpus side: the whole matched text
    assert flagged[2] == q2.text.removesuffix(".")
    assert flagged[3] == q2.evidence.text
    a, b = token_range(q1.text, 0, 22)
    assert flagged[0] == q1.text[a:b]
    assert "characters 0–142" in render_html(report)


def test_a_span_inside_a_text_is_highlighted_there() -> None:
    report = hostile_report()
    tree = parse(render_html(report))
    # tokens 0..2 of "Leak </mark><script>alert(1)..." are "leak", "mark", "script"
    assert tree.marks_by_section["flagged"][0] == "Leak </mark><script"


@given(
    st.text(max_size=60),
    st.lists(st.tuples(st.integers(0, 70), st.integers(0, 70)), max_size=4),
)
def test_highlight_keeps_the_text_and_marks_exactly_the_spans(
    text: str, raw: list[tuple[int, int]]
) -> None:
    spans, done = [], 0
    for a, b in sorted((min(p), max(p)) for p in raw):
        if a >= done and b > a:
            spans.append((a, b))
            done = b
    out = highlight(text, spans)
    plain = html.unescape(out.replace("<mark>", "").replace("</mark>", ""))
    assert plain == html.unescape(esc(text))
    assert len(plain) == len(text)  # replaced characters stay one character each
    marked = [html.unescape(m) for m in re.findall("<mark>(.*?)</mark>", out, re.S)]
    expected = [html.unescape(esc(text[a:b])) for a, b in spans if a < min(b, len(text))]
    assert marked == expected


def test_markup_in_any_field_is_inert() -> None:
    page = render_html(hostile_report())
    parse(page)
    assert page.count("<script") == 1  # the page's own script
    assert HOSTILE not in page and html.escape(HOSTILE) in page
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert 'ev"al' not in page


@pytest.mark.parametrize("name", ["scan-redacted", "hostile-redacted"])
def test_a_redacted_report_holds_no_eval_or_corpus_text(name: str) -> None:
    report = REPORTS[name]
    assert report.examples.texts  # the texts are in the table; the page must leave them out
    page = render_html(report)
    for words in (*PLANTED, "Leak", "&lt;b&gt;bold", "alert(1)"):
        assert words not in page
    assert "Text redacted" in page
    assert "tokens 0–" in page  # offsets are still given


def test_a_probe_report_has_its_methods_and_no_corpus_side() -> None:
    page = render_html(probe_report())
    tree = parse(page)
    assert "perplexity by flag" in page and "min_k_plus_plus by flag" in page
    assert "overlap against longest run" not in page
    # a first click sorts perplexity low (suspicious) first, Min-K%++ high first
    assert re.search(r'data-first="asc"><button[^>]*>perplexity<', page)
    assert re.search(r'data-first="desc"><button[^>]*>min_k_plus_plus<', page)
    assert len(tree.rows) == 6 and "unscorable" in page


def test_a_combined_report_shows_aucs_weights_roc_and_the_deployment_view() -> None:
    page = render_html(combined_report())
    parse(page)
    assert "ROC curves against the labels" in page and "AUC per method" in page
    for text in ("0.930", "[0.850, 0.990]", "0.600", "5,850.0", "100,000", "by AUC"):
        assert text in page
    assert "label</dt><dd>contaminated" in page


def test_top_limits_the_cards_and_counts_the_rest() -> None:
    report = scan_report()
    page = render_html(report, top=1)
    assert page.count('<article class="card"') == 1
    assert "1 more flagged examples are not shown in full" in page
    tree = parse(page)
    assert [r["data-flagged"] for r in tree.rows] == ["1", "1", "0", "0", "0"]


def test_the_table_has_sort_keys_and_nulls_empty() -> None:
    page = render_html(scan_report(MIXED))
    rows = re.findall(r"<tr[^>]*data-flagged.*?</tr>", page)
    assert len(rows) == 4
    unscorable = next(r for r in rows if ">s1<" in r)
    assert unscorable.count('data-v=""') >= 3  # rank and both scores
    assert 'data-v="0.2857142857142857"' in page  # exact keys, not the rounded text


def test_an_impact_fragment_goes_in_as_a_section() -> None:
    page = render_html(scan_report(), impact="<p>score drops by 3 points</p>")
    assert '<section id="impact"><h2>Impact on the eval results</h2><p>score drops' in page
    assert 'id="impact"' not in render_html(scan_report())


def test_the_same_report_gives_the_same_bytes(tmp_path: Path) -> None:
    for report in (scan_report(), combined_report()):
        first = render_html(report)
        assert first == render_html(report)
        path = tmp_path / "r.json"
        save_report(report, path)
        assert render_html(load_report(path)) == first


def test_a_report_of_100000_examples_renders_bounded() -> None:
    report = bench_module().synthetic_report(100_000, 0.02)
    t0 = time.perf_counter()
    page = render_html(report)
    seconds = time.perf_counter() - t0
    tree = parse(page)
    assert len(tree.rows) == TABLE_ROWS
    assert page.count('<article class="card"') == 50
    assert "1,950 more flagged examples are not shown in full" in page
    assert len(page.encode()) < 2_000_000
    assert "n=96,978, 2,000 drawn" in page  # the scatter is down-sampled
    # NOTE: loose: scripts/bench_html.py measures it (about 0.2 s here); this catches blow-ups.
    assert seconds < 30
    assert np.count_nonzero(report.flagged_mask()) == 2000
