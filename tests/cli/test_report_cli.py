"""`contam report` on the command line: exit codes 0/1/2, every format, --redact in every one,
-o and --report written atomically (never over an input), one-line errors naming file and line."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import CD, FIXTURES, assert_valid_report
from typer.testing import CliRunner

from contam_cli import scan
from contam_cli.engine.options import ScanOptions
from contam_cli.features.eval_texts import attach_eval_texts
from contam_cli.report import save_report

runner = CliRunner()
BENCH = CD / "examples" / "benchmark.jsonl"
SCORES = str(FIXTURES / "report" / "scores.jsonl")
LABELS = str(FIXTURES / "report" / "labels.jsonl")
#: Words of the leaked eval examples and of the corpus text they matched.
PLANTED = ("Canberra", "photon", "three hundred million")
FLAGS = ("--direction", "perplexity=lower", "--bootstrap", "100")


def run(*args: str) -> Any:
    from contam_cli.cli import app

    return runner.invoke(app, ["report", *args])


@pytest.fixture(scope="module")
def scan_json(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The bundled fixture scanned (with its eval texts), saved as a report."""
    report = scan(str(BENCH), str(CD / "examples" / "corpus"))
    report = attach_eval_texts(report, str(BENCH), ScanOptions())
    path = tmp_path_factory.mktemp("report") / "scan.json"
    save_report(report, path)
    return str(path)


def test_flags_exit_1_and_no_fail(scan_json: str) -> None:
    result = run(scan_json, SCORES, "--labels", LABELS, *FLAGS, "--threshold", "1")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["id", "combined", "longest_run"]
    assert lines[1].split()[:2] == ["q1", "1.276"] and "FLAGGED" in lines[1]
    assert lines[-1] == "5 examples: 2 flagged, 3 clean, 0 unscorable"
    no_fail = run(scan_json, SCORES, *FLAGS, "--threshold", "1", "--no-fail")
    assert no_fail.exit_code == 0, no_fail.output


def test_what_the_scan_flagged_stays_flagged(scan_json: str) -> None:
    # At the default threshold the combined z-scores flag nothing; the scan's verbatim leaks
    # (overlap 1.0) are findings all the same: a gate passed them with exit 0 before.
    result = run(scan_json, SCORES, *FLAGS, "--format", "json")
    assert result.exit_code == 1, result.output
    doc = assert_valid_report(result.stdout)
    flagged = {e["id"]: [r["rule"] for r in e["reasons"]] for e in doc["examples"] if e["flagged"]}
    assert flagged == {"q1": ["min-overlap"], "q2": ["min-overlap"]}
    assert doc["config"]["input_rules"] is True
    assert not any("not flagged by the combined rule" in w for w in doc["warnings"])
    both = run(scan_json, SCORES, *FLAGS, "--threshold", "1", "--format", "json")
    reasons = [[r["rule"] for r in e["reasons"]] for e in json.loads(both.stdout)["examples"]]
    assert reasons[:2] == [["combined-zscore", "min-overlap"]] * 2


def test_combined_only_flags_on_the_combined_rule_and_warns(scan_json: str) -> None:
    result = run(scan_json, SCORES, *FLAGS, "--combined-only")
    assert result.exit_code == 0, result.output
    assert "0 flagged" in result.stdout
    assert "its own rules flagged are not flagged by the combined rule: q1, q2" in result.stderr
    assert "without --combined-only, they are flagged" in result.stderr


