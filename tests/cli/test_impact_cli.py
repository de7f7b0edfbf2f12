"""`contam impact` on the command line: outputs, files, exit codes 0 and 2, one-line errors."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import FIXTURES
from typer.testing import CliRunner

from contam_cli import scan
from contam_cli.cli import app
from contam_cli.report import save_report

IMPACT = FIXTURES / "impact"
SAMPLES = str(IMPACT / "samples_quiz.jsonl")
runner = CliRunner()


def run(*args: str) -> Any:
    return runner.invoke(app, ["impact", *args])


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The scan of the impact fixture (what docs/impact.md runs), saved as a report."""
    sources = {"web": IMPACT / "web.jsonl", "books": IMPACT / "books.jsonl"}
    path = tmp_path_factory.mktemp("impact") / "scan.json"
    save_report(scan(IMPACT / "eval.jsonl", sources), path)
    return str(path)


def test_table_on_the_fixture(report: str) -> None:
    result = run(report, "--results", SAMPLES, "--bootstrap", "2000")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "matched by id: 200 of 200 report examples, 200 of 200 results records" in out
    assert "lm-eval filter: none" in out
    lines = {line.split()[0]: line.split() for line in out.splitlines()[5:9]}
    assert lines["full"][1:3] == ["200", "0.565"]
    assert lines["clean"][1:3] == ["165", "0.491"]
    assert lines["flagged"][1:3] == ["33", "0.939"]
    assert lines["unscorable"][1:3] == ["2", "0.500"]
    assert "source      books" in out and "overlap >= 0.2" in out


def test_json_is_deterministic_and_strict(report: str) -> None:
    args = (report, "-r", SAMPLES, "--format", "json", "--bootstrap", "500", "--seed", "7")
    a, b = run(*args), run(*args)
    assert a.exit_code == 0 and a.stdout == b.stdout
    data = json.loads(a.stdout, parse_constant=lambda c: pytest.fail(f"constant {c}"))
    assert data["schema"] == "contam.impact/1" and data["bootstrap"]["seed"] == 7
    assert data["matching"]["matched"] == 200 and data["score_field"] == "acc"


def test_fingerprint_matching_agrees_with_ids(report: str) -> None:
    by_id = run(report, "-r", SAMPLES, "-f", "json", "--bootstrap", "300")
    by_text = run(
        report, "-r", SAMPLES, "-f", "json", "--bootstrap", "300", "--match", "fingerprint"
    )
    assert by_id.exit_code == by_text.exit_code == 0, by_text.output
    a, b = orjson.loads(by_id.stdout), orjson.loads(by_text.stdout)
    assert b["matching"]["by"] == "fingerprint"
    assert a["overall"] == b["overall"] and a["levels"] == b["levels"]


