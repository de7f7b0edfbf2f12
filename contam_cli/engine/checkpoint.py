"""Checkpoints: each finished task's result on disk, so an interrupted corpus pass resumes.

:class:`Checkpointed` wraps any :class:`~contam_cli.engine.executor.Executor`. A re-run with the
same directory and configuration loads the tasks that finished and runs only the others; the
caller merges the same results in the same order, so the report is the one an uninterrupted run
gives. Layout of a checkpoint directory::

    DIR/.contam-checkpoint.json          schema, tool version, run key, the passes' keys
    DIR/<pass key>/<sha256(task key)>.pkl  one finished task: its key and its result (pickle,
                                           read back only as contam's result types, see
                                           :mod:`.checkpoint_entry`)
    DIR/<pass key>/<sha256(task key)>.out/ copies of the files the task wrote (corpus clean)

A pass key is :func:`config_key` of the run key and the pass's context (the eval index content,
the options that change a result), so a directory made by another configuration is refused
rather than mixed in. A task key names the task and the stat of its files (see :func:`_stat`), so
a task whose corpus file changed runs again.

NOTE: results are saved by the driver as the run reaches them in task order; on an interrupt the
few finished tasks waiting behind a slower one (at most the executor's in-flight bound) run again.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.engine.checkpoint_entry import DamagedEntry, dump_entry, load_entry
from contam_cli.engine.executor import Executor
from contam_cli.engine.shards import Shard
from contam_cli.errors import ArgumentError, OutputError, UsageError
from contam_cli.io.output import write_atomic
from contam_cli.io.remote import RemoteFile

__all__ = ["MARKER", "Checkpointed", "config_key", "task_key"]

C = TypeVar("C")
T = TypeVar("T")
R = TypeVar("R")

MARKER = ".contam-checkpoint.json"
_LOCK = ".contam-checkpoint.lock"
SCHEMA = "contam.checkpoint/3"

#: Fields that never change a task's result (how fast, not what): left out of a pass key, so a
#: resumed run may use more workers or the compiled kernels.
_IRRELEVANT = {
    "ScanOptions": {"jobs", "accel", "hash_corpus", "chunk_bytes", "eval_cache"},
    "EvalIndex": {"words", "words_log2", "directory", "dir_log2"},
    "_Context": {"chunk_bytes"},
    # NOTE: an index build's staging directory is new on every run (see corpus_index.resume)
    "MapContext": {"root", "token", "accel"},
    "ReduceContext": {"root", "token"},
}


def config_key(*parts: Any) -> str:
    """A stable hash (32 hex digits) of `parts`: dataclasses field by field, numpy arrays by
    dtype, shape and bytes, and plain values; the same on every machine and run.

    >>> config_key({"n": 13, "redact": False}) == config_key({"redact": False, "n": 13})
    True
    >>> config_key(np.arange(3)) == config_key(np.arange(4))
    False
    """
    h = hashlib.sha256()
    for part in parts:
        _feed(h, part)
    return h.hexdigest()[:32]


def _feed(h: Any, obj: Any) -> None:
    """Add one value to `h`, tagged by its kind so that different values never collide."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, bytes):
        h.update(b"bytes:%d:" % len(obj) + obj)
    elif isinstance(obj, Path):
        _feed(h, str(obj))
    elif isinstance(obj, enum.Enum):
        _feed(h, obj.value)
    elif isinstance(obj, (np.ndarray, np.generic)) and np.asarray(obj).dtype.hasobject:
        _feed(h, np.asarray(obj).tolist())  # NOTE: the bytes of an object array are pointers
    elif isinstance(obj, (np.ndarray, np.generic)):
        arr = np.ascontiguousarray(obj)
        h.update(f"array:{arr.dtype.str}:{arr.shape};".encode())
        h.update(arr.data)
    elif isinstance(obj, (tuple, list)):
        h.update(f"seq:{len(obj)}[".encode())
        for item in obj:
            _feed(h, item)
        h.update(b"]")
    elif isinstance(obj, dict):
        _feed(h, sorted(((repr(k), v) for k, v in obj.items()), key=lambda kv: kv[0]))
    elif isinstance(obj, (set, frozenset)):
        _feed(h, sorted(repr(x) for x in obj))
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        _feed_dataclass(h, obj)
    else:
        raise ArgumentError(f"config_key: cannot hash a {type(obj).__name__}")


def _feed_dataclass(h: Any, obj: Any) -> None:
    name = type(obj).__name__
    skip = _IRRELEVANT.get(name, set())
    h.update(f"dataclass:{type(obj).__module__}.{name}(".encode())
    for f in dataclasses.fields(obj):
        if f.name not in skip:
            h.update(f"{f.name}=".encode())
            _feed(h, getattr(obj, f.name))
    h.update(b")")


