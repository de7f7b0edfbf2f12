"""Every report contam writes validates against the JSON Schema it ships."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import orjson
import pytest
from conftest import CD, DECONTAM, assert_valid_report
from hypothesis import given, settings
from test_report_model import _report, tables
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.report import iter_json

BENCH = str(CD / "examples" / "benchmark.jsonl")
MIXED = str(CD / "derived" / "mixed_examples.jsonl")
CORPUS = str(CD / "examples" / "corpus")


def _cli(*args: object) -> bytes:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code in (0, 1), result.output
    return result.stdout_bytes


@pytest.mark.parametrize(
    "args",
    [
        ("scan", BENCH, "--corpus", CORPUS, "--json"),
        ("scan", MIXED, "--corpus", CORPUS, "--json", "--redact"),
        ("scan", MIXED, "--source", f"a={CORPUS}", "--source", f"b={CORPUS}", "--json"),
        (
            "scan",
            str(DECONTAM / "eval.jsonl"),
            "-c",
            str(DECONTAM / "train_chat.jsonl"),
            "-n",
            8,
            "--json",
            "--threshold",
            1.0,
        ),
    ],  # fmt: skip
    ids=["scan", "redacted", "sources", "chat-zscore"],
)
def test_scan_reports_validate(args: tuple[object, ...]) -> None:
    doc = assert_valid_report(_cli(*args))
    assert doc["summary"]["examples"] == len(doc["examples"])


def test_index_and_clean_reports_validate(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    assert CliRunner().invoke(app, ["index", "build", "-c", CORPUS, "-o", str(idx)]).exit_code == 0
    assert_valid_report(_cli("scan", BENCH, "--index", idx, "--json"))
    report = tmp_path / "clean.json"
    _cli("clean", BENCH, "-c", CORPUS, "-o", tmp_path / "out.jsonl", "--report", report)
    assert_valid_report(report.read_bytes())


@settings(max_examples=40, deadline=None)
@given(tables())
def test_random_reports_validate(table) -> None:  # noqa: ANN001
    assert_valid_report(b"".join(iter_json(_report(table))))


def test_the_schema_rejects_what_is_not_a_report() -> None:
    doc = orjson.loads(_cli("scan", BENCH, "--corpus", CORPUS, "--json"))
    doc["examples"][0]["scores"]["longest_run"] = "23"
    with pytest.raises(jsonschema.ValidationError):
        assert_valid_report(doc)
