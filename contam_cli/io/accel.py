"""The switch for every optional compiled kernel (numba, extra ``fast``), and shared intrinsics.

Kernel modules (``_kernels.py`` and the like) import numba at their top; they are imported only
through :func:`load`, so that without numba (or with ``CONTAM_ACCEL=0``) nothing compiled runs
and nothing imports numba.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

__all__ = ["enabled", "load"]


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
