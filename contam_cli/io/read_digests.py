"""sha256 of files from the bytes a scan reads anyway: the corpus is not read a second time.

A scan in one process reads every corpus file from its start to its end (shard after shard, in
order). While a :class:`ReadDigests` is active (in this thread's context),
:func:`~contam_cli.io.formats.open_raw` and :func:`~contam_cli.io.formats.open_binary` hand back
each of its files through :func:`tee`: what is read from the file (the raw, still compressed
bytes) also goes to the file's sha256, the part of each read that extends what the digest holds,
whatever order the reads come in. A thread does the hashing (hashlib releases the GIL), so the
scan's wall time does not grow. :meth:`ReadDigests.results` then reads what no reader reached
(the rest of a file read in part, a Parquet file that pyarrow opens itself) and gives every
digest: always that of :func:`~contam_cli.io.discover.sha256_file`, since each digest only ever
holds a prefix of its file, byte for byte.
"""

from __future__ import annotations

import hashlib
import io
import os
import queue
import threading
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["ReadDigests", "hash_rest", "tee"]

_ACTIVE: ContextVar[ReadDigests | None] = ContextVar("contam_read_digests", default=None)

#: Reads waiting for the hashing thread at most (a few MB: the readers read 2 to 4 MiB at a time).
_QUEUED = 8


def tee(path: str | os.PathLike[str], raw: BinaryIO) -> BinaryIO:
    """`raw`, the file at local `path` opened for binary reading: as it is, or, when the active
    :class:`ReadDigests` hashes `path`, wrapped so that its reads feed the digest."""
    active = _ACTIVE.get()
    digest = None if active is None else active.digest_of(path)
    if active is None or digest is None:
        return raw
    return _Tee(raw, digest, active)  # type: ignore[return-value]


class _Digest:
    __slots__ = ("fed", "hash", "path")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.hash = hashlib.sha256()
        self.fed = 0
        """Bytes from the file's start handed to the hashing thread."""


class ReadDigests:
    """The sha256 of `paths`, taken from what this thread's readers read of them once
    :meth:`start` has run (see the module)."""

    def __init__(self, paths: list[Path]) -> None:
        self._paths = {p: os.path.realpath(p) for p in paths}
        # NOTE: one digest per file, however many of `paths` name it
        self._digests = {real: _Digest(p) for p, real in self._paths.items()}
        self._queue: queue.Queue[tuple[_Digest, Any] | None] = queue.Queue(_QUEUED)
        self._thread: threading.Thread | None = None
        self._token: Token[ReadDigests | None] | None = None

    def digest_of(self, path: str | os.PathLike[str]) -> _Digest | None:
        return self._digests.get(os.path.realpath(path)) if self._digests else None

    def start(self) -> None:
        """Hash what this thread reads from now on (until :meth:`results` or :meth:`close`)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="contam-hash", daemon=True)
            self._thread.start()
            self._token = _ACTIVE.set(self)

    def feed(self, digest: _Digest, at: int, data: Any) -> None:
        """Bytes `data`, read at offset `at` of the digest's file: the part past what the digest
        has goes to the hashing thread (an immutable object, or a copy of a reused buffer)."""
        end = at + len(data)
        if at <= digest.fed < end:
            piece = data if at == digest.fed else memoryview(data)[digest.fed - at :]
            if not isinstance(data, bytes):
                piece = bytes(piece)
            digest.fed = end
            self._queue.put((digest, piece))

    def results(self) -> dict[Path, str]:
        """Every path's hex digest; what the readers left unread is read here."""
        self._stop()
        done = {}
        for real, digest in self._digests.items():
            _finish(digest)
            done[real] = digest.hash.hexdigest()
        return {p: done[real] for p, real in self._paths.items()}

    def close(self) -> None:
        """Stop hashing (a failed or interrupted scan): nothing is fed any more."""
        self._stop()

    def _stop(self) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            digest, piece = item
            digest.hash.update(piece)


def hash_rest(digest: Any, fh: BinaryIO) -> int:
    """Feed `digest` (a hashlib object) the rest of binary file `fh`; the bytes fed."""
    # NOTE: into one buffer, not a new 1 MiB bytes object (and its allocation) per read.
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    done = 0
    while n := fh.readinto(buf):  # type: ignore[attr-defined]
        digest.update(view[:n])
        done += n
    return done


def _finish(digest: _Digest) -> None:
    """Read the digest's file on from where the readers left it, to its end."""
    with open(digest.path, "rb", buffering=0) as fh:
        fh.seek(digest.fed)
        digest.fed += hash_rest(digest.hash, fh)


class _Tee(io.RawIOBase):
    """A binary file whose reads also feed a digest (see :meth:`ReadDigests.feed`)."""

    def __init__(self, raw: BinaryIO, digest: _Digest, sink: ReadDigests) -> None:
        super().__init__()
        self._raw = raw
        self._digest = digest
        self._sink = sink
        self._at = raw.tell()

    def read(self, size: int | None = -1) -> bytes:
        data = self._raw.read(-1 if size is None else size)
        self._sink.feed(self._digest, self._at, data)
        self._at += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            self._sink.feed(self._digest, self._at, memoryview(buffer).cast("B")[:n])
            self._at += n
        return n

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._at = self._raw.seek(offset, whence)
        return self._at

    def tell(self) -> int:
        return self._at

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()

    def __getattr__(self, name: str) -> Any:  # NOTE: name, mode: the file's
        return getattr(self._raw, name)
