"""`contam bench`: Markdown or JSON to stdout or a file, exit 0; usage errors exit 2."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner, Result

from contam_cli.cli import app

runner = CliRunner()
QUICK = ["--seeds", "1", "--n", "13", "--detectors", "ngram", "--no-progress"]


def run(*args: object) -> Result:
    return runner.invoke(app, ["bench", *(str(a) for a in args)])


def test_markdown_to_stdout_exits_0() -> None:
    result = run(*QUICK)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("## contam bench\n")
    # NOTE: the line that reruns it names the detectors it was limited to.
    line = "contam bench --seeds 1 --prevalence 0.01 --documents 10000 --n 13 --detectors ngram"
    assert f"`{line}`" in result.stdout


def test_json_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    result = run(
        *QUICK, "--format", "json", "--prevalence", "0.05", "--documents", "500", "-o", out
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    doc = orjson.loads(out.read_bytes())
    assert doc["schema"] == "contam.bench/1"
    assert doc["config"]["prevalence"] == 0.05 and doc["config"]["documents"] == 500
    assert {r["signal"] for r in doc["rows"]} == {
        "overlap_fraction",
        "longest_run",
        "defaults",
        "zscore",
    }


def test_progress_on_request_leaves_stdout_alone() -> None:
    result = run(*QUICK[:-1], "--progress", "--format", "json")
    assert result.exit_code == 0, result.output
    assert orjson.loads(result.stdout)["schema"] == "contam.bench/1"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--n", "x"], "--n expects n-gram sizes"),
        (["--n", "0"], "--n must list"),
        (["--detectors", "nope"], "unknown detector"),
        (["--methods", "ppl"], "give --model too"),
        (["--seeds", "0"], "--seeds"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    result = run(*QUICK, *args)
    assert result.exit_code == 2 and message in result.output, result.output
