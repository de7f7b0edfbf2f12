"""Optional compiled kernels (numba, extra ``fast``) for the tokenizer's hot loops.

Each kernel computes exactly what the numpy code in :mod:`contam_cli.text.tokenizer` computes,
in one pass instead of several; tests hold both paths to the plain definitions. Without numba (or
with ``CONTAM_ACCEL=0``) nothing here is used. The eval index has kernels of its own
(:mod:`contam_cli.engine.accel`), used exactly when these are.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

__all__ = ["enabled", "kernels", "load"]


@functools.cache
def enabled() -> bool:
    """Whether compiled kernels can be used: numba is installed and CONTAM_ACCEL is not 0."""
    if os.environ.get("CONTAM_ACCEL", "1") == "0":
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def load(module: str) -> ModuleType | None:
    """The kernel module `module` (imported on first use), or None when kernels are off."""
    return importlib.import_module(module) if enabled() else None


def kernels() -> ModuleType | None:
    """The tokenizer's compiled kernels, or None when numba is missing or disabled."""
    return load("contam_cli.text._kernels")
