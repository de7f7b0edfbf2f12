"""Orienting, z-scoring and combining detector scores (contam report)."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.stats import Direction, auc_from_labels, auc_weights, combine, orient, zscores

NAN = math.nan
# NOTE: the package re-exports the function `combine`, which hides the module of that name.
combine_module = importlib.import_module("contam_cli.stats.combination")
LABELS = [0, 0, 1, 1]
GOOD = [0.1, 0.2, 0.8, 0.9]
NOISE = GOOD[::-1]


def test_doctests() -> None:
    result = doctest.testmod(combine_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    "values, expected",
    [
        pytest.param([5.0, 5.0, 5.0], [0.0, 0.0, 0.0], id="no spread"),
        pytest.param([1.0, 2.0, 3.0], [-1.2247, 0.0, 1.2247], id="population std"),
        pytest.param([1.0, NAN, 3.0], [-1.0, NAN, 1.0], id="null stays null"),
        pytest.param([NAN, 4.0, NAN], [NAN, 0.0, NAN], id="one value"),
        pytest.param([NAN, NAN], [NAN, NAN], id="all null"),
        pytest.param([], [], id="empty"),
        pytest.param([0.1, 0.1, 0.1], [0.0, 0.0, 0.0], id="constant with an inexact mean"),
        pytest.param([1e300, -1e300], [1.0, -1.0], id="no overflow"),
        pytest.param([1e-310, 3e-310], [-1.0, 1.0], id="subnormal"),
    ],
)
def test_zscores(values: list[float], expected: list[float]) -> None:
    np.testing.assert_allclose(zscores(values), expected, atol=5e-5)


def test_zscores_accepts_none_as_null() -> None:
    np.testing.assert_array_equal(zscores([1, None, 3]), [-1.0, NAN, 1.0])


def test_zscores_rejects_infinite_and_two_dimensional() -> None:
    with pytest.raises(ValueError, match="finite"):
        zscores([1.0, math.inf])
    with pytest.raises(ValueError, match="1-D"):
        zscores([[1.0, 2.0]])


def test_orient() -> None:
    assert orient([1.0, NAN, -2.0], Direction.LOWER).tolist()[::2] == [-1.0, 2.0]
    assert orient([1.0, 2.0], "higher").tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        orient([1.0], "sideways")


def test_perplexity_lower_is_suspicious() -> None:
    perplexity = [90.0, 80.0, 20.0, 10.0]
    assert auc_from_labels(orient(perplexity, Direction.LOWER), LABELS) == 1.0
    assert auc_from_labels(perplexity, LABELS) == 0.0


def test_unweighted_combination_cancels_a_reversed_method() -> None:
    combined = combine({"good": GOOD, "noise": NOISE}, {})
    np.testing.assert_allclose(combined, [0.0, 0.0, 0.0, 0.0], atol=1e-12)


def test_auc_weighting_silences_the_reversed_method() -> None:
    aucs = {"good": auc_from_labels(GOOD, LABELS), "noise": auc_from_labels(NOISE, LABELS)}
    weights = auc_weights(aucs)
    assert weights == {"good": 1.0, "noise": 0.0}
    combined = combine({"good": GOOD, "noise": NOISE}, {}, weights)
    np.testing.assert_allclose(combined, [-1.1314, -0.8485, 0.8485, 1.1314], atol=5e-5)


def test_combine_averages_only_the_methods_that_scored() -> None:
    values = {"a": [1.0, 2.0, 3.0, NAN], "ppl": [30.0, 20.0, NAN, NAN]}
    combined = combine(values, {"ppl": Direction.LOWER})
    np.testing.assert_allclose(combined[:3], [(-1.2247 - 1.0) / 2, 0.5, 1.2247], atol=5e-5)
    assert math.isnan(combined[3])


def test_combine_gives_nan_where_only_unweighted_methods_scored() -> None:
    combined = combine({"a": [1.0, 2.0, NAN], "b": [NAN, 1.0, 2.0]}, {}, {"a": 1.0, "b": 0.0})
    assert combined[:2].tolist() == [-1.0, 1.0]
    assert math.isnan(combined[2])


@pytest.mark.parametrize(
    "values, weights, message",
    [
        pytest.param({}, None, "no method", id="nothing"),
        pytest.param({"a": [1.0], "b": [1.0, 2.0]}, None, "different numbers", id="lengths"),
        pytest.param({"a": [1.0], "b": [2.0]}, {"a": 1.0}, "no weight.*b", id="missing weight"),
        pytest.param({"a": [1.0]}, {"a": -1.0}, "non-negative", id="negative weight"),
        pytest.param({"a": [1.0]}, {"a": NAN}, "finite", id="nan weight"),
    ],
)
def test_combine_rejects(
    values: dict[str, list[float]], weights: dict[str, float] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        combine(values, {}, weights)


def test_auc_weights() -> None:
    weights = auc_weights({"a": 0.9, "b": 0.7, "c": 0.5, "d": None, "e": NAN})
    assert weights == pytest.approx({"a": 2 / 3, "b": 1 / 3, "c": 0.0, "d": 0.0, "e": 0.0})
    assert sum(weights.values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "aucs, message",
    [
        pytest.param({}, "chance", id="no AUC"),
        pytest.param({"a": 0.5, "b": 0.2, "c": None}, "chance", id="all at or below chance"),
        pytest.param({"a": 1.5}, "outside", id="not an AUC"),
    ],
)
def test_auc_weights_rejects(aucs: dict[str, float | None], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        auc_weights(aucs)


scores = st.lists(
    st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.just(NAN)), min_size=0, max_size=40
)


@settings(max_examples=200, deadline=None)
@given(scores)
def test_zscores_are_standardized(values: list[float]) -> None:
    z = zscores(values)
    x = np.array(values, dtype=float)
    known = ~np.isnan(x)
    assert np.array_equal(np.isnan(z), ~known)
    if np.unique(x[known]).size >= 2:
        assert abs(z[known].mean()) < 1e-9
        assert z[known].std() == pytest.approx(1.0, abs=1e-9)
    else:
        assert (z[known] == 0.0).all()
