"""Small helpers for read-only numpy columns and sparse per-example details."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["column", "equal_columns", "sparse"]


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
