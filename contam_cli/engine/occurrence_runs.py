"""Where each eval n-gram's occurrences begin, without an offset per n-gram.

The occurrences of sorted distinct n-grams lie gram after gram, so gram ``u`` starts at
``u + extra(u)``, ``extra(u)`` being the occurrences beyond one of the grams before it. Nearly
every eval n-gram occurs once, so only the others are kept: their indices (`multi`, sorted) and
the running count of extra occurrences before each of them (`extra`, one longer). For 1,000,000
examples that replaces 256 MB of offsets (one per n-gram) by a few MB.

>>> multi, extra = compact(np.array([0, 1, 3, 4, 7]))  # 4 grams: 1, 2, 1 and 3 occurrences
>>> multi.tolist(), extra.tolist()
([1, 3], [0, 1, 3])
>>> [x.tolist() for x in ranges(multi, extra, np.array([0, 1, 2, 3]))]
[[0, 1, 3, 4], [1, 2, 1, 3]]
"""

from __future__ import annotations

import numpy as np

__all__ = ["compact", "counts", "from_counts", "ranges"]

_STEP = 1 << 22


def compact(ptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(multi, extra) of the occurrence offsets `ptr` (one per gram, and the end)."""
    found: list[np.ndarray] = []
    more: list[np.ndarray] = []
    # NOTE: a slice at a time: at the end of an index build, temporaries the size of `ptr`
    # (one per gram) would add to the build's peak.
    for a in range(0, len(ptr) - 1, _STEP):
        per_gram = np.diff(ptr[a : a + _STEP + 1])
        at = np.flatnonzero(per_gram > 1)
        found.append(at + a)
        more.append(per_gram[at].astype(np.int64) - 1)
    return _multi_extra(found, more)


def from_counts(per_gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(multi, extra) of grams that occur `per_gram` times each (at least once)."""
    at = np.flatnonzero(per_gram > 1)
    return _multi_extra([at], [per_gram[at].astype(np.int64) - 1])


def _multi_extra(found: list[np.ndarray], more: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    multi = np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)
    extra = np.zeros(len(multi) + 1, dtype=np.int64)
    if found:
        np.cumsum(np.concatenate(more), out=extra[1:])
    return multi, extra


def ranges(multi: np.ndarray, extra: np.ndarray, uidx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first occurrence of each gram `uidx`, and how many it has (int64 arrays)."""
    uidx = np.asarray(uidx, dtype=np.int64)
    k = np.searchsorted(multi, uidx)
    lo = uidx + extra[k]
    if len(multi) == 0:
        return lo, np.ones(len(uidx), dtype=np.int64)
    hit = multi[np.minimum(k, len(multi) - 1)] == uidx
    more = extra[np.minimum(k + 1, len(multi))] - extra[k]
    return lo, 1 + np.where(hit, more, 0)


def counts(multi: np.ndarray, extra: np.ndarray, m: int) -> np.ndarray:
    """How many occurrences each of the `m` grams has."""
    out = np.ones(m, dtype=np.int64)
    out[multi] += np.diff(extra)
    return out
