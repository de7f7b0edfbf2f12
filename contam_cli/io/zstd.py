"""A .zst reader that refuses a truncated or corrupt stream (extra ``zstd``).

``zstandard``'s own stream reader returns end-of-file at the cut of a truncated file, which
would let a scan read half an eval set or corpus and call the rest clean. This reader feeds the
compressed bytes to one decompressor per frame (files written by ``zstd`` or parallel writers hold
several frames) and, when the input ends, raises unless the last frame was complete.
"""

from __future__ import annotations

import io
from typing import Any, BinaryIO

from contam_cli.errors import MissingExtraError

__all__ = ["ZstdReader", "TruncatedError"]

_READ = 1 << 20


class TruncatedError(OSError):
    """The compressed stream ended inside a frame, or is not a zstd stream."""


class ZstdReader(io.RawIOBase):
    """Decompressed bytes of a (multi-frame) .zst stream; raises TruncatedError at a bad end."""

    def __init__(self, raw: BinaryIO) -> None:
        try:
            import zstandard
        except ImportError:
            name = getattr(raw, "name", None)
            raise MissingExtraError(
                "zstandard", "zstd", name if isinstance(name, str) else None
            ) from None
        self._zstd = zstandard
        self._raw = raw
        self._obj: Any = None
        self._pending = b""
        self._started = False
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        while not self._pending and not self._done:
            self._fill()
        n = min(len(view), len(self._pending))
        view[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _fill(self) -> None:
        chunk = self._raw.read(_READ)
        if not chunk:
            self._done = True
            if self._obj is not None and not self._obj.eof:
                raise TruncatedError("truncated zstd stream (it ends inside a frame)")
            if not self._started:
                raise TruncatedError("empty zstd stream (not a .zst file)")
            return
        out = []
        while chunk:
            if self._obj is None or self._obj.eof:
                self._obj = self._zstd.ZstdDecompressor().decompressobj()
                self._started = True
            try:
                out.append(self._obj.decompress(chunk))
            except self._zstd.ZstdError as e:
                raise TruncatedError(f"corrupt zstd stream ({e})") from None
            chunk = self._obj.unused_data if self._obj.eof else b""
        self._pending = b"".join(out)

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()
