"""Worker processes started by spawn (Windows has no fork; macOS uses spawn too): they import
everything afresh and receive the context pickled, and still give exactly the results of one
process, for the library, the command line (``-m`` and the console script) and the app's child.
Linux runs these through ``CONTAM_START_METHOD=spawn``, so the spawn path is checked on every
push, not only on the macOS and Windows runners."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from multiprocessing import get_all_start_methods
from pathlib import Path

import orjson
import pytest
from conftest import CD, ROOT

import contam_cli.engine.shards as shards
from contam_cli import InputError, clean_corpus, scan
from contam_cli.app import run as app_run
from contam_cli.app.inputs import NamedBytes
from contam_cli.engine.executor import (
    START_METHOD_ENV,
    InProcess,
    LocalProcesses,
    start_method,
)
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.errors import UsageError
from contam_cli.text.accel import kernels

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
LEAK = (
    "The committee approved the new budget for the public library after a long debate about "
    "opening hours and the cost of repairs to the old roof of the reading room"
)


@pytest.fixture
def spawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Worker processes started by spawn, in this process and in the commands it runs."""
    monkeypatch.setenv(START_METHOD_ENV, "spawn")
    assert start_method() == "spawn"


@pytest.fixture
def small_shards(monkeypatch: pytest.MonkeyPatch) -> None:
    # NOTE: planned in the parent, so the patch needs no fork to reach the workers.
    monkeypatch.setattr(shards, "SHARD_BYTES", 400)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 400)


def _corpus(d: Path) -> list[Path]:
    docs = [f"filler document {i} about the weather and the trains" for i in range(60)]
    docs[17] = f"some words first. {LEAK}. and some after"
    docs[45] = LEAK.replace("budget", "plan").replace("library", "museum")
    files = []
    for k in range(3):
        path = d / f"c{k}.jsonl"
        part = docs[k::3]
        path.write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in part))
        files.append(path)
    return files


def test_fork_only_on_linux_and_the_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(START_METHOD_ENV, raising=False)
    for platform in ("darwin", "win32"):
        monkeypatch.setattr(sys, "platform", platform)
        assert start_method() == "spawn"
    monkeypatch.setattr(sys, "platform", "linux")
    assert start_method() == ("fork" if "fork" in get_all_start_methods() else "spawn")
    monkeypatch.setenv(START_METHOD_ENV, "teleport")
    with pytest.raises(UsageError, match=f"{START_METHOD_ENV}='teleport': this platform starts"):
        start_method()


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"fuzzy": FuzzyConfig()},
        {"ignore_common": 2},
        pytest.param(
            {"accel": True},
            marks=pytest.mark.skipif(kernels() is None, reason="no numba"),
            id="kernels",
        ),
    ],
    ids=lambda o: ",".join(o) or "plain",
)
def test_spawned_workers_give_the_in_process_report(
    tmp_path: Path, spawn: None, small_shards: None, options: dict
) -> None:
    files = _corpus(tmp_path)
    evals = [LEAK, "nothing like this is anywhere in the corpus at all, not one word of it"]
    one = scan(evals, files, n=8, executor=InProcess(), **options)
    two = scan(evals, files, n=8, executor=LocalProcesses(2), **options)
    assert one.examples[0].flagged
    assert two == one and orjson.dumps(two.to_dict()) == orjson.dumps(one.to_dict())


def test_spawned_workers_clean_a_corpus_as_one_process(
    tmp_path: Path, spawn: None, small_shards: None
) -> None:
    files = _corpus(tmp_path)
    trees = []
    for k, executor in enumerate((InProcess(), LocalProcesses(2))):
        out = tmp_path / f"out{k}"
        result = clean_corpus([LEAK], files, out, n=8, window=5, min_piece=3, executor=executor)
        trees.append((_tree(out), result.totals))
    assert trees[0] == trees[1] and trees[0][1]["cut"] >= 1


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_errors_in_spawned_workers_reach_the_caller(
    tmp_path: Path, spawn: None, small_shards: None
) -> None:
    with pytest.raises(ZeroDivisionError):
        list(LocalProcesses(2).map(_divide, 1, [1, 2, 0, 4]))
    files = _corpus(tmp_path)
    lines = files[1].read_bytes().splitlines(keepends=True)
    files[1].write_bytes(b"".join(lines[:12]) + b'{"text": \n' + b"".join(lines[12:]))
    errors = []
    for executor in (InProcess(), LocalProcesses(2)):
        with pytest.raises(InputError) as err:
            scan([LEAK], files, n=8, executor=executor)
        errors.append((str(err.value), err.value.path, err.value.line))
    assert errors[0] == errors[1] and errors[1][1] == str(files[1])


def _divide(context: int, x: int) -> float:
    return context / x


def _command_lines() -> list[list[str]]:
    """``python -m contam_cli`` and, when installed, the console script: under spawn a worker
    starts by running the parent's main module again (guarded), so both are worth a run."""
    commands = [[sys.executable, "-m", "contam_cli"]]
    script = shutil.which("contam", path=str(Path(sys.executable).parent))
    if script is not None:
        commands.append([script])
    return commands


@pytest.mark.slow
@pytest.mark.parametrize("command", _command_lines(), ids=lambda c: Path(c[-1]).name)
def test_contam_scan_jobs_2_under_spawn(command: list[str], spawn: None) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    got = {}
    for jobs in ("1", "2"):
        args = [*command, "scan", str(BENCH), "--corpus", str(CORPUS), "--jobs", jobs, "--json"]
        proc = subprocess.run(args, capture_output=True, env=env, timeout=120)
        assert proc.returncode == 1 and proc.stderr == b"", proc.stderr.decode(errors="replace")
        got[jobs] = proc.stdout
    assert got["1"] == got["2"]
    assert [e["id"] for e in orjson.loads(got["2"])["examples"] if e["flagged"]] == ["q1", "q2"]


def test_the_app_scan_in_a_spawned_child(spawn: None) -> None:
    corpus = tuple(NamedBytes(p.name, p.read_bytes()) for p in sorted(CORPUS.iterdir()))
    request = app_run.ScanRequest(NamedBytes("benchmark.jsonl", BENCH.read_bytes()), corpus)
    inside = app_run.scan_request(request)
    child = app_run.run_scan(request, max_seconds=120)
    assert (child.rows, child.json, child.cleaned) == (inside.rows, inside.json, inside.cleaned)
