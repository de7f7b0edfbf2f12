"""The command line with the fuzzy detector: --fuzzy and --min-fuzzy (cli/options.py) end to end,
exit 1 on a reworded leak the exact detector misses, exit 0 when the rule is raised past it.

The scan command takes the options once cli/scan.py is wired; until then the same options and
library call run through a one-command Typer harness, and the real command's tests skip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest
import typer
from conftest import assert_valid_report
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.cli import common as c
from contam_cli.cli.options import FuzzyOpt, MinFuzzyOpt
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.engine.options import ScanOptions
from contam_cli.features.bench.edits import Thesaurus, reword_hard
from contam_cli.features.bench.textmodel import TextModel
from contam_cli.features.scan import scan
from contam_cli.policy import FlagPolicy
from contam_cli.render import render_json, render_table

runner = CliRunner()
harness = typer.Typer()


@harness.command()
def _scan(
    eval_paths: c.EvalArg,
    corpus: c.CorpusOpt = None,
    fuzzy: FuzzyOpt = False,
    min_fuzzy: MinFuzzyOpt = 0.5,
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """What cli/scan.py does with the two options: ScanOptions.fuzzy, FlagPolicy.min_fuzzy."""
    with c.handle_errors(False):
        opts = ScanOptions(fuzzy=FuzzyConfig() if fuzzy else None)
        policy = FlagPolicy(min_fuzzy=min_fuzzy)
        report = scan(eval_paths, c.corpus_argument(corpus, None), policy=policy, options=opts)
        typer.echo(render_json(report) if json_out else render_table(report), nl=False)
    raise typer.Exit(c.EXIT_FOUND if report.contaminated else c.EXIT_CLEAN)


@pytest.fixture(scope="module")
def leak(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    rng = np.random.default_rng(21)
    model = TextModel.build(rng)
    drafts = model.drafts(rng, np.array([60, 60, 300]))
    copy = reword_hard(drafts[0], model, Thesaurus.build(model, rng), rng).text(model)
    d = tmp_path_factory.mktemp("leak")
    rows = [
        {"id": "q1", "text": drafts[0].text(model)},
        {"id": "q2", "text": drafts[1].text(model)},
    ]
    (d / "eval.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    (d / "corpus.jsonl").write_bytes(orjson.dumps({"text": drafts[2].text(model) + copy}) + b"\n")
    return d / "eval.jsonl", d / "corpus.jsonl"


def test_the_options_flag_a_reworded_leak_end_to_end(leak: tuple[Path, Path]) -> None:
    ev, corpus = (str(p) for p in leak)
    off = runner.invoke(harness, [ev, "--corpus", corpus])
    assert off.exit_code == 0, off.output
    on = runner.invoke(harness, [ev, "--corpus", corpus, "--fuzzy"])
    assert on.exit_code == 1, on.output
    row = on.stdout.splitlines()[1].split()
    assert row[0] == "q1" and row[5] == "FLAGGED" and row[6] == "fuzzy"
    raised = runner.invoke(harness, [ev, "--corpus", corpus, "--fuzzy", "--min-fuzzy", "0.99"])
    assert raised.exit_code == 0, raised.output
    bad = runner.invoke(harness, [ev, "--corpus", corpus, "--fuzzy", "--min-fuzzy", "2"])
    assert bad.exit_code == 2
    doc = assert_valid_report(
        runner.invoke(harness, [ev, "-c", corpus, "--fuzzy", "--json"]).stdout
    )
    assert doc["examples"][0]["reasons"][0]["rule"] == "min-fuzzy"


def _wired(command: str) -> bool:
    return "--fuzzy" in runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"}).stdout


@pytest.mark.skipif(not _wired("scan"), reason="contam scan has no --fuzzy yet (cli/scan.py)")
def test_scan_fuzzy_exits_1_on_a_reworded_leak(leak: tuple[Path, Path], tmp_path: Path) -> None:
    ev, corpus = (str(p) for p in leak)
    assert runner.invoke(app, ["scan", ev, "--corpus", corpus]).exit_code == 0
    result = runner.invoke(app, ["scan", ev, "--corpus", corpus, "--fuzzy"])
    assert result.exit_code == 1, result.output
    assert "fuzzy" in result.stdout.splitlines()[0] and "FLAGGED" in result.stdout
    report = tmp_path / "r.json"
    args = ["scan", ev, "--corpus", corpus, "--fuzzy", "--min-fuzzy", "0.99", "--report", report]
    assert runner.invoke(app, [str(a) for a in args]).exit_code == 0
    doc = assert_valid_report(report.read_bytes())
    assert doc["config"]["policy"]["min_fuzzy"] == 0.99 and "fuzzy" in doc["config"]


def test_an_example_under_n_tokens_flagged_by_fuzzy_is_in_the_table(
    leak: tuple[Path, Path], tmp_path: Path
) -> None:
    # With n above every example's length the n-gram detector scores nothing (overlap, run
    # and z are null) while the fuzzy detector still flags the reworded copy: the table shows
    # "-" for the missing scores (it raised a TypeError formatting None), as clean's does.
    ev, corpus = (str(p) for p in leak)
    result = runner.invoke(app, ["scan", ev, "--corpus", corpus, "--fuzzy", "-n", "200"])
    assert result.exit_code == 1, result.output
    header, *rows = result.stdout.splitlines()
    assert header.split()[:6] == ["id", "overlap", "run", "z", "fuzzy", "flag"]
    q1 = next(r.split() for r in rows if r.startswith("q1"))
    assert q1[1:4] == ["-", "-", "-"] and float(q1[4]) >= 0.5 and q1[5] == "FLAGGED"
    out = tmp_path / "clean.jsonl"
    cleaned = runner.invoke(
        app, ["clean", ev, "--corpus", corpus, "-o", str(out), "--fuzzy", "-n", "200"]
    )
    assert cleaned.exit_code == 1, cleaned.output
    assert [orjson.loads(x)["id"] for x in out.read_bytes().splitlines()] == ["q2"]


@pytest.mark.skipif(not _wired("clean"), reason="contam clean has no --fuzzy yet (cli/clean.py)")
def test_clean_fuzzy_removes_the_reworded_leak(leak: tuple[Path, Path], tmp_path: Path) -> None:
    ev, corpus = (str(p) for p in leak)
    out = tmp_path / "clean.jsonl"
    result = runner.invoke(app, ["clean", ev, "--corpus", corpus, "-o", str(out), "--fuzzy"])
    assert result.exit_code == 1, result.output
    assert "fuzzy" in result.stdout
    assert [orjson.loads(x)["id"] for x in out.read_bytes().splitlines()] == ["q2"]


@pytest.mark.skipif(not _wired("scan"), reason="contam scan has no --fuzzy yet (cli/scan.py)")
def test_a_baseline_keeps_the_fuzzy_details(leak: tuple[Path, Path], tmp_path: Path) -> None:
    ev, corpus = (str(p) for p in leak)
    base, report = tmp_path / "baseline.json", tmp_path / "r.json"
    first = runner.invoke(app, ["scan", ev, "-c", corpus, "--fuzzy", "--write-baseline", str(base)])
    assert first.exit_code == 1, first.output
    args = ["scan", ev, "-c", corpus, "--fuzzy", "--baseline", str(base), "--report", str(report)]
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    q1 = assert_valid_report(report.read_bytes())["examples"][0]
    assert q1["details"]["baseline"]["state"] == "accepted"
    assert q1["details"]["fuzzy"]["evidence"] is not None


def test_fuzzy_thresholds_without_fuzzy_are_refused(
    leak: tuple[Path, Path], tmp_path: Path
) -> None:
    ev, corpus = (str(p) for p in leak)
    thresholds = tmp_path / "t.json"
    thresholds.write_text('{"sources": {"corpus": {"fuzzy": 0.3}}}')
    args = ["scan", ev, "--corpus", corpus, "--thresholds", str(thresholds)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"contam: error: {thresholds}: holds fuzzy thresholds (source 'corpus') that only a scan "
        "with --fuzzy applies: add --fuzzy (with a corpus, not --index), or use thresholds "
        "calibrated without --fuzzy"
    )
    assert runner.invoke(app, [*args, "--fuzzy"]).exit_code == 1
