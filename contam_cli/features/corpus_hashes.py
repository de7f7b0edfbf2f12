"""The corpus files' sha256 for the report, computed beside the scan.

A scan in this process alone (``--jobs 1``) hashes the bytes it reads anyway
(:mod:`contam_cli.io.read_digests`): the corpus is read once, not twice. Where the scan forks
worker processes (``--jobs`` above 1 on Linux), the hashing runs in more forked processes (one
per :data:`WORKERS_PER_HASHER` workers, the files shared out by size), started before the eval
index is built: the start of a scan is serial (reading and indexing the
eval set), and hashing then uses the core it leaves idle. Elsewhere (spawned workers, Ray) it
runs in a thread (hashing releases the GIL) started once the workers exist: nothing may fork
while another thread runs.

:func:`corpus_hashes` picks the way; each is a :class:`Hashing`.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from contam_cli.engine.executor import (
    Executor,
    InProcess,
    LocalProcesses,
    child_signals,
    signals_held,
    start_method,
)
from contam_cli.io.discover import sha256_file
from contam_cli.io.read_digests import ReadDigests

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext  # NOTE: absent on Windows

WORKERS_PER_HASHER = 8
"""Worker processes per hashing process beside them: sha256 of the files takes about 0.6
CPU-s per GB (read included) and the scan about 4.2 (``--jobs 1``, 1,000 examples, the 1 GB bench
corpus), so one hasher per eight workers ends about when they do, where one for all of them would
bound a scan on many cores (100 GB: about 60 s of hashing against 6.6 s of scanning on 64)."""

__all__ = ["ForkedHashing", "Hashing", "NoHashing", "ReadHashing", "ThreadHashing", "corpus_hashes"]


class Hashing(Protocol):
    """The sha256 of a scan's corpus files, computed beside it."""

    def start(self) -> None:
        """The scan's workers exist (the executor's ``on_start``)."""

    def results(self) -> dict[Path, str]:
        """Each path's hex digest; the error hashing one met is raised here."""
        ...

    def close(self) -> None:
        """Stop what is still running (a failed or interrupted scan) and release it."""


def corpus_hashes(paths: list[Path], executor: Executor) -> Hashing:
    """The hashing of `paths` beside a scan that `executor` runs, started now if it starts
    before the workers (see the module)."""
    if not paths:
        return NoHashing()
    if isinstance(executor, InProcess):
        return ReadHashing(paths)
    if isinstance(executor, LocalProcesses) and start_method() == "fork":
        return ForkedHashing(paths, -(-executor.jobs // WORKERS_PER_HASHER))
    return ThreadHashing(paths)


class NoHashing:
    """No files to hash (``--no-corpus-hash``, or only remote objects)."""

    def start(self) -> None:
        pass

    def results(self) -> dict[Path, str]:
        return {}

    def close(self) -> None:
        pass


class ReadHashing:
    """From the bytes this process's readers read, from now on."""

    def __init__(self, paths: list[Path]) -> None:
        self.read = ReadDigests(paths)
        self.read.start()

    def start(self) -> None:
        pass  # NOTE: the reads hash already

    def results(self) -> dict[Path, str]:
        return self.read.results()

    def close(self) -> None:
        self.read.close()


class ForkedHashing:
    """In `processes` child processes forked now, before any thread of the scan's, each
    hashing a share of the files (balanced by size)."""

    def __init__(self, paths: list[Path], processes: int = 1) -> None:
        self.paths = paths
        ctx = cast("ForkContext", get_context(start_method()))  # NOTE: "fork", as chosen
        self.groups = _balanced(paths, max(1, min(processes, len(paths))))
        self.conns: list[Connection] = []
        self.procs: list[BaseProcess] = []
        for group in self.groups:
            conn, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_hash_files, args=(group, send), daemon=True)
            # NOTE: a Ctrl-C during the child's start, before it ignores Ctrl-C, would print
            # multiprocessing's traceback of a KeyboardInterrupt: held until it is started.
            with signals_held():
                proc.start()
            send.close()
            self.conns.append(conn)
            self.procs.append(proc)

    def start(self) -> None:
        pass  # NOTE: the children hash already

    def results(self) -> dict[Path, str]:
        assert self.procs, "closed"
        got: dict[Path, str] = {}
        for group, conn, proc in zip(self.groups, self.conns, self.procs):
            try:
                outcome = conn.recv()
            except EOFError:
                raise RuntimeError("hashing the corpus files: a hashing process died") from None
            proc.join()
            if isinstance(outcome, BaseException):
                raise outcome
            got.update(zip(group, outcome))
        return {p: got[p] for p in self.paths}

    def close(self) -> None:
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
        for proc in self.procs:
            proc.join()
        for conn in self.conns:
            conn.close()
        self.procs, self.conns = [], []


def _balanced(paths: list[Path], k: int) -> list[list[Path]]:
    """`paths` in `k` groups of about equal bytes (the largest first, each to the lightest
    group), each group in the given order; no group is empty."""
    if k == 1:
        return [paths]  # NOTE: no stat of every file (a corpus of many small ones)
    sizes = {p: _size(p) for p in paths}
    loads = [0] * k
    member: dict[Path, int] = {}
    for p in sorted(paths, key=lambda q: -sizes[q]):
        g = loads.index(min(loads))
        member[p] = g
        loads[g] += max(1, sizes[p])
    return [[p for p in paths if member[p] == g] for g in range(k)]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # NOTE: hashing it names the error


class ThreadHashing:
    """In a thread started by :meth:`start`, once the workers exist."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[Path, Future[str]] = {}

    def start(self) -> None:
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=1)
            self.futures = {p: self.pool.submit(sha256_file, p) for p in self.paths}

    def results(self) -> dict[Path, str]:
        self.start()  # NOTE: an executor that never called on_start still gets every digest
        return {p: f.result() for p, f in self.futures.items()}

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _hash_files(paths: list[Path], send: Connection) -> None:
    child_signals()
    try:
        send.send([sha256_file(p) for p in paths])
    except Exception as exc:  # noqa: BLE001 - the parent raises it
        send.send(exc)
    finally:
        send.close()
