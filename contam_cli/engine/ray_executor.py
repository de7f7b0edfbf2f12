"""The Ray engine (extra ``ray``): the tasks of a corpus pass on a Ray cluster, or a local one.

:class:`RayExecutor` implements :class:`~contam_cli.engine.executor.Executor`, so a scan or a
corpus clean runs on Ray without a change to either: the caller still merges the results in task
order, and the report is the one the local engine gives.

* The context (the eval index and the options; possibly 100+ MB) is put in the object store once
  and every task gets it by reference; numpy arrays in it reach the workers without a copy.
* At most ``max_in_flight`` tasks (default: twice the cluster's CPUs) are submitted and not yet
  yielded, so a slow first shard cannot pile up every later result in the driver.
* A task that raises ``OSError`` (a flaky disk or network mount) or whose worker dies is retried
  by Ray, ``max_retries`` times; a :class:`~contam_cli.errors.ContamError` is a property of the
  input and surfaces at once, as it was raised (its message names the file and line). A task that
  keeps failing raises a ContamError naming the task.
"""

from __future__ import annotations

import logging
import os
import site
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, TypeVar

from contam_cli.engine.executor import Executor
from contam_cli.engine.ray_address import check_reachable, ray_address
from contam_cli.engine.ray_signals import signals_kept
from contam_cli.errors import ArgumentError, ContamError, MissingExtraError
from contam_cli.io.remote import RemoteFile

