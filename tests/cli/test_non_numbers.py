"""One rule for the numbers contam reads from score and outcome files: null (JSON null, an
empty CSV cell, NA) is a missing score where a score may be missing (``contam report``; an
impact outcome may not), and NaN or an infinity, as a number or as text, is always an error
naming the file and line (a score gone wrong, never "not scored"); nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from contam_cli.cli import app

runner = CliRunner()
BAD = ["nan", "NaN", "inf", "-Infinity"]


def _scores(tmp_path: Path, suffix: str, value: str) -> Path:
    path = tmp_path / f"s{suffix}"
    if suffix == ".csv":
        path.write_text(f"id,m\nq1,1\nq2,{value}\nq3,0.5\n", encoding="utf-8")
    else:
        cell = "null" if value == "null" else json.dumps(value)
        rows = ['{"id": "q1", "m": 1}', f'{{"id": "q2", "m": {cell}}}', '{"id": "q3", "m": 0.5}']
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize("value", BAD)
def test_report_refuses_nan_and_infinities_naming_file_and_line(
    tmp_path: Path, suffix: str, value: str
) -> None:
    path = _scores(tmp_path, suffix, value)
    out = tmp_path / "out.json"
    result = runner.invoke(
        app, ["report", str(path), "-o", str(tmp_path / "o"), "--report", str(out)]
    )
    assert result.exit_code == 2
    line = 3 if suffix == ".csv" else 2
    number = repr(float(value))
    assert result.stderr == (
        f"contam: error: {path}:{line}: score 'm' is {number}, expected a finite number "
        "(null or an empty cell: not scored)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


@pytest.mark.parametrize(("suffix", "value"), [(".csv", ""), (".csv", "NA"), (".jsonl", "null")])
def test_report_reads_null_as_not_scored(tmp_path: Path, suffix: str, value: str) -> None:
    path = _scores(tmp_path, suffix, value)
    out = tmp_path / "out.json"
    result = runner.invoke(app, ["report", str(path), "--report", str(out)])
    assert result.exit_code == 0, result.output
    scores = {e["id"]: e["scores"]["m"] for e in json.loads(out.read_bytes())["examples"]}
    assert scores == {"q1": 1.0, "q2": None, "q3": 0.5}


@pytest.fixture(scope="module")
def impact_scan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    report = tmp_path_factory.mktemp("impact") / "scan.json"
    d = FIXTURES / "impact"
    args = ["scan", str(d / "eval.jsonl"), "--source", f"web={d / 'web.jsonl'}"]
    result = runner.invoke(app, [*args, "--report", str(report), "--no-fail"])
    assert result.exit_code == 0, result.output
    return report


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
@pytest.mark.parametrize("value", [*BAD, "null"])
def test_impact_refuses_nan_infinities_and_missing_outcomes(
    tmp_path: Path, impact_scan: Path, suffix: str, value: str
) -> None:
    ids = [json.loads(ln)["id"] for ln in (FIXTURES / "impact" / "eval.jsonl").open()]
    path = tmp_path / f"r{suffix}"
    if suffix == ".csv":
        cell = "" if value == "null" else value
        rows = [f"{i},{cell if k == 3 else 1}" for k, i in enumerate(ids)]
        path.write_text("id,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    else:
        cell = "null" if value == "null" else json.dumps(value)
        rows = [f'{{"id": {i}, "score": {cell if k == 3 else 1}}}' for k, i in enumerate(ids)]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = tmp_path / "impact.json"
    result = runner.invoke(app, ["impact", str(impact_scan), "-r", str(path), "-o", str(out)])
    assert result.exit_code == 2
    line = 5 if suffix == ".csv" else 4
    [message] = result.stderr.splitlines()
    assert message.startswith(f"contam: error: {path}:{line}: 'score' is ")
    assert message.endswith(", expected a finite number")
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]
