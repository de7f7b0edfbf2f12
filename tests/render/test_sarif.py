"""SARIF 2.1.0: valid against the OASIS schema, one rule per reason kind, fingerprints, locations,
unscorable examples as notes (not errors), redaction, baselines, determinism."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from report_builders import (
    BENCHMARK,
    MIXED,
    PLANTED,
    ROOT,
    all_reports,
    combined_report,
    hostile_report,
    scan_report,
)

from contam_cli.engine.evidence import Evidence
from contam_cli.errors import ArgumentError
from contam_cli.render.sarif import FINGERPRINT_KEY, MAX_NOTES, render_sarif
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report

SCHEMA = ROOT / "tests" / "data" / "sarif-schema-2.1.0.json"
REPORTS = all_reports()


@cache
def validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    assert cls is jsonschema.Draft4Validator  # what the schema declares
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def sarif(report: Report, **kwargs: Any) -> dict[str, Any]:
    text = render_sarif(report, root=ROOT, **kwargs)
    doc = json.loads(text)
    validator().validate(doc)
    return doc


def run_of(doc: dict[str, Any]) -> dict[str, Any]:
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1
    run: dict[str, Any] = doc["runs"][0]
    return run


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_every_report_is_valid_sarif_with_one_result_per_flagged_example(name: str) -> None:
    report = REPORTS[name]
    run = run_of(sarif(report))
    assert run["tool"]["driver"]["name"] == "contam"
    assert run["tool"]["driver"]["version"] == report.tool_version
    results = run["results"]
    assert len(results) == report.summary()["flagged"]
    assert all(r["level"] == "error" and r["kind"] == "fail" for r in results)
    assert [r["partialFingerprints"][FINGERPRINT_KEY] for r in results] == [
        e.fingerprint for e in report.flagged
    ]
    assert [r["properties"]["exampleId"] for r in results] == [e.id for e in report.flagged]


def _multi_rule_report() -> Report:
    n = 4
    reasons = {
        0: [Reason("min-overlap", 0.9, 0.5), Reason("min-run", 40, 30)],
        1: [Reason("min-run", 35, 30)],
        3: [Reason("source-run", 50, 40, "web"), Reason("min-overlap", 0.7, 0.5)],
    }
    table = ExampleTable(
        ids=["a", "b", "c", "d"],
        eval_paths=["/elsewhere/eval.jsonl", str(ROOT / "evals" / "x y.jsonl"), "e", "e"],
        eval_lines=[3, None, 1, 9],
        fingerprints=[f"{i:032x}" for i in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": [40, 35, 0, 50], "overlap_fraction": [0.9, 0.2, 0.0, 0.7]},
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=[True] * n,
            n_tokens=[60] * n,
            total_ngrams=[48] * n,
            matched_ngrams=[43, 10, 0, 34],
            zscore=[1.0, 0.0, -1.0, 0.5],
        ),
    )
    return Report(examples=table)


def test_one_rule_per_reason_kind_and_results_name_their_first() -> None:
    run = run_of(sarif(_multi_rule_report()))
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["ngram/min-overlap", "ngram/min-run", "ngram/source-run"]
    for rule in rules:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] == "error"
    results = run["results"]
    assert [r["ruleId"] for r in results] == [
        "ngram/min-overlap",
        "ngram/min-run",
        "ngram/source-run",
    ]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    assert "overlap 0.900 >= 0.5; run 40 >= 30" in results[0]["message"]["text"]
    assert [x["rule"] for x in results[2]["properties"]["reasons"]] == [
        "source-run",
        "min-overlap",
    ]


def test_locations_are_relative_below_the_root_and_line_one_when_unknown() -> None:
    results = run_of(sarif(_multi_rule_report()))["results"]
    where = [r["locations"][0]["physicalLocation"] for r in results]
    assert where[0] == {
        "artifactLocation": {"uri": "file:///elsewhere/eval.jsonl"},
        "region": {"startLine": 3},
    }
    assert where[1] == {
        "artifactLocation": {"uri": "evals/x%20y.jsonl"},
        "region": {"startLine": 1},
    }
    assert where[2]["artifactLocation"] == {"uri": "e"} and where[2]["region"]["startLine"] == 9


def test_a_scan_result_points_at_the_eval_line_with_the_corpus_as_related() -> None:
    report = scan_report()
    results = run_of(sarif(report))["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [1, 2]
    uri = BENCHMARK.relative_to(ROOT).as_posix()
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri
    related = results[0]["relatedLocations"][0]["physicalLocation"]
    assert related["artifactLocation"]["uri"].endswith("corpus/doc_contaminated.txt")
    assert related["region"] == {"startLine": 3}
    text = results[0]["message"]["text"]
    for part in ("q1", "overlap 1.000 >= 0.5", "doc_contaminated.txt:3", "run of 23 tokens"):
        assert part in text
    assert 'Leaked text: "The capital of Australia is Canberra' in text
    assert results[0]["properties"]["scores"] == {"longest_run": 23, "overlap_fraction": 1.0}


def test_unscorable_examples_are_notes_not_results() -> None:
    report = scan_report(MIXED)
    run = run_of(sarif(report))
    assert {r["properties"]["exampleId"] for r in run["results"]} == {"2", "7"}
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["note"]
    assert notes[0]["descriptor"]["id"] == "contam/unscorable"
    assert "s1 is unscorable (2 tokens)" in notes[0]["message"]["text"]
    assert notes[0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert run["invocations"][0]["executionSuccessful"] is True


def test_many_unscorable_examples_are_capped_with_a_count() -> None:
    n = MAX_NOTES + 5
    table = ExampleTable(
        ids=[str(i) for i in range(n)],
        eval_paths=["e.jsonl"] * n,
        eval_lines=list(range(1, n + 1)),
        fingerprints=["0" * 32] * n,
        methods=NGRAM_METHODS,
        scores={"longest_run": [None] * n, "overlap_fraction": [None] * n},
        ngram=NgramColumns.build(
            scorable=[False] * n, n_tokens=[2] * n, total_ngrams=[0] * n,
            matched_ngrams=[0] * n, zscore=[0.0] * n,
        ),
    )  # fmt: skip
    notes = run_of(sarif(Report(examples=table)))["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == MAX_NOTES + 1
    assert notes[-1]["message"]["text"].startswith("5 more eval examples are unscorable")


def test_warnings_are_warning_notifications() -> None:
    notes = run_of(sarif(hostile_report()))["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "warning" and notes[0]["descriptor"]["id"] == "contam/warning"


def test_braces_in_messages_are_doubled_never_read_as_placeholders() -> None:
    # SARIF 2.1.0 §3.11.5: "{0}" in a message is a placeholder; literal braces are doubled.
    ev = Evidence("we{b}", "c.txt", 2, 0, "d", 0, 0, 10, 0, 0, 3, "f(x) = {0}")
    table = ExampleTable(
        ids=["q{0}", "u{1}"],
        eval_paths=["e.jsonl"] * 2,
        eval_lines=[1, 2],
        fingerprints=["a" * 32, "b" * 32],
        methods=NGRAM_METHODS,
        scores={"longest_run": [3, None], "overlap_fraction": [1.0, None]},
        reasons={0: [Reason("min-overlap", 1.0, 0.5)]},
        ngram=NgramColumns.build(
            scorable=[True, False],
            n_tokens=[9, 1],
            total_ngrams=[1, 0],
            matched_ngrams=[1, 0],
            zscore=[0.0, None],
            best_source={0: "we{b}"},
            evidence={0: ev},
        ),
    )
    run = run_of(sarif(Report(examples=table, warnings=("warn {2}",))))
    result = run["results"][0]
    assert result["message"]["text"].startswith("Eval example q{{0}} is in the training data")
    assert result["message"]["text"].endswith('Leaked text: "f(x) = {{0}}"')
    assert result["relatedLocations"][0]["message"]["text"].endswith("source we{{b}}")
    notes = [n["message"]["text"] for n in run["invocations"][0]["toolExecutionNotifications"]]
    assert notes[0] == "warn {{2}}" and notes[1].startswith("Eval example u{{1}} is unscorable")
    assert result["properties"]["exampleId"] == "q{0}"  # a property, not a message: as it is


@pytest.mark.parametrize("name", ["scan-redacted", "hostile-redacted"])
def test_a_redacted_report_gives_no_eval_or_corpus_text(name: str) -> None:
    report = REPORTS[name]
    text = render_sarif(report, root=ROOT)
    for words in (*PLANTED, "Leak", "bold", "alert(1)"):
        assert words not in text
    assert "Leaked text" not in text
    results = json.loads(text)["runs"][0]["results"]
    assert results and all("evidence" in r["properties"] for r in results)


def test_a_combined_report_names_its_reasons_and_scores() -> None:
    report = combined_report()
    run = run_of(sarif(report))
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["report/combined-zscore"]
    first = run["results"][0]
    assert "was flagged: combined-zscore" in first["message"]["text"]
    assert "Scores: combined " in first["message"]["text"]
    assert "relatedLocations" not in first


def test_a_baseline_gives_every_result_a_state() -> None:
    report = scan_report()
    fp = report.flagged[0].fingerprint
    results = run_of(sarif(report, baseline={fp: "unchanged"}))["results"]
    assert [r["baselineState"] for r in results] == ["unchanged", "new"]
    assert all("baselineState" not in r for r in run_of(sarif(report))["results"])
    with pytest.raises(ArgumentError, match="baseline"):
        render_sarif(report, baseline={fp: "accepted"})


def test_the_output_is_deterministic_and_has_no_timestamps(tmp_path: Path) -> None:
    report = combined_report()
    first = render_sarif(report, root=ROOT)
    assert first == render_sarif(report, root=ROOT)
    assert "Utc" not in first  # startTimeUtc, endTimeUtc, timeUtc
    doc = json.loads(first)
    assert json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n" == first
