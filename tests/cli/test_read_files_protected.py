"""Every file a command reads is an input: an output over or inside it is refused (exit 2, one
line naming it) before any work, with the file unchanged and nothing else written; a command's
outputs are written together or not at all, and one path given for two outputs is refused."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CD, FIXTURES, assert_valid_report
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.errors import OutputError

runner = CliRunner()
EVAL = str(CD / "examples" / "benchmark.jsonl")
CORPUS = str(CD / "examples" / "corpus")
SCAN = ("scan", EVAL, "-c", CORPUS)
CLEAN = ("clean", EVAL, "-c", CORPUS)
SCORES = '{"id": "a", "m": 1.0}\n{"id": "b", "m": 2.0}\n{"id": "c", "m": 0.5}\n'


def run(*args: object) -> Any:
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files the commands read, made once: copied into each test's directory."""
    d = tmp_path_factory.mktemp("read")
    (d / "th.json").write_text('{"sources": {"corpus": {"longest_run": 5}}}\n', encoding="utf-8")
    (d / "ign").mkdir()
    for name in ("ign.jsonl", "ign/common.jsonl"):
        (d / name).write_text('{"text": "xx"}\n', encoding="utf-8")
    (d / "m.jsonl").write_text(SCORES, encoding="utf-8")
    (d / "labels.jsonl").write_text(
        '{"id": "a", "label": 0}\n{"id": "b", "label": 1}\n{"id": "c", "label": 0}\n',
        encoding="utf-8",
    )
    results = "".join(f'{{"id": "q{k}", "correct": {k % 2}}}\n' for k in range(1, 6))
    (d / "res.jsonl").write_text(results, encoding="utf-8")
    for args in (
        (*SCAN, "--write-baseline", d / "bl.json", "--report", d / "sr.json", "--no-fail"),
        ("probe", "train-lm", FIXTURES / "probe" / "train.txt", "-o", d / "model.npz"),
    ):
        assert run(*args).exit_code == 0
    return d


@pytest.fixture
def files(made: Path, tmp_path: Path) -> Path:
    shutil.copytree(made, tmp_path, dirs_exist_ok=True)
    return tmp_path


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in d.rglob("*") if p.is_file()}


PROBE = ("probe", "run", FIXTURES / "probe" / "eval.jsonl", "--model")

#: (what: the input and the output over it, the arguments given the test's directory): each
#: command and each file it reads, besides the eval set and the corpus.
CASES: list[tuple[str, Callable[[Path], tuple[object, ...]]]] = [
    ("scan --thresholds / --write-baseline",
     lambda d: (*SCAN, "--thresholds", d / "th.json", "--write-baseline", d / "th.json",
                "--html", d / "o.html", "--no-fail")),
    ("scan --thresholds / --report",
     lambda d: (*SCAN, "--thresholds", d / "th.json", "--report", d / "th.json", "--no-fail")),
    ("scan --ignore-from / --report",
     lambda d: (*SCAN, "--ignore-from", d / "ign.jsonl", "--report", d / "ign.jsonl",
                "--sarif", d / "o.sarif", "--no-fail")),
    ("scan --ignore-from DIR / --html inside it",
     lambda d: (*SCAN, "--ignore-from", d / "ign", "--html", d / "ign" / "o.html", "--no-fail")),
    ("scan --baseline / --report",
     lambda d: (*SCAN, "--baseline", d / "bl.json", "--report", d / "bl.json",
                "--write-baseline", d / "new.json")),
    ("scan --baseline / --sarif",
     lambda d: (*SCAN, "--baseline", d / "bl.json", "--sarif", d / "bl.json")),
    ("clean --thresholds / --report",
     lambda d: (*CLEAN, "--thresholds", d / "th.json", "-o", d / "o.jsonl",
                "--report", d / "th.json")),
    ("clean --ignore-from / -o",
     lambda d: (*CLEAN, "--ignore-from", d / "ign.jsonl", "-o", d / "ign.jsonl")),
    ("clean --ignore-from / --dirty-out",
     lambda d: (*CLEAN, "--ignore-from", d / "ign.jsonl", "-o", d / "o.jsonl",
                "--dirty-out", d / "ign.jsonl")),
    ("clean --target corpus --thresholds / --manifest",
     lambda d: (*CLEAN, "--target", "corpus", "--thresholds", d / "th.json",
                "-o", d / "out", "--manifest", d / "th.json")),
    ("clean --target corpus --ignore-from DIR / -o inside it",
     lambda d: (*CLEAN, "--target", "corpus", "--ignore-from", d / "ign",
                "-o", d / "ign" / "out")),
    ("report --labels / --report",
     lambda d: ("report", d / "m.jsonl", "--labels", d / "labels.jsonl",
                "--report", d / "labels.jsonl", "-o", d / "o.md", "-f", "markdown")),
    ("report --labels / -o",
     lambda d: ("report", d / "m.jsonl", "--labels", d / "labels.jsonl",
                "--report", d / "o.json", "-o", d / "labels.jsonl")),
    ("impact --results / -o",
     lambda d: ("impact", d / "sr.json", "-r", d / "res.jsonl", "-o", d / "res.jsonl")),
    ("probe run --model ngram-lm:FILE / -o",
     lambda d: (*PROBE, f"ngram-lm:{d / 'model.npz'}", "-o", d / "model.npz")),
    ("probe run --model ngram-lm:TEXT / -o",
     lambda d: (*PROBE, f"ngram-lm:{d / 'ign'}", "-o", d / "ign" / "probe.json")),
    ("bench --model ngram-lm:FILE / -o",
     lambda d: ("bench", "--model", f"ngram-lm:{d / 'model.npz'}", "-o", d / "model.npz")),
]  # fmt: skip