def task_key(task: Any) -> str:
    """A stable key for a task: a scan shard (:attr:`Shard.key` and exactly what it reads), a
    tuple starting with a path (a corpus clean's file), anything with a ``key``, or a str; each
    file named with its stat (:func:`_stat`), so a task whose input changed runs again."""
    if isinstance(task, Shard):
        items = ";".join(f"{o}:{p}:{r}:{_stat(p)}" for o, p, r in task.items)
        return f"{task.key} [{items}]"
    if isinstance(task, tuple) and task and isinstance(task[0], (str, Path, RemoteFile)):
        rest = " ".join(str(x) for x in task[1:2])
        return f"{task[0]} {rest} [{_stat(task[0])}]"
    key = getattr(task, "key", task)
    if isinstance(key, str):
        return key
    raise ArgumentError(f"task_key: no stable key for a {type(task).__name__}; pass key=")


def _stat(path: str | Path | RemoteFile) -> str:
    """What says a file is the one a result was made from: its size, mtime, ctime and inode. The
    change time is set by the kernel on every write and cannot be set back (``touch -r``,
    ``cp -p``, ``rsync -t`` and tar restore only the mtime), so a same-size rewrite that keeps
    the mtime still runs again; a file merely moved or re-permissioned runs again too, never the
    other way round."""
    if isinstance(path, RemoteFile):
        return path.version  # NOTE: the listed size, ETag and times: a changed object runs again
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


class Checkpointed(Executor):
    """`executor`, with every finished task's result kept in `directory` and reused on a re-run.

    `config_key`: a key of the run's configuration beyond the context (say, the command and its
    options, through :func:`config_key`); `key`: a task's stable key (default :func:`task_key`);
    `outputs`: the files a task writes (kept beside its result and put back when it is reused);
    `inputs`: paths the checkpoint must not be inside of. :attr:`damaged` names each entry that
    was run again because it could not be read back as contam's own (damaged, or forged), and
    `on_damaged` is given each such line as it happens (the command line warns).
    """

    name = "checkpointed"

    def __init__(
        self,
        executor: Executor,
        directory: str | Path,
        config_key: str = "",
        *,
        key: Callable[[Any], str] = task_key,
        outputs: Callable[[Any], Sequence[Path]] | None = None,
        inputs: Sequence[str | Path] = (),
        on_damaged: Callable[[str], None] | None = None,
    ) -> None:
        self.executor = executor
        self.on_damaged = on_damaged
        self.directory = Path(directory)
        self.config = config_key
        self.key = key
        self.outputs = outputs
        self._passes = 0
        self.damaged: list[str] = []
        """One line per entry run again: its path and why it was not read back."""
        _check_outside(self.directory, inputs)

    def describe(self) -> dict[str, Any]:
        return {**self.executor.describe(), "checkpoint": str(self.directory)}

    def _note(self, line: str) -> None:
        self.damaged.append(line)
        if self.on_damaged is not None:
            self.on_damaged(line)

    def map(
        self,
        work: Callable[[C, T], R],
        context: C,
        tasks: Sequence[T],
        *,
        on_start: Callable[[], None] | None = None,
        on_done: Callable[[int], None] | None = None,
    ) -> Iterator[R]:
        pass_key = config_key(SCHEMA, __version__, self.config, context)
        keys = [self.key(t) for t in tasks]
        _check_checkpoint_dir(self.directory)
        with _locked(self.directory):
            store = _Store.open(self.directory, self.config, pass_key, self._passes, self._note)
            self._passes += 1
            todo = [i for i, k in enumerate(keys) if not store.has(k)]
            if on_done is not None:
                for i in sorted(set(range(len(tasks))) - set(todo)):
                    on_done(i)
            if not todo and on_start is not None:
                on_start()
            inner_done = (lambda j: on_done(todo[j])) if on_done is not None else None
            inner = self.executor.map(
                work, context, [tasks[i] for i in todo], on_start=on_start, on_done=inner_done
            )
            left = set(todo)
            try:
                for i, (task, k) in enumerate(zip(tasks, keys)):
                    if i in left:
                        result = next(inner)
                        store.save(k, result, self._outputs(task))
                    else:
                        rerun = functools.partial(work, context, task)
                        result = store.load(k, self._outputs(task), rerun)
                    yield result
            finally:
                close = getattr(inner, "close", None)  # NOTE: a generator: stop it, and its pool
                if close is not None:
                    close()

    def _outputs(self, task: Any) -> Sequence[Path]:
        return self.outputs(task) if self.outputs is not None else ()


def _check_outside(directory: Path, inputs: Sequence[str | Path]) -> None:
    target = directory.resolve()
    for item in inputs:
        source = Path(item).resolve()
        if target == source or (source.is_dir() and target.is_relative_to(source)):
            raise OutputError(f"{directory}: refusing to keep a checkpoint inside the input {item}")


