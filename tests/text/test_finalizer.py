"""The token kernels apply the hash finalizer in a pass of its own, over hashes taken before it
(``_unfmix`` turns a finished hash back into one): the inverse must be exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.text.accel import kernels
from contam_cli.text.hashing import fmix64

K = kernels()
pytestmark = pytest.mark.skipif(K is None, reason="numba (extra fast) is not installed")

U64 = st.integers(0, 2**64 - 1)


def _fmix(x: int) -> int:
    return int(K._fmix(np.uint64(x)))  # NOTE: always as uint64: a Python int types as int64


def _unfmix(x: int) -> int:
    return int(K._unfmix(np.uint64(x)))


@settings(deadline=None)  # NOTE: the first example may compile the kernels (a fresh cache)
@given(x=U64)
def test_unfmix_undoes_the_finalizer(x: int) -> None:
    assert _unfmix(_fmix(x)) == x
    assert _fmix(_unfmix(x)) == x
    assert _fmix(x) == int(fmix64(np.array([x], dtype=np.uint64))[0])


def test_zero_is_a_fixed_point() -> None:
    """A slot the kernel leaves for the caller holds 0 before and after the finalizer."""
    assert _fmix(0) == 0 == _unfmix(0)
