"""--format github: escaping (a table of tricky ids and paths), at most 10 annotations of a kind
with a notice for the rest, no benchmark text when redacted, chosen by itself under GitHub Actions
unless a format is asked for; the step summary appended, never truncated, its failure a warning;
SARIF with the baseline's states, valid against the 2.1.0 schema."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from conftest import CD, ROOT
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.render import OutputFormat, render
from contam_cli.render.github import MAX_PER_KIND, command, escape_data, escape_property
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
LEAKED = ("Canberra", "photon", "Melbourne", "three hundred million")
runner = CliRunner()


def run(*args: object, env: dict[str, str] | None = None):  # noqa: ANN201
    return runner.invoke(app, [str(a) for a in args], env=env)


def _parse(line: str) -> tuple[str, dict[str, str], str]:
    """A workflow command as the runner reads it: kind, unescaped properties, unescaped data."""
    m = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
    assert m, line

    def un(s: str) -> str:
        for k, v in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
            s = s.replace(k, v)
        return s

    props = {}
    for part in (m.group(2) or "").split(","):
        if part:
            key, _, value = part.partition("=")
            props[key] = un(value)
    return m.group(1), props, un(m.group(3))


TRICKY = [
    ("plain", "q1", "evals/a.jsonl"),
    ("colon and comma", "set:1,2", "evals/a:b,c.jsonl"),
    ("percent", "100%", "evals/50%.jsonl"),
    ("percent escapes", "%0A%25", "evals/%3A.jsonl"),
    ("newlines", "a\nb\r\nc", "evals/x\ny.jsonl"),
    ("a forged command", "x\n::error::forged", "e::warning::w.jsonl"),
    ("double colon", "::add-mask::secret", "::stop-commands::tok"),
    ("unicode", "ид 問題 ", "evals/données.jsonl"),
]


def _report(
    ids: list[str], paths: list[str], *, redact: bool = False, n: int | None = None
) -> Report:
    n = len(ids) if n is None else n
    table = ExampleTable(
        ids=ids,
        eval_paths=paths,
        eval_lines=list(range(1, n + 1)),
        fingerprints=[f"{i:032x}" for i in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": list(range(40, 40 + n)), "overlap_fraction": [1.0] * n},
        reasons={i: [Reason("min-run", 40 + i, 30)] for i in range(n)},
        ngram=NgramColumns.build(
            scorable=[True] * n,
            n_tokens=[50] * n,
            total_ngrams=[10] * n,
            matched_ngrams=[10] * n,
            zscore=[0.0] * n,
        ),  # fmt: skip
    )
    return Report(examples=table, config={"n": 13}, redact=redact)


@pytest.mark.parametrize("name, id_, path", TRICKY, ids=[t[0] for t in TRICKY])
def test_values_are_escaped_so_the_runner_reads_them_back_whole(
    name: str, id_: str, path: str, tmp_path: Path
) -> None:
    text = render(_report([id_], [path]), OutputFormat.github)
    lines = text.splitlines()
    assert len(lines) == 2, text  # one annotation and the summary line, whatever the values
    kind, props, data = _parse(lines[0])
    assert kind == "error" and props["file"] == path and props["line"] == "1"
    assert " ".join(id_.split()) in " ".join(props["title"].split())  # a title is one line
    assert f"Eval example {id_} was flagged" in data
    assert not lines[1].startswith("::")


def test_escaping_rules() -> None:
    assert escape_data("a%b\r\nc:d,e") == "a%25b%0D%0Ac:d,e"
    assert escape_property("a%b\r\nc:d,e") == "a%25b%0D%0Ac%3Ad%2Ce"
    assert command("notice", "m", file=None, title="t:1") == "::notice title=t%3A1::m"
    assert command("warning", "m") == "::warning::m"


def test_control_characters_never_reach_the_log() -> None:
    # NOTE: the runner's log reads ANSI sequences: an ESC in an id or a path was written as is.
    text = render(_report(["q\x1b[2J\x00\x9b\x7f\tz"], ["ev\x1bx.jsonl"]), OutputFormat.github)
    assert not [c for c in text if (c < " " and c not in "\t\n") or "\x7f" <= c <= "\x9f"]
    _, props, data = _parse(text.splitlines()[0])
    assert props["file"] == "ev\\x1bx.jsonl"
    assert "q\\x1b[2J\\x00\\x9b\\x7f\tz" in props["title"] and "q\\x1b[2J" in data
    assert escape_data("\x1b\t") == "\\x1b\t"


def test_at_most_ten_errors_the_most_suspicious_and_a_notice_for_the_rest() -> None:
    n = 25
    text = render(_report([f"e{i}" for i in range(n)], ["a.jsonl"] * n), OutputFormat.github)
    errors = [ln for ln in text.splitlines() if ln.startswith("::error")]
    assert len(errors) == MAX_PER_KIND == 10
    # the longest runs first: e24 (run 64) down to e15
    assert [_parse(e)[1]["line"] for e in errors] == [str(i) for i in range(25, 15, -1)]
    notices = [ln for ln in text.splitlines() if ln.startswith("::notice")]
    assert len(notices) == 1 and "15 more new findings" in notices[0]


def test_at_most_ten_warnings_with_a_notice() -> None:
    n = 14
    table = ExampleTable(
        ids=[f"s{i}" for i in range(n)],
        eval_paths=["a.jsonl"] * n,
        eval_lines=list(range(1, n + 1)),
        fingerprints=[f"{i:032x}" for i in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": [np.nan] * n, "overlap_fraction": [np.nan] * n},
        ngram=NgramColumns.build(
            scorable=[False] * n,
            n_tokens=[2] * n,
            total_ngrams=[0] * n,
            matched_ngrams=[0] * n,
            zscore=[0.0] * n,
        ),  # fmt: skip
    )
    report = Report(examples=table, config={"n": 13}, warnings=("w1", "w2"))
    lines = render(report, OutputFormat.github).splitlines()
    warnings = [ln for ln in lines if ln.startswith("::warning")]
    assert len(warnings) == 10 and _parse(warnings[0])[2] == "w1"
    assert "(2 tokens, fewer than n=13)" in _parse(warnings[2])[2]
    notices = [ln for ln in lines if ln.startswith("::notice")]
    assert len(notices) == 1 and "6 more warnings and unscorable examples" in notices[0]
    assert not [ln for ln in lines if ln.startswith("::error")]


def test_redacted_annotations_hold_no_benchmark_text() -> None:
    plain = run("scan", BENCH, "-c", CORPUS, "--format", "github")
    assert plain.exit_code == 1 and any(w in plain.stdout for w in LEAKED), plain.output
    hidden = run("scan", BENCH, "-c", CORPUS, "--format", "github", "--redact")
    assert hidden.exit_code == 1, hidden.output
    assert not any(w in hidden.stdout for w in LEAKED)
    assert hidden.stdout.count("::error ") == 2
    assert hidden.stdout.splitlines()[-1] == "contam: 5 examples: 2 flagged, 3 clean, 0 unscorable"


def test_github_is_the_default_under_github_actions_and_an_explicit_format_wins() -> None:
    gha = {"GITHUB_ACTIONS": "true"}
    auto = run("scan", BENCH, "-c", CORPUS, env=gha)
    assert auto.exit_code == 1 and auto.stdout.startswith("::error file="), auto.output
    for explicit in (("--format", "table"), ("-f", "table")):
        table = run("scan", BENCH, "-c", CORPUS, *explicit, env=gha)
        assert table.stdout.startswith("id  overlap"), table.output
    as_json = run("scan", BENCH, "-c", CORPUS, "--json", env=gha)
    assert json.loads(as_json.stdout)["schema"] == "contam.report/2"
    local = run("scan", BENCH, "-c", CORPUS)
    assert local.stdout.startswith("id  overlap")


def test_report_prints_annotations_under_github_actions_too(tmp_path: Path) -> None:
    gha = {"GITHUB_ACTIONS": "true"}
    rep = tmp_path / "scan.json"
    assert run("scan", BENCH, "-c", CORPUS, "--report", rep, "--no-fail").exit_code == 0
    auto = run("report", rep, env=gha)
    assert auto.exit_code == 1 and auto.stdout.startswith("::error file="), auto.output
    assert run("report", rep, "-f", "table", env=gha).stdout.startswith("id  ")
    # NOTE: a file keeps the format asked for (the default, a table).
    out = tmp_path / "out.txt"
    assert run("report", rep, "-o", out, env=gha).exit_code == 1
    assert out.read_text(encoding="utf-8").startswith("id  ")


def test_every_report_renders_as_github() -> None:
    combined = replace(_report(["a"], ["a.jsonl"]), command="report")
    assert render(combined, "github").count("::error") == 1


# -- the step summary ----------------------------------------------------------------------------


def test_the_step_summary_is_appended_never_truncated(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# an earlier step\n", encoding="utf-8", newline="\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    r = run("scan", BENCH, "-c", CORPUS, env=env)
    assert r.exit_code == 1, r.output
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# an earlier step\n\n# contam scan: contamination found, 2 of 5")
    r = run("scan", BENCH, "-c", CORPUS, "--redact", env=env)
    again = summary.read_text(encoding="utf-8")
    assert again.startswith(text) and again.count("# contam scan:") == 2
    assert not any(w in again[len(text) :] for w in LEAKED)


def test_clean_and_report_append_their_summaries_too(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    out = tmp_path / "clean.jsonl"
    r = run("clean", BENCH, "-c", CORPUS, "-o", out, env=env)
    assert r.exit_code == 1, r.output
    assert summary.read_text(encoding="utf-8").startswith(
        "# contam clean: contamination found, 2 of 5"
    )
    rep = tmp_path / "scan.json"
    assert run("scan", BENCH, "-c", CORPUS, "--report", rep, "--no-fail").exit_code == 0
    summary.unlink()
    r = run("report", rep, "--threshold", "0.5", "--no-fail", env=env)
    assert r.exit_code == 0, r.output
    assert summary.read_text(encoding="utf-8").startswith("# contam report: ")


def test_a_step_summary_that_cannot_be_written_is_a_warning(tmp_path: Path) -> None:
    for bad in (tmp_path / "no" / "such" / "dir" / "s.md", tmp_path, BENCH):
        r = run("scan", BENCH, "-c", CORPUS, env={"GITHUB_STEP_SUMMARY": str(bad)})
        assert r.exit_code == 1, r.output  # the verdict stands
        assert "contam: warning: cannot append the step summary to" in r.stderr
    assert not (tmp_path / "no").exists()
    full = tmp_path / "full.md"
    full.write_bytes(b"x" * ((1 << 20) - 100))
    r = run("scan", BENCH, "-c", CORPUS, env={"GITHUB_STEP_SUMMARY": str(full)})
    assert r.exit_code == 1 and "it is full" in r.stderr
    assert full.stat().st_size == (1 << 20) - 100


def test_the_summary_fits_what_github_keeps(tmp_path: Path) -> None:
    summary = tmp_path / "s.md"
    summary.write_bytes(b"y" * 900_000)
    r = run("scan", BENCH, "-c", CORPUS, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 1, r.output
    assert 900_000 < summary.stat().st_size <= 1 << 20


# -- SARIF with the baseline ---------------------------------------------------------------------


def _sarif_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(
        (ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
    )
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_sarif_carries_the_baseline_states_and_is_valid(tmp_path: Path) -> None:
    baseline = tmp_path / "b.json"
    r = run("scan", BENCH, "-c", CORPUS, "--write-baseline", baseline, "--min-run", "20")
    assert r.exit_code == 1, r.output
    doc = json.loads(baseline.read_text(encoding="utf-8"))
    doc["findings"] = [f for f in doc["findings"] if f["id"] == "q1"]
    baseline.write_text(json.dumps(doc), encoding="utf-8", newline="\n")
    out = tmp_path / "r.sarif"
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", baseline, "--sarif", out, "-f", "sarif")
    assert r.exit_code == 1, r.output
    for text in (out.read_text(encoding="utf-8"), r.stdout):
        log = json.loads(text)
        _sarif_validator().validate(log)
        states = {
            res["properties"]["exampleId"]: res["baselineState"]
            for res in log["runs"][0]["results"]
        }
        # q1 was accepted with min-overlap and min-run; it now fires min-overlap alone
        assert states == {"q1": "updated", "q2": "new"}
    same = run(
        "scan", BENCH, "-c", CORPUS, "--min-run", "20", "--baseline", baseline, "-f", "sarif"
    )
    results = json.loads(same.stdout)["runs"][0]["results"]
    assert [res["baselineState"] for res in results] == ["unchanged", "new"]