def _check_checkpoint_dir(directory: Path) -> None:
    """Refuse a directory that holds files and was not made as a checkpoint (before touching
    it)."""
    if directory.is_dir() and not (directory / MARKER).exists():
        if any(p.name != _LOCK for p in directory.iterdir()):
            raise UsageError(f"{directory}: not a contam checkpoint directory (it holds files)")
    elif directory.exists() and not directory.is_dir():
        raise UsageError(f"checkpoint {directory}: not a directory")


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold the checkpoint for one run: a second run on it at the same time is refused."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / _LOCK, "a+b") as fh:
        try:
            _lock(fh)
        except OSError:
            raise UsageError(f"checkpoint {directory} is in use by another run") from None
        try:
            yield
        finally:
            _unlock(fh)


def _lock(fh: IO[bytes]) -> None:
    """An exclusive lock on `fh`, without waiting (OSError when another process holds it):
    flock on POSIX, a one-byte msvcrt lock on Windows (released when the file is closed)."""
    if os.name == "nt":  # NOTE: os.name, not sys.platform: mypy checks both branches
        import msvcrt

        fh.seek(0)
        getattr(msvcrt, "locking")(fh.fileno(), getattr(msvcrt, "LK_NBLCK"), 1)
        return
    import fcntl

    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(fh: IO[bytes]) -> None:
    if os.name == "nt":
        import msvcrt

        fh.seek(0)
        getattr(msvcrt, "locking")(fh.fileno(), getattr(msvcrt, "LK_UNLCK"), 1)
        return
    import fcntl

    fcntl.flock(fh, fcntl.LOCK_UN)


@dataclasses.dataclass(frozen=True)
class _Store:
    """One pass's folder of finished tasks."""

    folder: Path
    damaged: Callable[[str], None]
    """Told of each entry run again (:attr:`Checkpointed.damaged`)."""

    @classmethod
    def open(
        cls, directory: Path, run: str, pass_key: str, number: int, damaged: Callable[[str], None]
    ) -> _Store:
        """The folder of pass `number` (0-based in this run), after checking that the directory
        was made by this configuration (or is new, then marking it)."""
        marker = directory / MARKER
        refused = UsageError(
            f"checkpoint {directory} was made by another configuration "
            "(remove it to start over, or choose another directory)"
        )
        if marker.exists():
            try:
                meta = orjson.loads(marker.read_bytes())
            except orjson.JSONDecodeError:
                raise refused from None
            if meta.get("schema") != SCHEMA or meta.get("run") != run:
                raise refused
        else:
            meta = {"schema": SCHEMA, "tool": __version__, "run": run, "passes": []}
        passes: list[str] = list(meta.get("passes", []))
        if number < len(passes) and passes[number] != pass_key:
            raise refused
        if number >= len(passes):
            meta["passes"] = [*passes, pass_key]
            write_atomic(marker, orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
        folder = directory / pass_key
        folder.mkdir(exist_ok=True)
        return cls(folder, damaged)

    def _path(self, key: str) -> Path:
        return self.folder / (hashlib.sha256(key.encode()).hexdigest() + ".pkl")

    def has(self, key: str) -> bool:
        return self._path(key).exists()

    def save(self, key: str, result: Any, outputs: Sequence[Path]) -> None:
        """Keep `result`: the task's output files first, the entry last (it commits them)."""
        path = self._path(key)
        kept = []
        for j, out in enumerate(outputs):
            kept.append(out.exists())
            if kept[-1]:
                _link_or_copy(out, path.with_suffix(".out") / str(j))
        write_atomic(path, dump_entry({"key": key, "result": result, "outputs": kept}))

    def load(self, key: str, outputs: Sequence[Path], rerun: Callable[[], Any]) -> Any:
        """The kept result of `key` (its output files put back); run again when the entry cannot
        be read back as contam's own (a truncated, damaged, foreign or forged file)."""
        path = self._path(key)
        try:
            entry = load_entry(path.read_bytes())
            if not isinstance(entry, dict) or entry.get("key") != key:
                raise DamagedEntry("it is another task's entry")
        except (OSError, DamagedEntry) as exc:
            self.damaged(f"checkpoint entry {path}: {exc}; its task ran again")
            result = rerun()
            self.save(key, result, outputs)
            return result
        for j, (out, kept) in enumerate(zip(outputs, entry["outputs"])):
            if kept:
                _link_or_copy(path.with_suffix(".out") / str(j), out)
        return entry["result"]


def _link_or_copy(src: Path, dest: Path) -> None:
    """`dest` becomes `src`'s content, atomically: a hard link where the file system allows,
    else a copy (the files are written whole once and never changed in place)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with suppress(FileNotFoundError):
        tmp.unlink()
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)
