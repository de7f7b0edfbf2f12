"""Rendering the fuzzy detector: its table column and notes, the HTML card that shows a reworded
leak beside the eval text with the matched words highlighted (escaped, redacted), SARIF."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import orjson
import pytest

from contam_cli import scan
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.features.bench.edits import Thesaurus, reword_hard
from contam_cli.features.bench.textmodel import TextModel
from contam_cli.policy import FlagPolicy, SourceThreshold
from contam_cli.policy.thresholds import Thresholds
from contam_cli.render.html import render_html
from contam_cli.render.markdown import render_markdown
from contam_cli.render.sarif import render_sarif
from contam_cli.render.table import render_table
from contam_cli.render.thresholds import render_thresholds
from contam_cli.report import Report
from contam_cli.text import tokenize

HOSTILE = '<script>alert("x")</script> & '


def _leak() -> tuple[str, str]:
    rng = np.random.default_rng(3)
    model = TextModel.build(rng)
    drafts = model.drafts(rng, np.array([60, 300]))
    copy = reword_hard(drafts[0], model, Thesaurus.build(model, rng), rng).text(model)
    return HOSTILE + drafts[0].text(model), drafts[1].text(model) + " " + HOSTILE + copy


EXAMPLE, DOC = _leak()
SHORT = " ".join(EXAMPLE.split()[:16])


def _report(redact: bool = False) -> Report:
    return scan([EXAMPLE, SHORT, "tiny"], {"web": [DOC]}, fuzzy=FuzzyConfig(), redact=redact, n=8)


class Marks(HTMLParser):
    """The text of each <mark> inside the fuzzy section, per side (eval first, then corpus)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # inside <section class="fuzzy">
        self.sides: list[list[str]] = []
        self.in_mark = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("class") == "fuzzy":
            self.depth = 1
        elif self.depth and tag == "div" and a.get("class") == "side":
            self.sides.append([])
        elif self.depth and tag == "mark":
            self.in_mark = True
            self.sides[-1].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "mark":
            self.in_mark = False
        if tag == "section":
            self.depth = 0

    def handle_data(self, data: str) -> None:
        if self.in_mark:
            self.sides[-1][-1] += data


def test_the_table_shows_the_fuzzy_column_and_the_reworded_copy() -> None:
    text = render_table(_report())
    head, first = text.splitlines()[:2]
    assert head.split()[:6] == ["id", "overlap", "run", "z", "fuzzy", "flag"]
    score = _report().examples[0].scores["fuzzy"]
    assert f"{score:.3f}" in first and "FLAGGED" in first and f"fuzzy {score:.3f} >= 0.5" in first
    assert first.rstrip().endswith("web: <stream>[0]")
    assert "1 example not scored by the fuzzy detector (fewer than 20 tokens" in text
    plain = render_table(scan([EXAMPLE], {"web": [DOC]}, n=8))
    assert "fuzzy" not in plain.splitlines()[0]


def test_the_html_card_highlights_the_matched_words_on_both_sides() -> None:
    report = _report()
    page = render_html(report)
    marks = Marks()
    marks.feed(page)
    assert len(marks.sides) == 2 and all(marks.sides)
    ev = report.examples[0].fuzzy.evidence
    # every matched token is marked on both sides, and what is marked is those tokens
    eval_marked = [t for m in marks.sides[0] for t in tokenize(m)]
    doc_marked = [t for m in marks.sides[1] for t in tokenize(m)]
    assert eval_marked == [tokenize(EXAMPLE[p[2] : p[3]])[0] for p in ev.pairs]
    assert sorted(doc_marked) == sorted(tokenize(DOC[p[4] : p[5]])[0] for p in ev.pairs)
    assert "script" in eval_marked and "alert" in doc_marked
    assert "Reworded copy" in page and "aligned fraction" in page
    # NOTE: the page's own script is the only one; the texts' are escaped.
    assert page.count("<script") == 1 and "<script>alert" not in page
    assert "&lt;<mark>script</mark>&gt;<mark>alert</mark>(&quot;<mark>x</mark>&quot;)" in page


def test_the_redacted_card_shows_offsets_only() -> None:
    page = render_html(_report(redact=True))
    assert "Reworded copy" in page and "offsets only" in page
    marks = Marks()
    marks.feed(page)
    assert not any(marks.sides)
    assert "alert" not in page.replace("&lt;script&gt;", "")


def test_sarif_names_the_fuzzy_rule_and_points_at_the_copy() -> None:
    report = _report()
    log = orjson.loads(render_sarif(report))
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["fuzzy/min-fuzzy"]
    (result,) = run["results"]
    assert result["ruleId"] == "fuzzy/min-fuzzy"
    assert result["message"]["text"].startswith("A reworded copy of eval example 0")
    assert "Reworded text:" in result["message"]["text"]
    assert "words matched" in result["relatedLocations"][0]["message"]["text"]
    assert result["properties"]["fuzzy"]["evidence"]["source"] == "web"
    redacted = orjson.loads(render_sarif(_report(redact=True)))["runs"][0]["results"][0]
    assert "Reworded text" not in redacted["message"]["text"]


def test_source_fuzzy_is_a_sarif_rule_too() -> None:
    t = Thresholds({"web": SourceThreshold(fuzzy=0.3)})
    r = scan([EXAMPLE], {"web": [DOC]}, n=8, fuzzy=FuzzyConfig(), policy=FlagPolicy(thresholds=t))
    rules = orjson.loads(render_sarif(r))["runs"][0]["tool"]["driver"]["rules"]
    assert {x["id"] for x in rules} == {"fuzzy/min-fuzzy", "fuzzy/source-fuzzy"}
    assert all(
        "calibrated" in x["shortDescription"]["text"] or "reworded" in x["shortDescription"]["text"]
        for x in rules
    )


@pytest.mark.parametrize("redact", [False, True])
def test_markdown_renders_a_fuzzy_report(redact: bool) -> None:
    text = render_markdown(_report(redact=redact))
    assert "fuzzy" in text and ("alert" not in text if redact else True)


def test_thresholds_show_a_fuzzy_column_when_there_is_one() -> None:
    t = Thresholds({"web": SourceThreshold(14, 0.25, 150, True, 0.42)}, n=13, percentile=99.0)
    lines = render_thresholds(t, "t.json").splitlines()
    assert "fuzzy threshold" in lines[0] and "0.420" in lines[1]
