"""Atomic writers: an output file appears whole (compressed by its suffix) or not at all."""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import os
import signal
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any, Literal, cast

from contam_cli.errors import MissingExtraError, OutputError
from contam_cli.io.model import StrPath

__all__ = [
    "WRITE_ERRNOS",
    "atomic_writer",
    "check_parents",
    "check_target",
    "output_group",
    "sync_tree",
    "write_atomic",
]

_COMPRESSION = (".gz", ".bz2", ".xz", ".zst")


def split_compression(name: str) -> tuple[str, str]:
    """Split ``"a.jsonl.gz"`` into ``("a.jsonl", ".gz")``; no compression gives ``(name, "")``."""
    lower = name.lower()
    for suffix in _COMPRESSION:
        if lower.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def _check_not_input(target: Path, inputs: Sequence[StrPath]) -> None:
    for item in inputs:
        source = Path(item).resolve()
        if target == source or (
            target.exists() and source.exists() and os.path.samefile(target, source)
        ):
            raise OutputError(f"{target}: refusing to overwrite the input {item}")
        if source.is_dir() and target.is_relative_to(source):
            raise OutputError(f"{target}: refusing to write inside the input directory {item}")


def _compressor(raw: IO[bytes], name: str) -> IO[bytes]:
    """A stream that compresses into ``raw`` by the suffix of ``name`` (``raw`` itself if none)."""
    compression = split_compression(name)[1]
    if compression == ".gz":
        # NOTE: an empty file name and mtime 0 keep the output byte-identical between runs.
        return cast(IO[bytes], gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0))
    if compression == ".bz2":
        return cast(IO[bytes], bz2.BZ2File(raw, "wb"))
    if compression == ".xz":
        return cast(IO[bytes], lzma.LZMAFile(raw, "wb"))
    if compression == ".zst":
        try:
            import zstandard
        except ImportError:
            raise MissingExtraError("zstandard", "zstd") from None
        return cast(IO[bytes], zstandard.ZstdCompressor().stream_writer(raw, closefd=False))
    return raw


def _default_mode() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable; best effort, as some file systems refuse to sync a directory."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sync_tree(directory: Path) -> None:
    """Flush every file below `directory` (and the directories) to disk, before a staged
    directory is renamed into place: a crash after the rename then cannot leave it short. A
    full disk shows here as an OSError."""
    # NOTE: Windows flushes a file only through a handle open for writing (FlushFileBuffers).
    flags = os.O_RDONLY if os.name == "posix" else os.O_RDWR | getattr(os, "O_BINARY", 0)
    for root, _dirs, files in os.walk(directory):
        for name in files:
            fd = os.open(os.path.join(root, name), flags)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(root))


#: errno values that mean the output could not be written (not that an input is bad).
WRITE_ERRNOS = frozenset(
    e for e in (errno.ENOSPC, getattr(errno, "EDQUOT", None), errno.EFBIG, errno.EROFS) if e
)


def _close_quietly(stream: IO[Any]) -> None:
    try:
        stream.close()
    except Exception:  # NOTE: already failing; the original error is the one to report.
        pass


def _finish(stream: IO[bytes], raw: IO[bytes]) -> None:
    """Flush the compressor (if any) and the file to disk."""
    if stream is not raw:
        stream.close()
    raw.flush()
    os.fsync(raw.fileno())


