"""Executors: run one function over a list of tasks, in-process or in worker processes.

Corpus work (a scan's shards, a corpus clean's files) is a list of independent tasks mapped to
partial results; the caller merges them in task order, so the result never depends on which
executor ran them or how many workers it had. An executor only decides where ``work(context,
task)`` runs:

* :class:`InProcess` runs the tasks one after another in this process;
* :class:`LocalProcesses` runs them in worker processes on this machine. The context (the eval
  index, the options) reaches each worker once: inherited by ``fork`` on Linux (copy-on-write,
  nothing pickled), else pickled once per worker started by ``spawn`` (Windows, which has no
  fork, and macOS, where fork is unsafe: see :func:`start_method`);
* the Ray engine (extra ``ray``) implements the same interface for a cluster.

NOTE: nothing may fork while another thread runs (the child would inherit locks held by threads
that do not exist in it). ``on_start`` is called once every worker exists, so callers start their
own threads (a file hasher, say) there, never before.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing import get_all_start_methods, get_context
from typing import Any, TypeVar

from contam_cli.errors import UsageError

__all__ = [
    "START_METHOD_ENV",
    "Executor",
    "InProcess",
    "LocalAuto",
    "LocalProcesses",
    "child_signals",
    "make_executor",
    "resolve_jobs",
    "signals_held",
    "start_method",
]

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

Work = Callable[[Any, Any], Any]
"""``work(context, task) -> result``: a module-level function (worker processes import it)."""

START_METHOD_ENV = "CONTAM_START_METHOD"
"""Names the start method of worker processes (``fork``, ``spawn``, ``forkserver``), for tests
that check the spawn path on Linux; unset, :func:`start_method` decides."""


def start_method(threaded: bool = False) -> str:
    """How worker processes start: ``fork`` on Linux, ``spawn`` everywhere else, and ``spawn``
    everywhere when the caller runs threads of its own (`threaded`, as the app's server does).

    NOTE: fork is Linux-only on purpose. Windows has none; on macOS it exists but system
    libraries may start threads (Python's own default there has been spawn since 3.8), and a
    forked child can crash in them. A process that runs threads must not fork at all: a lock
    another thread holds at that moment stays held in the child, which hangs on it (Python
    3.12 warns of it). A forkserver would avoid that too, but it listens on a socket it makes
    in a temp directory, and the app writes no file. :data:`START_METHOD_ENV` overrides, for
    tests.
    """
    methods = get_all_start_methods()
    wanted = os.environ.get(START_METHOD_ENV, "").strip()
    if wanted:
        if wanted not in methods:
            raise UsageError(
                f"{START_METHOD_ENV}={wanted!r}: this platform starts processes by "
                + ", ".join(methods)
            )
        return wanted
    return "fork" if sys.platform == "linux" and "fork" in methods and not threaded else "spawn"


class Executor(ABC):
    """Runs ``work(context, task)`` for every task; yields the results in task order."""

    name: str = "executor"

    @abstractmethod
    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        """The results of `tasks`, in order. `on_start` runs once the workers exist (after any
        fork); `on_done(i)` runs when task i has finished (in completion order)."""

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name}


class InProcess(Executor):
    """Every task in this process, one after another."""

    name = "in-process"

    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        if on_start is not None:
            on_start()
        for i, task in enumerate(tasks):
            result = work(context, task)
            if on_done is not None:
                on_done(i)
            yield result


_WORKER: dict[str, Any] = {}


_STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))
_MASKED = _STOPPING if hasattr(signal, "pthread_sigmask") else ()


@contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait until this submit (which may start a worker) is done.

    NOTE: starting a spawned worker writes its pickled start to a pipe. Interrupted half-way,
    the parent would lose track of a worker that then runs on, orphaned, holding the parent's
    stderr open (a hung pipeline), or leave it a truncated pickle and a traceback. So the
    handlers defer here (main thread) and re-raise afterwards; and the signals are blocked in
    this thread, a mask the new worker inherits and lifts in :func:`_init_worker`, once it
    ignores them (as CPython's resource tracker does).
    """
    caught: list[int] = []
    handlers: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in _STOPPING:
            # NOTE: a handler set outside Python (None) could not be put back: left alone.
            if signal.getsignal(sig) is not None:
                handlers[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _MASKED) if _MASKED else None
    try:
        yield
    finally:
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # NOTE: runs the deferring handler
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


def child_signals() -> None:
    """In a child started under :func:`signals_held`: Ctrl-C ignored, SIGTERM ends it, and
    then the two unblocked (one that came in the meantime is dropped or ends it quietly).

    NOTE: Ctrl-C goes to the whole process group; the parent alone handles it (and stops its
    children), so a child never dies half-way with a traceback of its own. The parent stops
    them with SIGTERM; its own handler (inherited by fork) would make a child print a
    traceback instead of just ending.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _MASKED:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _MASKED)  # NOTE: blocked by signals_held


def _init_worker(work: Work, context: Any) -> None:
    child_signals()
    _WORKER["work"], _WORKER["context"] = work, context


def _run_task(task: Any) -> Any:
    return _WORKER["work"](_WORKER["context"], task)


def _noop() -> None:
    return None


class LocalProcesses(Executor):
    """Tasks in `jobs` worker processes on this machine, at most ``2 * jobs`` in flight."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ValueError("jobs must be >= 1")
        self.jobs = jobs

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "workers": self.jobs}

    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        pool = ProcessPoolExecutor(
            max_workers=min(self.jobs, max(1, len(tasks))),
            mp_context=get_context(start_method()),
            initializer=_init_worker,
            initargs=(work, context),
        )
        try:
            # NOTE: the first submit starts every worker (fork), before any thread of ours;
            # spawned workers start as tasks arrive (spawn is safe beside threads).
            with signals_held():
                first = pool.submit(_noop)
            first.result()
            if on_start is not None:
                on_start()
            yield from _in_order(pool, tasks, 2 * self.jobs, on_done)
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown(wait=True)


def _in_order(
    pool: ProcessPoolExecutor,
    tasks: Sequence[Any],
    in_flight: int,
    on_done: Callable[[int], None] | None,
) -> Iterator[Any]:
    """Results in task order, with at most `in_flight` tasks submitted and not yet yielded;
    `on_done` is called from this thread, once per task, as tasks finish."""
    futures: dict[int, Future[Any]] = {}  # submitted and not yet yielded
    running: dict[Future[Any], int] = {}
    submitted = done = 0
    while done < len(tasks):
        while submitted < len(tasks) and submitted - done < in_flight:
            with signals_held():
                future = pool.submit(_run_task, tasks[submitted])
            running[future] = submitted
            futures[submitted] = future
            submitted += 1
        finished = [f for f in running if f.done()]
        if not finished:
            finished = list(wait(running, return_when=FIRST_COMPLETED)[0])
        for i in sorted(running.pop(f) for f in finished):
            if on_done is not None:
                on_done(i)
        while done < submitted and futures[done] not in running:
            yield futures.pop(done).result()
            done += 1


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop every worker now (an error or Ctrl-C in the parent): nothing more runs."""
    # NOTE: shutdown() forgets the worker processes and the pool's manager thread, so take them
    # first.
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
    # NOTE: the manager thread closes its wake-up pipe as it ends; left running, it could close
    # it while the interpreter's exit hook writes to it (Python 3.11: "Bad file descriptor",
    # with a traceback, after contam's one line).
    if manager is not None:
        manager.join(timeout=5)


def resolve_jobs(jobs: int) -> int:
    """``jobs``, with 0 meaning every core this process may use."""
    if jobs > 0:
        return jobs
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # NOTE: not on macOS or Windows
        return os.cpu_count() or 1


def make_executor(jobs: int, tasks: int) -> Executor:
    """The local executor for `jobs` workers (0: all cores) and `tasks` tasks: in-process when
    one worker would do."""
    n = resolve_jobs(jobs)
    return InProcess() if n <= 1 or tasks <= 1 else LocalProcesses(n)


class LocalAuto(Executor):
    """The local choice of :func:`make_executor`, made per pass from its task count (in this
    process for one task or one job): what a checkpoint wraps when no executor was given."""

    name = "local"

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        inner = make_executor(self.jobs, len(tasks))
        return inner.map(work, context, tasks, on_start=on_start, on_done=on_done)
