"""Documents packed in one buffer, laid out as the tokenizer reads them (no join per chunk)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

import numpy as np

__all__ = ["PackedTexts", "doc_lengths", "packed_buffer"]


def packed_buffer(pieces: Sequence[bytes | memoryview], total: int, count: int) -> bytes:
    """A leading newline, `pieces` joined by newlines, then at least 9 trailing newlines, with the
    whole a multiple of 8 bytes long (`total`: the bytes of the documents the pieces hold,
    `count`: how many there are; a piece may hold several documents joined by newlines, and be
    ``bytes`` or a view of other bytes)."""
    size = 1 + total + count
    return b"\n".join([b"", *pieces, b"\n" * (8 + (-size) % 8)])


class PackedTexts(Sequence[bytes]):
    """UTF-8 documents in one buffer: a newline, then each document followed by a newline.

    The tokenizer reads `buffer` as it is (every separator byte becomes a space, so the newlines
    keep documents apart); indexing gives one document's bytes. Readers that decode documents
    straight into such a buffer (the compiled JSONL route) hand it on without a copy per document.

    >>> p = PackedTexts.from_texts([b"one two", b"", b"three"])
    >>> list(p), p.total
    ([b'one two', b'', b'three'], 12)
    """

    __slots__ = ("buffer", "lengths", "starts")

    def __init__(self, buffer: bytes, lengths: np.ndarray) -> None:
        """`buffer` as :func:`packed_buffer` lays it out, `lengths` each document's bytes."""
        self.buffer = buffer
        self.lengths = np.asarray(lengths, dtype=np.int64)
        steps = self.lengths + 1
        self.starts = np.cumsum(steps) - steps + 1
        """Where each document begins in `buffer`."""

    @classmethod
    def from_texts(cls, texts: Sequence[bytes]) -> PackedTexts:
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        return cls(packed_buffer(texts, int(lengths.sum()), len(texts)), lengths)

    @property
    def total(self) -> int:
        """The documents' bytes, all together."""
        return int(self.lengths.sum())

    def __len__(self) -> int:
        return len(self.lengths)

    @overload
    def __getitem__(self, d: int) -> bytes: ...

    @overload
    def __getitem__(self, d: slice) -> list[bytes]: ...

    def __getitem__(self, d: int | slice) -> bytes | list[bytes]:
        if isinstance(d, slice):
            return [self[i] for i in range(*d.indices(len(self)))]
        s = int(self.starts[d])
        return self.buffer[s : s + int(self.lengths[d])]

    def __iter__(self) -> Iterator[bytes]:
        buf = self.buffer
        for s, n in zip(self.starts.tolist(), self.lengths.tolist()):
            yield buf[s : s + n]


def doc_lengths(texts: Sequence[bytes]) -> np.ndarray:
    """Each document's bytes (int64), without touching packed documents one by one."""
    if isinstance(texts, PackedTexts):
        return texts.lengths
    return np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