@contextmanager
def atomic_writer(
    path: StrPath, *, inputs: Sequence[StrPath] = (), mode: Literal["wb", "w"] = "wb"
) -> Iterator[IO[Any]]:
    """Write ``path`` all at once: into a hidden temp file beside it, renamed over it on success.

    On any exception (KeyboardInterrupt too) the temp file is removed and ``path`` is untouched.
    Refuses (OutputError) a ``path`` that is one of ``inputs`` or lies inside an input directory.
    A ``.gz/.bz2/.xz/.zst`` suffix compresses the stream; ``mode="w"`` writes UTF-8 text.
    """
    target = check_target(path, inputs)
    created = _make_parents(target.parent, path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        _remove_dirs(created)
        raise OutputError(f"{path}: cannot write there ({e.strerror or e})") from None
    raw = open(fd, "wb")
    handles: list[IO[Any]] = [raw]  # outermost first, closed in this order on failure
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, _default_mode())  # NOTE: mkstemp's 0600 would surprise users.
        stream = _compressor(raw, target.name)
        handles.insert(0, stream)
        if mode == "w":
            text = io.TextIOWrapper(stream, encoding="utf-8", newline="")
            handles.insert(0, text)
            yield text
            text.flush()
            text.detach()
        else:
            yield stream
        _finish(stream, raw)
        raw.close()
        os.replace(tmp, target)
    except BaseException as e:
        for handle in handles:
            _close_quietly(handle)
        Path(tmp).unlink(missing_ok=True)
        _remove_dirs(created)
        if isinstance(e, OSError) and not isinstance(e, OutputError):
            raise OutputError(
                f"{path}: cannot write ({e.strerror or e}); nothing was written"
            ) from None
        raise
    _fsync_dir(target.parent)


def check_target(path: StrPath, inputs: Sequence[StrPath] = ()) -> Path:
    """The resolved `path` if a file can be written there: not an input, not inside an input
    directory, not a directory, and below no existing file (``afile/r.json``); else OutputError.
    Commands check every output this way before any work."""
    target = Path(path).resolve()
    _check_not_input(target, inputs)
    if target.is_dir():
        raise OutputError(f"{path}: is a directory")
    if target.exists() and not target.is_file():
        # NOTE: a device or FIFO: replacing it by a rename would destroy it, not write to it.
        raise OutputError(f"{path}: is not a regular file; write the output to a file")
    check_parents(path)
    return target


def check_parents(path: StrPath) -> None:
    """OutputError unless `path` (a file or a directory to make) can be created: its nearest
    existing parent must be a directory this process may write in (``afile/out`` is refused
    naming both, before any work)."""
    for parent in Path(path).resolve().parents:
        if parent.exists():
            if not parent.is_dir():
                raise OutputError(f"{path}: cannot create it, {parent} is not a directory")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise OutputError(f"{path}: cannot write in {parent} (permission denied)")
            return


def _make_parents(directory: Path, path: StrPath) -> list[Path]:
    """Create `directory` and its missing parents; the ones created, deepest first."""
    missing = []
    for d in (directory, *directory.parents):
        if d.exists():
            break
        missing.append(d)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _remove_dirs(missing)
        raise OutputError(f"{path}: cannot create {directory} ({e.strerror or e})") from None
    return missing


def _remove_dirs(created: list[Path]) -> None:
    """Remove directories this writer created (deepest first), when they are still empty."""
    for d in created:
        if any(d.iterdir()):
            return
        d.rmdir()


def write_atomic(path: StrPath, data: bytes | str, *, inputs: Sequence[StrPath] = ()) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path, inputs=inputs, mode="w" if isinstance(data, str) else "wb") as fh:
        fh.write(data)


@contextmanager
def output_group() -> Iterator[ExitStack]:
    """Several outputs that appear together or not at all.

    Enter every writer (:func:`atomic_writer`, a staged directory) into the stack this yields;
    they commit in reverse order only when the block ends without error, with Ctrl-C and SIGTERM
    held back meanwhile, so an interrupt never leaves half of them. On an error every one of them
    is discarded.
    """
    stack = ExitStack()
    try:
        yield stack
    except BaseException:
        if not stack.__exit__(*sys.exc_info()):
            raise
        return
    with _signals_held():
        stack.close()


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends (main thread, POSIX; else a no-op)."""
    held = {signal.SIGINT, signal.SIGTERM} if hasattr(signal, "pthread_sigmask") else set()
    if not held or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
