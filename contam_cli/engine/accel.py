"""The eval index's optional compiled kernels (numba, extra ``fast``); see contam_cli.text.accel."""

from __future__ import annotations

from types import ModuleType

from contam_cli.text.accel import load

__all__ = ["index_kernels"]


def index_kernels() -> ModuleType | None:
    """The eval index's compiled kernels, or None when numba is missing or disabled."""
    return load("contam_cli.engine._kernels")
