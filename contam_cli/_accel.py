"""Optional compiled kernels (numba, extra ``fast``) for the hot loops of a scan and of the index.

Each kernel computes exactly what the numpy code in :mod:`contam_cli.ngrams` and
:mod:`contam_cli.index` computes, in one pass instead of several; tests hold both paths to the
plain definitions. Without numba (or with ``CONTAM_ACCEL=0``) nothing here is used.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

_KERNELS: Any = None
_LOADED = False


def kernels() -> Any:
    """The compiled kernels, or None when numba is missing or disabled."""
    global _KERNELS, _LOADED
    if not _LOADED:
        _LOADED = True
        if os.environ.get("CONTAM_ACCEL", "1") != "0":
            _KERNELS = _build()
    return _KERNELS


def _build() -> ModuleType | None:
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    from contam_cli import _index_kernels, _kernels

    merged = ModuleType("contam_cli.kernels", "The compiled kernels, tokenizer's and index's.")
    for module in (_kernels, _index_kernels):
        merged.__dict__.update(
            (k, v)
            for k, v in vars(module).items()
            if not k.startswith("_") and (callable(v) or k.isupper())
        )
    return merged