@pytest.mark.parametrize("make", [m for _, m in CASES], ids=[what for what, _ in CASES])
def test_an_output_over_a_read_file_is_refused_before_any_work(
    files: Path, make: Callable[[Path], tuple[object, ...]]
) -> None:
    before = snapshot(files)
    result = run(*make(files))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("contam: error: ") and result.stderr.count("\n") == 1
    assert "refusing to" in result.stderr and str(files) in result.stderr, result.stderr
    assert result.stdout == ""
    assert snapshot(files) == before  # the input as it was, no other output, no temp file


def test_write_baseline_may_still_update_the_baseline(files: Path) -> None:
    baseline = files / "bl.json"
    found = baseline.read_text(encoding="utf-8")
    head, _, rest = found.partition('"findings": [')
    baseline.write_text(head + '"findings": [],' + rest.partition("\n  ],")[2], encoding="utf-8")
    result = run(*SCAN, "--baseline", baseline, "--write-baseline", baseline, "--no-fail")
    assert result.exit_code == 0, result.output
    assert baseline.read_text(encoding="utf-8") == found  # read whole first, then updated


def test_report_writes_its_outputs_together_or_none(files: Path) -> None:
    scores, rr = files / "m.jsonl", files / "rr.json"
    (files / "adir").mkdir()
    before = snapshot(files)
    for bad, why in (
        (files / "adir", "is a directory"),
        (files / "m.jsonl" / "o.md", "is not a directory"),
        (rr, "given for two outputs"),
    ):
        result = run("report", scores, "--report", rr, "-o", bad, "-f", "markdown")
        assert result.exit_code == 2 and why in result.stderr, result.output
        assert result.stderr.count("\n") == 1 and result.stdout == ""
        assert snapshot(files) == before
    done = run("report", scores, "--report", rr, "-o", files / "o.md", "-f", "markdown")
    assert done.exit_code == 0, done.output
    assert_valid_report(rr.read_bytes())
    assert (files / "o.md").read_text(encoding="utf-8").startswith("# contam report: ")


def test_a_failed_baseline_leaves_no_report(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*_: object, **__: object) -> str:
        raise OutputError(f"{files / 'b.json'}: cannot write (No space left on device)")

    monkeypatch.setattr("contam_cli.cli.ci.dump_baseline", full)
    before = snapshot(files)
    args = ("--report", files / "r.json", "--html", files / "r.html")
    result = run(*SCAN, *args, "--write-baseline", files / "b.json", "--no-fail")
    assert result.exit_code == 2 and "No space left" in result.stderr, result.output
    assert snapshot(files) == before


def test_calibrate_writes_both_files_or_neither(
    files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object) -> bytes:
        raise OutputError(f"{files / 't.json'}: cannot write (No space left on device)")

    monkeypatch.setattr("contam_cli.policy.thresholds.Thresholds.to_json", full)
    before = snapshot(files)
    args = ("calibrate", "--controls", EVAL, "-c", CORPUS, "-o", files / "t.json")
    result = run(*args, "--common-out", files / "c.jsonl")
    assert result.exit_code == 2 and "No space left" in result.stderr, result.output
    assert snapshot(files) == before
