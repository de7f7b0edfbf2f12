"""Fixed findings (in the baseline, no longer found) are capped wherever they are printed: the
Markdown summary names at most LISTED of them and counts the rest, the GitHub annotations and
SARIF stay the same size however many there are; the JSON report keeps every one."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest
from conftest import CD

from contam_cli import scan
from contam_cli.policy.baseline import BaselineEntry, ReasonKey, findings, subtract
from contam_cli.render import OutputFormat, render
from contam_cli.render.markdown import LISTED
from contam_cli.report import Report

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
RULE = (ReasonKey("ngram", "min-overlap", None),)


@pytest.fixture(scope="module")
def scanned() -> Report:
    return scan(BENCH, CORPUS)


def with_fixed(report: Report, n: int) -> tuple[Report, dict[str, str]]:
    """`report` less a baseline of its own findings plus `n` that are no longer found."""
    own = findings(report)
    gone = tuple(BaselineEntry(f"{k:032x}", f"gone{k}", RULE) for k in range(n))
    baseline = replace(own, entries=(*own.entries, *gone), path="contam-baseline.json")
    result = subtract(report, baseline)
    assert len(result.fixed) == n and not result.new
    return result.report, result.sarif_states()


def test_the_json_report_keeps_every_fixed_finding(scanned: Report) -> None:
    report, _ = with_fixed(scanned, 300)
    doc = orjson.loads(render(report, OutputFormat.json))
    summary = doc["summary"]["baseline"]
    assert summary["fixed"] == 300 and len(summary["fixed_findings"]) == 300
    assert summary["fixed_findings"][299]["id"] == "gone299"


@pytest.mark.parametrize("n", [1, LISTED, LISTED + 1, 300])
def test_the_markdown_summary_names_at_most_listed(scanned: Report, n: int) -> None:
    report, _ = with_fixed(scanned, n)
    (line,) = [x for x in render(report, OutputFormat.markdown).splitlines() if "Fixed:" in x]
    names = [f"`gone{k}`" for k in range(min(n, LISTED))]
    assert line.startswith("Fixed: " + ", ".join(names))
    assert f"`gone{LISTED}`" not in line
    more = n - LISTED
    assert line.endswith(f"… {more} more (in the JSON report)" if more > 0 else names[-1])
    assert f"**0** new, 2 accepted, {n} fixed" in render(report, OutputFormat.markdown)


def test_github_and_sarif_do_not_grow_with_the_fixed_findings(scanned: Report) -> None:
    few, few_states = with_fixed(scanned, 2)
    many, many_states = with_fixed(scanned, 300)
    github = [render(r, OutputFormat.github).splitlines() for r in (few, many)]
    assert len(github[0]) == len(github[1])
    (notice,) = [x for x in github[1] if "no longer found" in x]
    assert notice.startswith("::notice ") and "300 findings in the baseline" in notice
    sarif = [
        render(r, OutputFormat.sarif, baseline=s)
        for r, s in ((few, few_states), (many, many_states))
    ]
    assert len(sarif[0]) == len(sarif[1]) and "gone" not in sarif[1]
