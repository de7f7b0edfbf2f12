"""Small helpers for read-only numpy columns, sparse per-example details, and fingerprints."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

import numpy as np

from contam_cli.text.fingerprint import fingerprints

__all__ = [
    "Fingerprints",
    "LazyColumn",
    "LineColumn",
    "TextColumn",
    "column",
    "equal_columns",
    "sparse",
]

T = TypeVar("T")


def column(values: Any, dtype: type, n: int) -> np.ndarray:
    """A read-only copy of `values` as a 1-D array of `n` elements of `dtype`."""
    col: np.ndarray = np.array(values, dtype=dtype)
    if col.shape != (n,):
        raise ValueError(f"a column of shape {col.shape}, expected ({n},)")
    col.flags.writeable = False
    return col


def sparse(values: Mapping[int, Any] | None, n: int) -> dict[int, Any]:
    """The entries of `values` that hold something (not None, not empty), keyed by plain ints in
    ``range(n)``."""
    out = {int(e): v for e, v in (values or {}).items() if v is not None and v != {} and v != ()}
    if out and not (min(out) >= 0 and max(out) < n):
        raise ValueError("a detail for an example out of range")
    return out


def equal_columns(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal arrays, NaN equal to NaN."""
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=True))


class LazyColumn(Sequence[T]):
    """A read-only column of Python values made from compact storage when read (a slice reads
    as a tuple): a report of a million examples keeps its ids, lines and fingerprints in a few
    arrays instead of millions of objects. Equal to any sequence of equal values."""

    #: Values made per step when the whole column is walked.
    STEP = 4096

    def _make(self, start: int, stop: int) -> list[T]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[T, ...]: ...

    def __getitem__(self, i: int | slice) -> T | tuple[T, ...]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                return tuple(self[k] for k in range(start, stop, step))
            return tuple(self._make(start, max(start, stop)))
        k = range(len(self))[i]
        return self._make(k, k + 1)[0]

    def __iter__(self) -> Iterator[T]:
        for a in range(0, len(self), self.STEP):
            yield from self._make(a, min(a + self.STEP, len(self)))

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(<{len(self)} values>)"


class Fingerprints(LazyColumn[str]):
    """Content fingerprints made from the examples' 16-byte digests (which the eval index holds
    anyway) when read.

    >>> fps = Fingerprints([b"x" * 16, b"y" * 16])
    >>> fps[1] == fingerprints([b"y" * 16])[0], fps == tuple(fps), len(fps[:1])
    (True, True, 1)
    """

    def __init__(self, digests: Sequence[bytes]) -> None:
        self._digests = digests

    def __len__(self) -> int:
        return len(self._digests)

    def _make(self, start: int, stop: int) -> list[str]:
        return fingerprints(self._digests[start:stop])


class TextColumn(LazyColumn[str]):
    """Strings stored as UTF-8 in one buffer, string k at bytes ``offsets[k]:offsets[k + 1]``.

    >>> col = TextColumn(b"q1q22", np.array([0, 2, 5]))
    >>> col[1], list(col), col == ("q1", "q22")
    ('q22', ['q1', 'q22'], True)
    """

    def __init__(self, blob: bytes, offsets: np.ndarray) -> None:
        self._blob = blob
        self._offsets = offsets
        # NOTE: ASCII (the usual ids): a slice of the decoded text is the string, no decode each.
        self._ascii = blob.decode("ascii") if blob.isascii() else None

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def storage(self) -> tuple[bytes, np.ndarray]:
        """The buffer and the offsets."""
        return self._blob, self._offsets

    def _make(self, start: int, stop: int) -> list[str]:
        at = self._offsets[start : stop + 1].tolist()
        if self._ascii is not None:
            text = self._ascii
            return [text[a:b] for a, b in zip(at, at[1:])]
        blob = self._blob
        return [blob[a:b].decode("utf-8", "surrogatepass") for a, b in zip(at, at[1:])]


class LineColumn(LazyColumn["int | None"]):
    """Line numbers from an int64 array (-1: none).

    >>> LineColumn(np.array([3, -1]))[:]
    (3, None)
    """

    def __init__(self, lines: np.ndarray) -> None:
        self._lines = lines

    def __len__(self) -> int:
        return len(self._lines)

    def _make(self, start: int, stop: int) -> list[int | None]:
        return [None if x < 0 else x for x in self._lines[start:stop].tolist()]