__all__ = ["RayExecutor", "runtime_env_for", "task_name"]

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The contam_cli package directory (what a remote cluster is sent, see runtime_env_for)."""


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "ray") from None
    return ray


def _run_task(payload: tuple[Callable[[Any, Any], Any], Any, bool, str], task: Any) -> Any:
    """What a Ray worker runs: `payload` is (work, context, tune_heap, the driver's working
    directory) from the object store."""
    work, context, tune_heap, cwd = payload
    if tune_heap and not _TUNED:
        _tune_heap()
    if os.getcwd() != cwd and os.path.isdir(cwd):
        # NOTE: relative corpus paths mean what they mean to the driver; a job's workers are
        # its own processes, so this stays within the run (where cwd does not exist on a node,
        # a relative path fails there with the message saying to use a shared path).
        os.chdir(cwd)
    return work(context, task)


_TUNED: list[bool] = []


def _tune_heap() -> None:
    """Keep freed chunk-sized temporaries in the heap of this Ray worker (glibc only).

    NOTE: the same setting ``contam`` applies to its own process (cli.common.tune_allocator),
    which local workers inherit by fork; Ray starts its workers afresh, and without it the page
    faults of every chunk's fresh mmaps cost about a sixth of a scan. A Ray worker runs this job's
    tasks only, so the process-wide setting stays within the run.
    """
    _TUNED.append(True)
    if sys.platform != "linux":
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 16 << 20)  # M_MMAP_THRESHOLD
    mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD


def task_name(task: Any) -> str:
    """A short name for a task in messages: its ``key`` (a shard), else its first path.

    >>> task_name(("data/a.jsonl", "a.jsonl", "out/a.jsonl"))
    'data/a.jsonl'
    """
    key = getattr(task, "key", None)
    if isinstance(key, str):
        return key
    if isinstance(task, (tuple, list)) and task and isinstance(task[0], (str, Path, RemoteFile)):
        return str(task[0])
    text = repr(task)
    return text if len(text) <= 80 else text[:77] + "..."


def runtime_env_for(
    address: str | None, runtime_env: dict[str, Any] | None, *, ship_code: bool = True
) -> dict[str, Any] | None:
    """The runtime_env the job gets: `runtime_env`, plus what makes ``contam_cli`` importable.

    A local cluster's workers run this interpreter, in this working directory, with this
    environment; only when contam_cli came from a directory put on ``sys.path`` at run time does
    that directory go on their PYTHONPATH (a runtime_env slows the workers' start). A remote
    cluster (an `address`) is sent this very package with ``py_modules`` (unless `ship_code` is
    off), so the workers run the driver's code: pickled shards and results must match it. The
    workers still need contam's dependencies (numpy, orjson; numba for ``[fast]``): install
    ``contam-cli[ray]`` in the cluster's image, or add ``{"pip": [...]}`` here.

    >>> env = runtime_env_for("auto", {"env_vars": {"A": "1"}})
    >>> sorted(env), env["env_vars"]
    (['env_vars', 'excludes', 'py_modules'], {'A': '1'})
    """
    env: dict[str, Any] = dict(runtime_env or {})
    if address is not None:
        if ship_code:
            env["py_modules"] = [*env.get("py_modules", ()), str(_PACKAGE_DIR)]
            env.setdefault("excludes", ["__pycache__", "*.pyc"])
        return env or None
    parent = str(_PACKAGE_DIR.parent)
    if _added_at_run_time(parent):
        env_vars = dict(env.get("env_vars", {}))
        old = env_vars.get("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
        env_vars["PYTHONPATH"] = os.pathsep.join(p for p in (parent, old) if p)
        env["env_vars"] = env_vars
    return env or None


def _added_at_run_time(directory: str) -> bool:
    """Whether `directory` is on sys.path only because this process put it there (a worker
    started with our environment and working directory would not have it)."""
    on_path = {_resolved(p) for p in sys.path}
    if directory not in on_path:
        return False  # NOTE: found by an installed finder (an editable install): workers too
    given = [*site.getsitepackages(), site.getusersitepackages(), os.getcwd()]
    given += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return directory not in {_resolved(p) for p in given}


def _resolved(path: str) -> str:
    return str(Path(path or ".").resolve())


class RayExecutor(Executor):
    """Tasks on Ray: a local cluster started for the run, or a running one (`address`).

    `address`: None starts a local Ray with `num_cpus` CPUs (default: all) and shuts it down
    after each :meth:`map` (or at the end of a ``with`` block, to keep it for several passes);
    ``"auto"``, ``"HOST:6379"`` or ``"ray://HOST:10001"`` connects to a running cluster (and
    disconnects afterwards). When Ray is already initialized in this process it is used as it is
    and left running. `max_in_flight`: tasks submitted and not yet yielded (default: twice the
    cluster's CPUs). `max_retries`: how often Ray re-runs a task whose worker died or that raised
    OSError. `runtime_env`: Ray's, see :func:`runtime_env_for`. `tune_heap`: give the workers
    the heap setting the ``contam`` command gives itself (glibc's mmap and trim thresholds).
    """

    name = "ray"

    def __init__(
        self,
        address: str | None = None,
        num_cpus: int | None = None,
        max_in_flight: int | None = None,
        max_retries: int = 3,
        runtime_env: dict[str, Any] | None = None,
        *,
        ship_code: bool = True,
        tune_heap: bool = True,
    ) -> None:
        _ray()  # NOTE: fail now, with the extra to install, not half-way through a scan.
        if num_cpus is not None and (num_cpus < 1 or address is not None):
            raise ArgumentError("num_cpus must be >= 1, and only for a local Ray (no address)")
        if max_in_flight is not None and max_in_flight < 1:
            raise ArgumentError(f"max_in_flight must be >= 1, got {max_in_flight}")
        if max_retries < 0:
            raise ArgumentError(f"max_retries must be >= 0, got {max_retries}")
        self.address = address if address is None else ray_address(address)
        self.num_cpus = num_cpus
        self.max_in_flight = max_in_flight
        self.max_retries = max_retries
        self.runtime_env = runtime_env_for(self.address, runtime_env, ship_code=ship_code)
        self.tune_heap = tune_heap
        self._held = 0
        """Nesting depth of ``with`` blocks: while > 0, map() leaves the cluster up."""
        self._started = False
        """This executor called ray.init (and so shuts Ray down)."""

    def describe(self) -> dict[str, Any]:
        return {"engine": self.name, "address": self.address or "local"}

    def __enter__(self) -> RayExecutor:
        self._held += 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._held -= 1
        if self._held == 0:
            self._release()

    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        if not tasks:
            if on_start is not None:
                on_start()
            return
        try:
            ray = self._connect()
            payload = ray.put((work, context, self.tune_heap, os.getcwd()))
            if on_start is not None:
                on_start()
            yield from self._in_order(ray, payload, tasks, on_done)
        finally:
            if self._held == 0:
                self._release()

    def _connect(self) -> ModuleType:
        ray = _ray()
        if ray.is_initialized():
            return ray
        common: dict[str, Any] = {
            "runtime_env": self.runtime_env,
            "log_to_driver": False,
            "logging_level": logging.ERROR,
        }
        if self.address is not None:
            check_reachable(self.address)
        what = f"connect to the Ray cluster at {self.address}" if self.address else "start Ray"
        # NOTE: a signal waits for the end of the start, then raises: the caller's finally stops Ray
        with signals_kept():
            try:
                if self.address is None:
                    # NOTE: "local" starts a Ray of our own even where `ray start` runs one on
                    # this node (no address would connect to that one).
                    ray.init("local", num_cpus=self.num_cpus, include_dashboard=False, **common)
                else:
                    ray.init(address=self.address, **common)
            except (ConnectionError, ValueError, RuntimeError, OSError) as e:
                raise ContamError(f"could not {what}: {_first_line(e)}") from e
            self._started = True
            _quiet_driver(ray, True)
        return ray

    def _release(self) -> None:
        if self._started:
            ray = _ray()
            self._started = False
            with signals_kept():
                ray.shutdown()
            _quiet_driver(ray, False)  # NOTE: after: the shutdown flushes what is left

    def _in_order(
        self,
        ray: ModuleType,
        payload: Any,
        tasks: Sequence[Any],
        on_done: Callable[[int], None] | None,
    ) -> Iterator[Any]:
        """Results in task order, at most `in_flight` tasks submitted and not yet yielded;
        finished ones are fetched at once (an error surfaces then) and buffered."""
        remote = ray.remote(_run_task).options(
            num_cpus=1, max_retries=self.max_retries, retry_exceptions=[OSError]
        )
        in_flight = self.max_in_flight or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
        running: dict[Any, int] = {}  # ObjectRef -> task number
        results: dict[int, Any] = {}
        submitted = done = 0
        try:
            while done < len(tasks):
                while submitted < len(tasks) and submitted - done < in_flight:
                    running[remote.remote(payload, tasks[submitted])] = submitted
                    submitted += 1
                if done not in results:
                    ready, _ = ray.wait(list(running), num_returns=1)
                    rest = [r for r in running if r not in ready]
                    if rest:
                        ready += ray.wait(rest, num_returns=len(rest), timeout=0)[0]
                    for ref in sorted(ready, key=running.__getitem__):
                        i = running.pop(ref)
                        results[i] = self._fetch(ray, ref, tasks[i])
                        if on_done is not None:
                            on_done(i)
                while done in results:
                    yield results.pop(done)
                    done += 1
        finally:
            _cancel(ray, list(running))

    def _fetch(self, ray: ModuleType, ref: Any, task: Any) -> Any:
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as e:
            cause = e.cause
            if isinstance(cause, ContamError):
                raise cause from None
            attempts = (
                f" after {self.max_retries + 1} attempts" if isinstance(cause, OSError) else ""
            )
            raise ContamError(
                f"task {task_name(task)} failed{attempts}: {type(cause).__name__}: {cause}"
                + _hint(cause)
            ) from cause
        except ray.exceptions.RayError as e:
            raise ContamError(
                f"task {task_name(task)} failed after {self.max_retries + 1} attempts: "
                f"{type(e).__name__}: {_first_line(e)}"
            ) from e


def _cancel(ray: ModuleType, refs: list[Any]) -> None:
    """Stop every task still running (an error, an interrupt): nothing more runs or writes.

    NOTE: forced, as Ray's gentle cancel reaches a task only between Python bytecodes (not in a
    sleep or a long read), and a corpus-clean task must not write into a directory the caller is
    removing; the cancelled tasks are waited for (briefly), so they are gone when map() returns.
    """
    pending = refs
    # NOTE: a cancel that reaches a task while Ray hands it to a worker can be lost (Ray 2.60
    # let such a task run to its end), so the ones still pending are cancelled again.
    # NOTE: a task that has just finished is not cancelled: a cancel racing its reply crashed
    # the driver's core worker (Ray 2.60, "Check failed: it != submissible_tasks_.end() Tried
    # to complete task that was not pending"; a SIGTERM'd clean in about one run in ten), and
    # left the local Ray's agents running.
    for _ in range(10):
        if not pending:
            return
        with suppress(Exception):
            pending = ray.wait(pending, num_returns=len(pending), timeout=0, fetch_local=False)[1]
        for ref in pending:
            with suppress(Exception):
                ray.cancel(ref, force=True)
        with suppress(Exception):
            pending = ray.wait(pending, num_returns=len(pending), timeout=1, fetch_local=False)[1]


def _hint(cause: BaseException) -> str:
    if isinstance(cause, FileNotFoundError):
        return " (is the corpus at the same path on every Ray node?)"
    return ""


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def _quiet_driver(ray: ModuleType, quiet: bool) -> None:
    """Keep Ray's driver-side messages (task retries) off stdout, which carries the report.

    NOTE: Ray prints errors it pushes to the driver (e.g. "Task failed. There are 2 retries
    remaining") on sys.stdout from a thread of its own, whatever `log_to_driver` says; its one
    switch is a private module flag, so it is set only where it exists.
    """
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if worker is not None and hasattr(worker, "_worker_logs_enabled"):
        worker._worker_logs_enabled = not quiet
