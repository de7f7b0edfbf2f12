"""The corpus files' sha256: from what an in-process scan reads, in a forked process beside
forked workers, else in a thread."""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from multiprocessing.connection import Connection
from pathlib import Path

import orjson
import pytest

from contam_cli.engine import shards
from contam_cli.engine.executor import START_METHOD_ENV, InProcess, LocalProcesses, start_method
from contam_cli.errors import InputError
from contam_cli.features import corpus_hashes as corpus_hashes_module
from contam_cli.features.corpus_hashes import (
    ForkedHashing,
    Hashing,
    NoHashing,
    ReadHashing,
    ThreadHashing,
    corpus_hashes,
)
from contam_cli.features.scan import scan

forking = pytest.mark.skipif(start_method() != "fork", reason="workers are spawned here")


def _files(tmp_path: Path, n: int = 3) -> list[Path]:
    out = []
    for k in range(n):
        p = tmp_path / f"c{k}.jsonl"
        p.write_bytes(
            b"".join(orjson.dumps({"text": f"doc {k} {i} the cat"}) + b"\n" for i in range(50))
        )
        out.append(p)
    return out


def _expected(paths: list[Path]) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@forking
def test_forked_workers_get_a_hashing_process(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    hashes = corpus_hashes(paths, LocalProcesses(2))
    try:
        assert isinstance(hashes, ForkedHashing) and len(hashes.procs) == 1
        threads = threading.active_count()
        hashes.start()  # the process hashes: no thread as well
        assert threading.active_count() == threads
        assert hashes.results() == _expected(paths)
    finally:
        hashes.close()
    assert not hashes.procs


@forking
def test_many_workers_get_a_hashing_process_per_eight_and_the_files_shared_out(
    tmp_path: Path,
) -> None:
    paths = _files(tmp_path, 7)
    paths[2].write_bytes(paths[2].read_bytes() * 6)  # the big one alone
    hashes = corpus_hashes(paths, LocalProcesses(17))
    try:
        assert isinstance(hashes, ForkedHashing) and len(hashes.procs) == 3
        assert [paths[2]] in hashes.groups
        assert sorted(p for g in hashes.groups for p in g) == sorted(paths)
        got = hashes.results()
        assert list(got) == paths and got == _expected(paths)  # every digest, in order
    finally:
        hashes.close()
    assert not hashes.procs


def test_in_process_hashes_what_it_reads_and_never_forks(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    forks: list[int] = []
    os.register_at_fork(before=lambda: forks.append(1))
    hashes = corpus_hashes(paths, InProcess())
    try:
        assert isinstance(hashes, ReadHashing)
        threads = threading.active_count()
        hashes.start()  # NOTE: reads hash already: no thread of its own as well
        assert threading.active_count() == threads
        assert hashes.results() == _expected(paths)  # nothing was read: all read here
    finally:
        hashes.close()
    assert not forks


def test_spawned_workers_get_a_hashing_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(START_METHOD_ENV, "spawn")
    paths = _files(tmp_path)
    hashes = corpus_hashes(paths, LocalProcesses(2))
    try:
        assert isinstance(hashes, ThreadHashing) and hashes.pool is None
        hashes.start()
        assert hashes.pool is not None
        assert hashes.results() == _expected(paths)
    finally:
        hashes.close()


@forking
def test_an_error_while_hashing_is_raised(tmp_path: Path) -> None:
    paths = _files(tmp_path)
    hashes = corpus_hashes([*paths, tmp_path / "gone.jsonl"], LocalProcesses(2))
    try:
        with pytest.raises(FileNotFoundError):
            hashes.results()
    finally:
        hashes.close()


@forking
def test_a_failed_scan_stops_the_hashing_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Hashing] = []

    def spy(paths: list[Path], executor: object) -> Hashing:
        started.append(corpus_hashes(paths, executor))  # type: ignore[arg-type]
        return started[-1]

    monkeypatch.setattr("contam_cli.features.scan.corpus_hashes", spy)
    monkeypatch.setattr(shards, "SHARD_BYTES", 1000)  # NOTE: shards enough for two workers
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 1000)
    bad = tmp_path / "eval.jsonl"
    bad.write_text('{"text": "fine"}\n{not json\n')
    with pytest.raises(InputError):
        scan(bad, _files(tmp_path), n=2, jobs=2)
    assert started and isinstance(started[0], ForkedHashing)
    assert not started[0].procs  # closed: stopped and joined


def test_nothing_to_hash_starts_nothing() -> None:
    for executor in (InProcess(), LocalProcesses(2)):
        hashes = corpus_hashes([], executor)
        assert isinstance(hashes, NoHashing)
        hashes.start()
        assert hashes.results() == {}
        hashes.close()


@forking
def test_reports_agree_with_and_without_the_hashing_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shards, "SHARD_BYTES", 1000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 1000)
    paths = _files(tmp_path)
    two = scan(["the cat doc 1"], paths, n=2, jobs=2)
    one = scan(["the cat doc 1"], paths, n=2, jobs=1)
    assert two.to_dict() == one.to_dict()
    files = two.inputs["corpus"][0]["files"]
    assert {Path(f["path"]): f["sha256"] for f in files} == _expected(paths)


def test_a_hashing_thread_never_started_still_gives_every_digest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(START_METHOD_ENV, "spawn")
    paths = _files(tmp_path)
    hashes = corpus_hashes(paths, LocalProcesses(2))
    try:
        assert hashes.results() == _expected(paths)  # NOTE: no start(): no digest went missing
    finally:
        hashes.close()


def _report_signals(paths: list[Path], send: Connection) -> None:
    """In place of the hashing: what the child's first line of code finds (blocked signals,
    then what its own code makes of them), for each of its paths."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    corpus_hashes_module.child_signals()
    after = (signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []))
    send.send([repr((sorted(blocked), after[0] is signal.SIG_IGN, sorted(after[1])))] * len(paths))
    send.close()


@forking
def test_a_hashing_process_starts_with_ctrl_c_held_until_it_ignores_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C in the moment a hashing process starts, before its code ignores Ctrl-C, printed
    multiprocessing's traceback of a KeyboardInterrupt (seen once in the signal tests): the
    child now starts with Ctrl-C and SIGTERM blocked, ignores Ctrl-C, then unblocks them."""
    monkeypatch.setattr(corpus_hashes_module, "_hash_files", _report_signals)
    files = _files(tmp_path, 1)
    hashing = ForkedHashing(files)
    try:
        (said,) = hashing.results().values()
    finally:
        hashing.close()
    held = sorted([signal.SIGINT, signal.SIGTERM])
    assert said == repr((held, True, []))
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == set(), "the parent's mask restored"
