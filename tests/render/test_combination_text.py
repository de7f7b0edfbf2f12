"""The terminal table of a combined report: its methods, labels and deployment sections."""

from __future__ import annotations

from conftest import ROOT

from contam_cli.features.combine import build_report
from contam_cli.render import render

SCORES = ROOT / "fixtures" / "report" / "scores.jsonl"
LABELS = ROOT / "fixtures" / "report" / "labels.jsonl"


def test_the_table_of_a_combined_report_has_every_methods_auc_and_the_deployment() -> None:
    report = build_report(
        [SCORES], labels=LABELS, directions={"perplexity": "lower"}, threshold=1.0, prevalence=0.1
    )
    lines = render(report, "table").splitlines()
    header = lines.index(next(line for line in lines if line.startswith("method ")))
    assert lines[header].split() == [
        "method",
        "direction",
        "weight",
        "scored",
        "missing",
        "AUC",
        "95%",
        "interval",
    ]
    rows = {line.split()[0]: line.split() for line in lines[header + 1 : header + 4]}
    assert rows["perplexity"][1] == "lower" and rows["perplexity"][5] == "1.000"
    assert rows["combined"][2] == "-"
    assert "labels: 2 contaminated, 3 clean, 0 unlabelled" in lines
    deployment = lines.index(next(line for line in lines if line.startswith("at prevalence 0.1")))
    assert lines[deployment + 1].split()[:4] == ["method", "recall", "FPR", "precision"]
    assert lines[-1] == report.summary_line()


def test_top_limits_the_rows_of_a_report_table() -> None:
    report = build_report([SCORES])
    text = render(report, "table", top=2)
    assert "... 3 more clean examples not listed" in text or "more flagged" in text
    listed = [line for line in text.splitlines() if line[:2] in ("q1", "q2", "q3", "q4", "q5")]
    assert len(listed) == 2


def test_a_scan_report_has_no_combination_sections(tmp_path) -> None:
    from contam_cli import scan

    report = scan(
        str(ROOT / "fixtures/contamination_detector/examples/benchmark.jsonl"),
        str(ROOT / "fixtures/contamination_detector/examples/corpus"),
    )
    text = render(report, "table")
    assert "AUC" not in text and "labels:" not in text
