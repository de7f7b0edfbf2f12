"""contam impact's renderers: text, JSON (contam.impact/1), Markdown and the SVG chart."""

from __future__ import annotations

import doctest
import importlib
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from contam_cli.features.impact import Impact, impact
from contam_cli.render.impact import (
    IMPACT_SCHEMA,
    LISTED_IDS,
    impact_svg,
    impact_to_dict,
    render_impact_json,
    render_impact_markdown,
    render_impact_table,
)
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report

STEP_SUMMARY_LIMIT = 1 << 20
"""GitHub's limit on one step's job summary (1 MiB)."""
NS = "{http://www.w3.org/2000/svg}"


def report_of(
    n: int, reasons: Mapping[int, Sequence[Reason]], best: Mapping[int, str] | None = None
) -> Report:
    """A hand-made n-gram report: flagged examples overlap 0.9, the rest 0; the last unscorable."""
    overlap = np.zeros(n)
    overlap[list(reasons)] = 0.9
    overlap[-1] = np.nan
    table = ExampleTable(
        ids=[str(e) for e in range(n)],
        eval_paths=["eval.jsonl"] * n,
        eval_lines=[None] * n,
        fingerprints=[f"{e:032x}" for e in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": overlap * 40, "overlap_fraction": overlap},
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=~np.isnan(overlap),
            n_tokens=np.full(n, 40),
            total_ngrams=np.full(n, 28),
            matched_ngrams=np.nan_to_num(overlap * 28).astype(int),
            zscore=np.zeros(n),
            best_source=best or {},
        ),
    )
    return Report(table)


def example(bootstrap: int = 1000, seed: int = 0) -> Impact:
    reasons: dict[int, tuple[Reason, ...]] = {
        e: (Reason("min-overlap", 0.9, 0.5),) for e in range(20)
    }
    reasons[0] = (*reasons[0], Reason("source-run", 40, 30, source="test|split"))
    best = dict.fromkeys(range(1, 20), "web")
    rows = [{"id": str(e), "correct": float(e < 60)} for e in range(101)]
    rows.append({"id": "x`y", "correct": 1.0})
    return impact(report_of(101, reasons, best), rows, bootstrap=bootstrap, seed=seed)


EXAMPLE = example()


def test_doctests() -> None:
    for name in ("impact", "impact_json"):
        result = doctest.testmod(importlib.import_module(f"contam_cli.render.{name}"))
        assert result.failed == 0, name


def test_text_table_shows_the_numbers() -> None:
    text = render_impact_table(EXAMPLE)
    lines = text.splitlines()
    assert "95% intervals: percentile bootstrap, 1,000 resamples, seed 0" in lines[0]
    assert lines[1] == ("matched by id: 101 of 101 report examples, 101 of 102 results records")
    rows: dict[str, list[str]] = {}
    for line in lines[4:8]:
        rows.setdefault(line.split()[0], line.split())
    assert rows["full"][1:3] == ["101", "0.594"]
    assert rows["clean"][1:3] == ["80", "0.500"]
    assert rows["flagged"][1:3] == ["20", "1.000"]
    assert rows["unscorable"][1:3] == ["1", "0.000"]
    assert re.search(r"^full - clean\s+\+0\.094\s+\[", text, re.M)
    assert re.search(r"^rule\s+min-overlap\s+20\s+1\.000", text, re.M)
    assert re.search(r"^source\s+web\s+19\s+", text, re.M)
    assert re.search(r"^overlap >= 0\.8\s+20\s+80\s+0\.500", text, re.M)
    assert lines[-2:] == [
        "0 report examples have no result",
        "1 results records are not in the report: x`y",
    ]