def test_json_validates_and_holds_the_combination(scan_json: str) -> None:
    args = (scan_json, SCORES, "--labels", LABELS, *FLAGS, "--prevalence", "0.01")
    result = run(*args, "--format", "json", "--documents", "10000")
    assert result.exit_code == 1, result.output
    doc = assert_valid_report(result.stdout)
    combination = doc["summary"]["combination"]
    assert combination["methods"]["perplexity"]["direction"] == "lower"
    assert combination["deployment"]["documents"] == 10_000
    assert [r["method"] for r in combination["deployment"]["rows"]][-1] == "combined"
    assert doc["examples"][0]["details"]["label"] == {"label": 1}


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html", "sarif"])
def test_redact_in_every_format(scan_json: str, fmt: str, tmp_path: Path) -> None:
    module = {"html": "contam_cli.render.html", "sarif": "contam_cli.render.sarif"}.get(fmt)
    if module is not None and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not written yet (another engineer's module)")
    args = (scan_json, SCORES, *FLAGS, "--threshold", "1", "--format", fmt, "--no-fail")
    plain = run(*args)
    assert plain.exit_code == 0, plain.output
    if fmt in ("json", "markdown", "html"):
        assert any(word in plain.stdout for word in PLANTED), fmt
    redacted = run(*args, "--redact", "--report", str(tmp_path / "r.json"))
    assert redacted.exit_code == 0, redacted.output
    written = (tmp_path / "r.json").read_text(encoding="utf-8")
    for text in (redacted.stdout, written):
        assert not any(word in text for word in PLANTED), fmt


def test_output_file_and_report_atomic_never_over_an_input(scan_json: str, tmp_path: Path) -> None:
    out, rep = tmp_path / "summary.md", tmp_path / "combined.json"
    result = run(scan_json, SCORES, *FLAGS, "-f", "markdown", "-o", str(out), "--report", str(rep))
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert out.read_text(encoding="utf-8").startswith("# contam report: ")
    assert_valid_report(rep.read_bytes())
    before = Path(SCORES).read_bytes()
    clash = run(scan_json, SCORES, *FLAGS, "-o", SCORES)
    assert clash.exit_code == 2 and "refusing to overwrite the input" in clash.stderr
    assert Path(SCORES).read_bytes() == before


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"id": "q1", "m": 1}\n{"id": "q2", "m": "x"}\n', "bad.jsonl:2: score 'm' is 'x'"),
        ('{"id": "q1", "m": 1}\n{"id": "q1", "m": 2}\n', "bad.jsonl:2: duplicate id 'q1'"),
        ('{"name": 1}\n', 'bad.jsonl:1: no "id"'),
    ],
)
def test_bad_input_is_one_line_naming_file_and_line(
    scan_json: str, tmp_path: Path, text: str, where: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text, encoding="utf-8", newline="\n")
    result = run(scan_json, str(bad))
    assert result.exit_code == 2
    assert result.stderr.startswith("contam: error: ") and where in result.stderr
    assert result.stderr.count("\n") == 1


def test_a_warning_is_one_line_with_an_id_s_control_characters_escaped(
    scan_json: str, tmp_path: Path
) -> None:
    labels = tmp_path / "labels.jsonl"
    ghost = json.dumps({"id": "gh\x1b[2Jost\nnext :smile:", "label": 1})
    labels.write_text(Path(LABELS).read_text(encoding="utf-8") + ghost + "\n", encoding="utf-8")
    result = run(scan_json, SCORES, "--labels", str(labels), *FLAGS)
    assert result.exit_code == 1, result.output
    line = "contam: warning: 1 labelled id(s) are in no input: gh\\x1b[2Jost next :smile:\n"
    assert line in result.stderr and "\x1b" not in result.stderr


def test_not_a_report(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"hello": 1}, indent=2), encoding="utf-8", newline="\n")
    result = run(str(bad))
    assert result.exit_code == 2 and "neither a contam report" in result.stderr


def test_usage_errors_exit_2(scan_json: str) -> None:
    assert "needs --labels" in run(scan_json, SCORES, "--weight-by-auc").stderr
    twice = run(scan_json, scan_json)
    assert twice.exit_code == 2 and "--method-name INPUT:longest_run=NEW" in twice.stderr
    renamed = run(
        scan_json,
        scan_json,
        "--method-name",
        "2:longest_run=run_2",
        "--method-name",
        "2:overlap_fraction=overlap_2",
        "-f",
        "json",
    )
    assert renamed.exit_code == 1, renamed.output
    assert "run_2" in json.loads(renamed.stdout)["examples"][0]["scores"]
    assert run(scan_json, "--direction", "longest_run=up").exit_code == 2
    assert run(scan_json, SCORES, "--format", "xml").exit_code == 2


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "sarif"])
def test_a_report_that_scored_nothing_exits_2_and_writes_nothing(tmp_path: Path, fmt: str) -> None:
    # Every score null: no example was judged, so the gate has no verdict (it printed "no
    # contamination flagged" and exited 0, the one answer it must never give wrongly).
    scores = tmp_path / "allnull.jsonl"
    scores.write_text('{"id": "a", "m": null}\n{"id": "b", "m": null}\n')
    out = tmp_path / "r.json"
    result = run(str(scores), "--format", fmt, "--report", str(out))
    assert result.exit_code == 2, result.output
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(f"contam: error: {scores}: no eval example could be scored")
    assert not out.exists()
    one = tmp_path / "one.jsonl"
    one.write_text('{"id": "a", "m": null}\n{"id": "b", "m": 2.0}\n')
    assert run(str(one), "--format", fmt).exit_code == 0  # one scored example is a verdict
