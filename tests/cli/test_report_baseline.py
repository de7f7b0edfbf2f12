"""`contam report` on scans run with a baseline: the findings' states carried through
conservatively, the scan's gate (--fail-on) by default, --baseline on report itself; a new
finding always gates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import CD, assert_valid_report
from typer.testing import CliRunner

from contam_cli.cli import app

runner = CliRunner()
BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
RENAME = ("--method-name", "2:longest_run=run2", "--method-name", "2:overlap_fraction=ov2")


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A baseline accepting q1 and q2, one accepting q1 alone, and the scans' reports: with
    each (under --fail-on new and any) and without one."""
    d = tmp_path_factory.mktemp("rb")
    out = {"both": d / "both.json", "q1": d / "q1.json"}
    r = run("scan", BENCH, "-c", CORPUS, "--write-baseline", out["both"], "--no-fail")
    assert r.exit_code == 0, r.output
    doc = json.loads(out["both"].read_text())
    doc["findings"] = [f for f in doc["findings"] if f["id"] == "q1"]
    assert len(doc["findings"]) == 1
    out["q1"].write_text(json.dumps(doc))
    for name, args, code in [
        ("accepted", ("--baseline", out["both"]), 0),
        ("accepted_any", ("--baseline", out["both"], "--fail-on", "any"), 1),
        ("one_new", ("--baseline", out["q1"]), 1),
        ("plain", (), 1),
        ("nocase", ("--no-casefold",), 1),
    ]:
        out[name] = d / f"{name}.json"
        r = run("scan", BENCH, "-c", CORPUS, "--report", out[name], *args)
        assert r.exit_code == code, r.output
    return out


def report_json(*args: object) -> tuple[int, dict[str, Any]]:
    r = run("report", *args, "--format", "json", "--bootstrap", "10")
    assert r.exit_code in (0, 1), r.output
    return r.exit_code, json.loads(r.stdout)


def states(doc: dict[str, Any]) -> dict[str, str]:
    return {e["id"]: e["details"]["baseline"]["state"] for e in doc["examples"] if e["flagged"]}


def test_accepted_findings_stay_findings_and_pass_the_scans_gate(files: dict[str, Path]) -> None:
    # The scan exited 0 (every finding accepted, --fail-on new); report exited 1 on the same.
    code, doc = report_json(files["accepted"])
    assert code == 0
    assert states(doc) == {"q1": "accepted", "q2": "accepted"}
    assert doc["summary"]["flagged"] == 2
    base = doc["summary"]["baseline"]
    assert (base["new"], base["accepted"], base["fail_on"]) == (0, 2, "new")
    assert_valid_report(doc)
    with pytest.raises(jsonschema.ValidationError):
        assert_valid_report(
            {**doc, "summary": {**doc["summary"], "baseline": {**base, "fail_on": 1}}}
        )
    table = run("report", files["accepted"], "--bootstrap", "10")
    assert table.exit_code == 0, table.output
    assert "accepted" in table.stdout and "0 new, 2 accepted" in table.stdout
    assert run("report", files["accepted"], "--fail-on", "any").exit_code == 1
    assert run("report", files["accepted"], "--fail-on", "none").exit_code == 0


def test_the_scans_fail_on_any_is_the_default(files: dict[str, Path]) -> None:
    code, doc = report_json(files["accepted_any"])
    assert code == 1 and doc["summary"]["baseline"]["fail_on"] == "any"
    assert run("report", files["accepted_any"], "--fail-on", "new").exit_code == 0


def test_a_new_finding_stays_gating(files: dict[str, Path]) -> None:
    code, doc = report_json(files["one_new"])
    assert code == 1
    assert states(doc) == {"q1": "accepted", "q2": "new"}
    assert run("report", files["one_new"], "--fail-on", "new").exit_code == 1


def test_an_input_without_a_baseline_makes_its_findings_new(files: dict[str, Path]) -> None:
    # The first input's "accepted" was copied into the combined report whatever the second said.
    for order in ((files["accepted"], files["plain"]), (files["plain"], files["accepted"])):
        code, doc = report_json(*order, *RENAME)
        assert code == 1
        assert states(doc) == {"q1": "new", "q2": "new"}
        assert doc["summary"]["baseline"]["new"] == 2


def test_a_finding_of_the_combined_rule_alone_is_new(
    files: dict[str, Path], tmp_path: Path
) -> None:
    scores = tmp_path / "s.jsonl"
    rows = [{"id": f"q{k}", **{f"m{m}": 10 * (k == 3) for m in range(5)}} for k in range(1, 6)]
    scores.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, doc = report_json(files["accepted"], scores, "--threshold", "1")
    assert code == 1
    assert states(doc) == {"q1": "accepted", "q2": "accepted", "q3": "new"}


def test_baseline_on_report_matches_by_fingerprint(files: dict[str, Path]) -> None:
    code, doc = report_json(files["plain"], "--baseline", files["both"])
    assert code == 0 and states(doc) == {"q1": "accepted", "q2": "accepted"}
    assert doc["summary"]["baseline"]["fail_on"] == "new"
    code, doc = report_json(files["plain"], "--baseline", files["q1"])
    assert code == 1 and states(doc) == {"q1": "accepted", "q2": "new"}
    assert run("report", files["plain"], "--baseline", files["both"], "--fail-on", "any").exit_code
    sarif = run("report", files["plain"], "--baseline", files["q1"], "-f", "sarif")
    found = json.loads(sarif.stdout)["runs"][0]["results"]
    assert sorted(r["baselineState"] for r in found) == ["new", "unchanged"]


def test_baseline_on_report_refusals(files: dict[str, Path], tmp_path: Path) -> None:
    per_source = tmp_path / "ps.json"
    r = run("scan", BENCH, "-c", CORPUS, "--write-baseline", per_source, "--baseline-per-source")
    assert per_source.exists(), r.output
    r = run("report", files["plain"], "--baseline", per_source)
    assert r.exit_code == 2 and "per-source baseline" in r.output
    assert len(r.output.strip().splitlines()) == 1
    r = run("report", files["plain"], files["nocase"], *RENAME, "--baseline", files["both"])
    assert r.exit_code == 2 and "disagree on normalization" in r.output, r.output
    r = run("report", files["plain"], "--no-fail", "--fail-on", "any")
    assert r.exit_code == 2