def _strict(text: str) -> Any:
    def refuse(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def test_json_is_strict_versioned_and_deterministic() -> None:
    text = render_impact_json(EXAMPLE)
    assert text == render_impact_json(example()) and text.endswith("}\n")
    data = _strict(text)
    assert data == impact_to_dict(EXAMPLE)
    assert data["schema"] == IMPACT_SCHEMA == "contam.impact/1"
    assert list(data)[:4] == ["schema", "tool", "report", "results"]
    overall = data["overall"]
    assert overall["full_minus_clean"]["value"] == 0.094059405941  # rounded to 12 places
    assert overall["clean"] == {
        "n": 80,
        "value": 0.5,
        "low": overall["clean"]["low"],
        "high": overall["clean"]["high"],
    }
    assert data["matching"]["results_only"] == {"count": 1, "ids": ["x`y"]}
    assert [lv["label"] for lv in data["levels"]] == [
        "overlap >= 0.2",
        "overlap >= 0.5",
        "overlap >= 0.8",
    ]
    assert render_impact_json(example(seed=1)) != text


def test_json_has_null_where_a_value_does_not_exist() -> None:
    rows = [{"id": str(e), "correct": 1.0} for e in range(5)]
    nothing_flagged = impact(report_of(5, {}), rows, bootstrap=100, levels=())
    data = _strict(render_impact_json(nothing_flagged))
    assert data["overall"]["flagged"] == {"n": 0, "value": None, "low": None, "high": None}
    assert data["overall"]["flagged_minus_clean"] == {"value": None, "low": None, "high": None}
    assert data["overall"]["p_value"] is None and data["by_rule"] == [] and data["levels"] == []
    assert "NaN" not in render_impact_json(nothing_flagged)


def test_markdown_tables_and_escaping() -> None:
    md = render_impact_markdown(EXAMPLE)
    assert md.startswith("### Contamination impact on accuracy\n")
    assert "| full | 101 | 0.594 |" in md
    assert "| subset | n | accuracy | 95% interval |\n| --- | --: | --: | --- |" in md
    assert "| source | test\\|split | 1 |" in md  # a pipe in a name stays in its cell
    assert "not in the report: `` x`y ``" in md
    widths = {line.count("|") - line.count("\\|") for line in md.splitlines() if "| rule " in line}
    assert widths == {9}


def test_markdown_for_100k_examples_fits_a_step_summary() -> None:
    n = 100_000
    reasons = {e: (Reason("min-overlap", 0.9, 0.5),) for e in range(0, n, 7)}
    report = report_of(n, reasons, {e: f"source-{e % 5}" for e in reasons})
    # Half the examples have no result, and as many results are not in the report.
    rows = [{"id": str(e), "correct": float(e % 3 == 0)} for e in range(0, n, 2)]
    rows += [{"id": f"extra-{k:06d}", "correct": 1.0} for k in range(n // 2)]
    value = impact(report, rows, bootstrap=20, levels="overlap>=0.2,0.5,0.8;run>=13,30,50")
    assert len(value.matching.report_only) == len(value.matching.results_only) == n // 2
    md = render_impact_markdown(value)
    assert len(md.encode("utf-8")) < STEP_SUMMARY_LIMIT
    assert len(md.encode("utf-8")) < 16_000  # a summary, not a listing
    assert f"and {n // 2 - LISTED_IDS:,} more (all in the JSON)" in md
    assert len(_strict(render_impact_json(value))["matching"]["report_only"]["ids"]) == n // 2


def test_svg_chart_per_level() -> None:
    svg = impact_svg(EXAMPLE)
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg"
    titles = [t.text or "" for t in root.iter(f"{NS}title")]
    # One whisker per series (clean, flagged) and category (as flagged + three levels).
    whiskers = [t for t in titles if ", clean: " in t or ", flagged: " in t]
    assert len(whiskers) == 8
    assert "as flagged, clean: 0.5 [" in " ".join(whiskers)
    assert svg == impact_svg(example())
    assert "accuracy" in (root.find(f"{NS}title").text or "")  # type: ignore[union-attr]


def test_svg_without_flagged_examples_is_still_a_chart() -> None:
    rows = [{"id": str(e), "correct": 1.0} for e in range(5)]
    value = impact(report_of(5, {}), rows, bootstrap=50, levels="none")
    root = ET.fromstring(impact_svg(value))
    assert any("flagged: n/a" in (t.text or "") for t in root.iter(f"{NS}title"))


@pytest.mark.parametrize("render", [render_impact_table, render_impact_markdown])
def test_unmatched_lists_are_cut(render: Any) -> None:
    rows = [{"id": str(e), "correct": 1.0} for e in range(3)]
    value = impact(report_of(50, {0: (Reason("min-overlap", 0.9, 0.5),)}), rows, bootstrap=50)
    text = render(value)
    assert "47 report examples have no result" in text
    assert f"and {47 - LISTED_IDS} more" in text


@pytest.mark.parametrize("render", [render_impact_table, render_impact_markdown])
def test_an_unmatched_id_s_control_characters_never_reach_the_terminal(render: Any) -> None:
    rows = [{"id": str(e), "correct": 1.0} for e in range(5)]
    rows.append({"id": "gh\x1b[2Jost\nnext", "correct": 1.0})
    text = render(impact(report_of(5, {}), rows, bootstrap=50, levels="none"))
    assert "\x1b" not in text
    line = next(x for x in text.splitlines() if "not in the report" in x)
    assert line.endswith(
        "gh\\x1b[2Jost next" if render is render_impact_table else "gh[2Jost next`"
    )
