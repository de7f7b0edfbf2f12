"""The corpus files' sha256 for the report, computed beside the scan.

A scan in this process alone (``--jobs 1``) hashes the bytes it reads anyway
(:mod:`contam_cli.io.read_digests`): the corpus is read once, not twice. Where the scan forks
worker processes (``--jobs`` above 1 on Linux), the hashing runs in one more forked process,
started before the eval index is built: the start of a scan is serial (reading and indexing the
eval set), and hashing then uses the core it leaves idle. Elsewhere (spawned workers, Ray) it
runs in a thread (hashing releases the GIL) started once the workers exist: nothing may fork
while another thread runs.

:func:`corpus_hashes` picks the way; each is a :class:`Hashing`.
"""

from __future__ import annotations

import signal
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from contam_cli.engine.executor import Executor, InProcess, LocalProcesses, start_method
from contam_cli.io.discover import sha256_file
from contam_cli.io.read_digests import ReadDigests

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext  # NOTE: absent on Windows

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
        return ForkedHashing(paths)
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
    """In a child process forked now, before any thread of the scan's."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths
        ctx = cast("ForkContext", get_context(start_method()))  # NOTE: "fork", as chosen
        self.conn: Connection | None
        self.conn, send = ctx.Pipe(duplex=False)
        self.proc: BaseProcess | None = ctx.Process(
            target=_hash_files, args=(paths, send), daemon=True
        )
        self.proc.start()
        send.close()

    def start(self) -> None:
        pass  # NOTE: the child hashes already

    def results(self) -> dict[Path, str]:
        assert self.proc is not None and self.conn is not None, "closed"
        try:
            outcome = self.conn.recv()
        except EOFError:
            raise RuntimeError("hashing the corpus files: the hashing process died") from None
        self.proc.join()
        if isinstance(outcome, BaseException):
            raise outcome
        return dict(zip(self.paths, outcome))

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.terminate()
            self.proc.join()
            self.proc = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None


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
    # NOTE: Ctrl-C reaches the whole process group; the parent handles it and stops this one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        send.send([sha256_file(p) for p in paths])
    except Exception as exc:  # noqa: BLE001 - the parent raises it
        send.send(exc)
    finally:
        send.close()