def test_output_file_markdown_and_svg(report: str, tmp_path: Path) -> None:
    md = tmp_path / "out" / "impact.md"
    result = run(report, "-r", SAMPLES, "-f", "markdown", "-o", str(md), "--bootstrap", "300")
    assert result.exit_code == 0 and result.stdout == ""
    assert md.read_text(encoding="utf-8").startswith("### Contamination impact on accuracy")
    svg = tmp_path / "impact.svg"
    result = run(report, "-r", SAMPLES, "-f", "svg", "-o", str(svg), "--bootstrap", "300")
    assert result.exit_code == 0
    assert ET.fromstring(svg.read_text(encoding="utf-8")).tag.endswith("svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["impact.svg", "out"]  # no temp files


def test_never_writes_over_an_input(report: str) -> None:
    before = Path(report).read_bytes()
    result = run(report, "-r", SAMPLES, "-o", report, "--bootstrap", "100")
    assert result.exit_code == 2
    assert "refusing to overwrite the input" in result.stderr
    assert Path(report).read_bytes() == before


def test_no_overlap_exits_2(report: str, tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("id,correct\nq-a,1\nq-b,0\n", encoding="utf-8", newline="\n")
    result = run(report, "-r", str(path))
    assert result.exit_code == 2
    assert result.stderr.startswith("contam: error: no id of ") and result.stderr.count("\n") == 1
    assert result.stdout == ""


def test_bad_line_is_one_line_with_file_and_line(report: str, tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"id": "0", "acc": 1}\n{"id": "1", "acc": 2}\n')
    result = run(report, "-r", str(path))
    assert result.exit_code == 2
    assert result.stderr == (
        f"contam: error: {path}:2: 'acc' is 2, but --metric accuracy needs 0 or 1 "
        "(--metric mean takes any number)\n"
    )


def test_graded_scores_with_mean(report: str, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        "id,bleu\n" + "".join(f"{i},{i / 400}\n" for i in range(200)),
        encoding="utf-8",
        newline="\n",
    )
    result = run(report, "-r", str(path), "--metric", "mean", "--score-field", "bleu", "-f", "json")
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert data["metric"] == "mean" and data["overall"]["full"]["value"] == 0.24875


def test_levels_option(report: str) -> None:
    result = run(report, "-r", SAMPLES, "--levels", "run>=13,30", "--levels", "overlap>=0.9")
    assert result.exit_code == 0, result.output
    labels = [line.split("  ")[0] for line in result.stdout.splitlines() if " >= " in line[:16]]
    assert labels == ["run >= 13", "run >= 30", "overlap >= 0.9"]
    off = run(report, "-r", SAMPLES, "--levels", "none", "--bootstrap", "100")
    assert off.exit_code == 0 and "overlap >= 0.2" not in off.stdout
    bad = run(report, "-r", SAMPLES, "--levels", "overlap>=2")
    assert bad.exit_code == 2 and "lies in (0, 1]" in bad.stderr


def test_lm_eval_filter_option(report: str, tmp_path: Path) -> None:
    rows = [orjson.loads(line) for line in Path(SAMPLES).read_bytes().splitlines()]
    both = [{**r, "filter": name} for r in rows for name in ("strict-match", "flexible-extract")]
    path = tmp_path / "samples.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in both))
    mixed = run(report, "-r", str(path))
    assert mixed.exit_code == 2 and "--filter flexible-extract" in mixed.stderr
    chosen = run(report, "-r", str(path), "--filter", "strict-match", "--bootstrap", "100")
    assert chosen.exit_code == 0 and "lm-eval filter: strict-match" in chosen.stdout


def test_usage_errors_exit_2(report: str) -> None:
    assert run(report).exit_code == 2  # --results is required
    assert run(report, "-r", SAMPLES, "--bootstrap", "0").exit_code == 2
    missing = run(report, "-r", "no-such-file.jsonl")
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    assert run("no-such-report.json", "-r", SAMPLES).exit_code == 2


def test_registered_in_the_app() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0 and "impact" in result.stdout
    helped = runner.invoke(app, ["impact", "--help"])
    assert helped.exit_code == 0 and "--match" in helped.stdout


def test_a_report_that_judged_nothing_is_refused(tmp_path: Path) -> None:
    # A probe report flags nothing by design: impact counted every example clean and printed
    # "full - clean +0.000" (exit 0) as if the scores had been checked.
    from contam_cli.features.probe import probe

    model = tmp_path / "model.npz"
    assert runner.invoke(app, ["probe", "train-lm", str(FIXTURES / "probe" / "train.txt"),
                               "-o", str(model)]).exit_code == 0  # fmt: skip
    probed = tmp_path / "probe.json"
    save_report(probe(FIXTURES / "probe" / "eval.jsonl", model=f"ngram-lm:{model}"), probed)
    results = tmp_path / "r.jsonl"
    results.write_text("".join(f'{{"id": "e0{i}", "correct": {i % 2}}}\n' for i in range(5)))
    result = run(str(probed), "-r", str(results))
    assert result.exit_code == 2, result.output
    assert result.stderr == (
        f"contam: error: {probed}: its examples were never judged for contamination "
        "(detectors: probe); give impact the report of contam scan or clean, or of contam "
        "report combining them\n"
    )
    assert result.stdout == ""


def test_fingerprint_matching_on_inputs_disagreeing_on_normalization_exits_2(
    tmp_path: Path,
) -> None:
    eval_path, web = str(IMPACT / "eval.jsonl"), str(IMPACT / "web.jsonl")
    paths = []
    for name, more in (("a", ()), ("b", ("--no-casefold",))):
        paths.append(str(tmp_path / f"{name}.json"))
        r = runner.invoke(app, ["scan", eval_path, "-c", web, "--report", paths[-1], *more])
        assert r.exit_code in (0, 1), r.output
    combined = str(tmp_path / "c.json")
    names = ["--method-name", "2:longest_run=r2", "--method-name", "2:overlap_fraction=o2"]
    r = runner.invoke(app, ["report", *paths, *names, "--report", combined, "--no-fail"])
    assert r.exit_code == 0, r.output
    r = run(combined, "-r", SAMPLES, "--match", "fingerprint")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "disagree on normalization" in r.output and "b.json: " in r.output
