"""The corpus files' sha256 for the report, computed beside the scan.

A scan in this process alone (``--jobs 1``) hashes the bytes it reads anyway
(:mod:`contam_cli.io.read_digests`): the corpus is read once, not twice. Where the scan forks
worker processes (``--jobs`` above 1 on Linux), the hashing runs in one more forked process,
started before the eval index is built: the start of a scan is serial (reading and indexing the
eval set), and hashing then uses the core it leaves idle. Elsewhere (spawned workers, Ray) it
runs in a thread (hashing releases the GIL) started once the workers exist: nothing may fork
while another thread runs.
"""

from __future__ import annotations

import signal
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, cast

from contam_cli.engine.executor import Executor, InProcess, LocalProcesses, start_method
from contam_cli.io.discover import sha256_file
from contam_cli.io.read_digests import ReadDigests

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext  # NOTE: absent on Windows

__all__ = ["CorpusHashes"]


class CorpusHashes:
    """sha256 of `paths`: from what this process reads when `executor` runs the scan here, in a
    child process started now when it forks its workers, else in a thread started by
    :meth:`start` (see the module)."""

    def __init__(self, paths: list[Path], executor: Executor) -> None:
        self.paths = paths
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[Path, Future[str]] = {}
        self.proc: BaseProcess | None = None
        self.conn: Connection | None = None
        self.read: ReadDigests | None = None
        if paths and isinstance(executor, InProcess):
            self.read = ReadDigests(paths)
            self.read.start()
        elif paths and isinstance(executor, LocalProcesses) and start_method() == "fork":
            ctx = cast("ForkContext", get_context(start_method()))
            self.conn, send = ctx.Pipe(duplex=False)
            self.proc = ctx.Process(target=_hash_files, args=(paths, send), daemon=True)
            self.proc.start()
            send.close()

    def start(self) -> None:
        """Start the thread (once the workers exist), unless a child process already hashes."""
        if self.paths and self.proc is None and self.pool is None and self.read is None:
            self.pool = ThreadPoolExecutor(max_workers=1)
            self.futures = {p: self.pool.submit(sha256_file, p) for p in self.paths}

    def results(self) -> dict[Path, str]:
        """Each path's hex digest; the error hashing one met is raised here."""
        if self.read is not None:
            return self.read.results()
        if self.proc is None or self.conn is None:
            return {p: f.result() for p, f in self.futures.items()}
        try:
            outcome = self.conn.recv()
        except EOFError:
            raise RuntimeError("hashing the corpus files: the hashing process died") from None
        self.proc.join()
        if isinstance(outcome, BaseException):
            raise outcome
        return dict(zip(self.paths, outcome))

    def close(self) -> None:
        """Stop what is still running (a failed or interrupted scan) and release it."""
        if self.read is not None:
            self.read.close()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.terminate()
            self.proc.join()
            self.proc = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None


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
