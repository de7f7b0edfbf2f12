"""Percentiles with linear interpolation, as calibrate takes thresholds from control text."""

from __future__ import annotations

import doctest
import importlib
import math
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contam_cli.stats import percentile

percentile_module = importlib.import_module("contam_cli.stats.percentile")
NAN = math.nan


def test_doctests() -> None:
    result = doctest.testmod(percentile_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    "values, q, expected",
    [
        pytest.param([1, 2, 3, 4], 0, 1.0, id="minimum"),
        pytest.param([1, 2, 3, 4], 100, 4.0, id="maximum"),
        pytest.param([0, 10], 50, 5.0, id="interpolated"),
        pytest.param([1, 2, 3, 4], 25, 1.75, id="linear between ranks"),
        pytest.param([NAN, 0, NAN, 10], 50, 5.0, id="NaN ignored"),
        pytest.param([7], 99, 7.0, id="one value"),
    ],
)
def test_percentile(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == expected


@pytest.mark.parametrize("values", [[], [NAN, NAN]], ids=["empty", "all NaN"])
def test_percentile_of_nothing_is_nan(values: list[float]) -> None:
    assert math.isnan(percentile(values, 50))


@pytest.mark.parametrize("q", [150, -1, NAN, "p99"])
def test_percentile_rejects_q_outside_0_100(q: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile([1.0, 2.0], q)


@given(st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=30), st.floats(0, 100))
def test_percentile_matches_numpy_linear(values: list[float], q: float) -> None:
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-12)


@pytest.mark.parametrize("q", [0, 10, 25, 50, 75, 100])
def test_percentile_of_huge_values_of_both_signs_does_not_overflow(q: float) -> None:
    # numpy's a + (b - a)·t overflows: the 25th percentile of -1e308 and 1e308 was +inf and the
    # 50th -inf. Exactly: -1e308 + 2e308·t, computed here in exact rationals.
    values = [-1e308, 1e308, 5e307]
    ranks = sorted(Fraction(v) for v in values)
    position = Fraction(q) / 100 * (len(ranks) - 1)
    low = int(position)
    high = min(low + 1, len(ranks) - 1)
    expected = ranks[low] + (ranks[high] - ranks[low]) * (position - low)
    assert percentile(values, q) == pytest.approx(float(expected), rel=1e-15)
    assert percentile([-sys.float_info.max, sys.float_info.max], 50) == 0.0
