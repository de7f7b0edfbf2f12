"""Optional compiled kernels (numba, extra ``fast``) for the tokenizer's hot loops.

Each kernel computes exactly what the numpy code in :mod:`contam_cli.text.tokenizer` computes,
in one pass instead of several; tests hold both paths to the plain definitions. Without numba (or
with ``CONTAM_ACCEL=0``) nothing here is used. The eval index has kernels of its own
(:mod:`contam_cli.engine.accel`), used exactly when these are.
"""

from __future__ import annotations

from types import ModuleType

from contam_cli.io.accel import enabled, load

__all__ = ["enabled", "kernels", "load"]


def kernels() -> ModuleType | None:
    """The tokenizer's compiled kernels, or None when numba is missing or disabled."""
    return load("contam_cli.text._kernels")
