"""Every executor gives the same results: scan and clean, in-process and in 1 or 3 workers, with
files cut into byte-range shards; and nothing forks while another thread runs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import contam_cli.engine.shards as shards
from contam_cli import clean_corpus, scan
from contam_cli.engine.executor import (
    Executor,
    InProcess,
    LocalProcesses,
    make_executor,
    start_method,
)

WORDS = st.sampled_from("the cat sat on a mat with hat bat rat dog".split())
DOC = st.lists(WORDS, min_size=0, max_size=30).map(" ".join)
EXECUTORS: list[Executor] = [InProcess(), LocalProcesses(1), LocalProcesses(3)]


def _corpus(d: Path, docs: list[str]) -> list[Path]:
    half = len(docs) // 2
    for name, part in (("a.jsonl", docs[:half]), ("b.jsonl", docs[half:]), ("c.jsonl", docs)):
        (d / name).write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in part) or b"\n")
    return [p for p in sorted(d.iterdir()) if p.read_bytes().strip()]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    evals=st.lists(DOC, min_size=1, max_size=5),
    docs=st.lists(DOC, min_size=1, max_size=40),
    split=st.integers(30, 400),
)
def test_scan_and_clean_are_identical_for_every_executor(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    evals: list[str],
    docs: list[str],
    split: int,
) -> None:
    assume(any(len(e.split()) >= 3 for e in evals))  # NOTE: scoring nothing is an error
    d = tmp_path_factory.mktemp("c")
    files = _corpus(d, docs)
    monkeypatch.setattr(shards, "SHARD_BYTES", split)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", split)
    reports = [scan(evals, files, n=3, executor=ex) for ex in EXECUTORS]
    assert all(r == reports[0] for r in reports[1:])
    assert len({orjson.dumps(r.to_dict()) for r in reports}) == 1
    outputs = []
    for k, ex in enumerate(EXECUTORS):
        out = tmp_path_factory.mktemp("o") / f"clean{k}"
        result = clean_corpus(evals, files, out, n=3, window=5, min_piece=3, executor=ex)
        outputs.append((_tree(out), result.totals))
    assert all(o == outputs[0] for o in outputs[1:])


def test_results_come_back_in_task_order_whatever_finishes_first() -> None:
    tasks = [0.2, 0.0, 0.1, 0.0, 0.05]
    done: list[int] = []
    got = list(LocalProcesses(3).map(_sleep_and_echo, "ctx", tasks, on_done=done.append))
    assert got == [("ctx", t) for t in tasks]
    assert sorted(done) == list(range(len(tasks)))


def _sleep_and_echo(context: str, seconds: float) -> tuple[str, float]:
    import time

    time.sleep(seconds)
    return context, seconds


def test_a_failing_task_stops_the_pool_and_raises_in_the_caller() -> None:
    with pytest.raises(ZeroDivisionError):
        list(LocalProcesses(2).map(_divide, 1, [1, 2, 0, 4, 5, 6]))


def _divide(context: int, x: int) -> float:
    return context / x


def test_a_stopped_pool_leaves_no_thread_running() -> None:
    # NOTE: a pool's manager thread left running closes its wake-up pipe whenever it ends: at
    # the interpreter's exit that raced Python's own hook, which wrote to it (a traceback after
    # contam's one line on SIGTERM).
    before = set(threading.enumerate())
    with pytest.raises(ZeroDivisionError):
        list(LocalProcesses(2).map(_divide, 1, [1, 2, 0, 4, 5, 6]))
    left = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert left == []


@pytest.mark.skipif(start_method() != "fork", reason="workers are spawned here, not forked")
def test_nothing_forks_while_another_thread_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "SHARD_BYTES", 1000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 1000)
    text = "doc {} the cat sat on the mat"
    lines = b"".join(orjson.dumps({"text": text.format(i)}) + b"\n" for i in range(400))
    files = []
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        (tmp_path / name).write_bytes(lines)
        files.append(tmp_path / name)
    # NOTE: threads other tests left behind are not the scan's; only new ones count.
    before = set(threading.enumerate())
    new_at_fork: list[set[threading.Thread]] = []
    os.register_at_fork(before=lambda: new_at_fork.append(set(threading.enumerate()) - before))
    report = scan(["the cat sat on the mat"], files, n=3, jobs=2)
    assert report.examples[0].longest_run == 6
    assert new_at_fork and all(not t for t in new_at_fork), new_at_fork
    assert report.inputs["corpus"][0]["files"][0]["sha256"] is not None


def test_make_executor_runs_in_process_when_one_worker_would_do() -> None:
    assert isinstance(make_executor(1, 10), InProcess)
    assert isinstance(make_executor(4, 1), InProcess)
    assert isinstance(make_executor(2, 10), LocalProcesses)
