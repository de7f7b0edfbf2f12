"""Mann-Whitney AUC, its stratified bootstrap interval and the ROC curve."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli.stats import auc, auc_from_labels, bootstrap_auc_interval, roc_curve

NAN = math.nan
# NOTE: the package re-exports the function `auc`, which hides the module of that name.
auc_module = importlib.import_module("contam_cli.stats.roc")


def pairwise_auc(pos: list[float], neg: list[float]) -> float:
    """The O(n * m) definition: wins plus half the ties over all pairs."""
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def trapezoid(fpr: np.ndarray, tpr: np.ndarray) -> float:
    return float((np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2).sum())


def test_doctests() -> None:
    result = doctest.testmod(auc_module)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    "pos, neg, expected",
    [
        pytest.param([0.9, 0.8], [0.1, 0.2], 1.0, id="separated"),
        pytest.param([0.1, 0.2], [0.9, 0.8], 0.0, id="reversed"),
        pytest.param([0.5, 0.5, 0.5], [0.5, 0.5], 0.5, id="all tied"),
        pytest.param([1.0, 2.0], [2.0, 0.0], 0.625, id="one tie"),
        pytest.param([0.9, NAN], [0.1, NAN], 1.0, id="NaN dropped"),
        pytest.param([math.inf], [-math.inf, math.inf], 0.75, id="infinities rank"),
    ],
)
def test_auc(pos: list[float], neg: list[float], expected: float) -> None:
    assert auc(pos, neg) == expected


@pytest.mark.parametrize(
    "pos, neg",
    [
        pytest.param([], [0.1], id="no positive"),
        pytest.param([0.1], [], id="no negative"),
        pytest.param([0.3], [NAN, NAN], id="negatives all NaN"),
    ],
)
def test_auc_of_an_empty_class_is_none(pos: list[float], neg: list[float]) -> None:
    assert auc(pos, neg) is None


def test_auc_from_labels() -> None:
    assert auc_from_labels([0.1, 0.9, 0.2, 0.8], [False, True, False, True]) == 1.0
    assert auc_from_labels([0.1, 0.2], [0, 0]) is None
    with pytest.raises(ValueError, match="0/1"):
        auc_from_labels([0.1, 0.2], [0, 2])
    with pytest.raises(ValueError, match="labels"):
        auc_from_labels([0.1, 0.2], [0, 1, 1])


def test_auc_is_fast_on_large_inputs() -> None:
    rng = np.random.default_rng(0)
    pos, neg = rng.normal(1.0, 1.0, 200_000), rng.normal(0.0, 1.0, 200_000).round(1)
    value = auc(pos, neg)
    assert value is not None and 0.74 < value < 0.78  # Phi(1 / sqrt 2) = 0.760


def test_roc_curve_ties_are_one_step() -> None:
    curve = roc_curve([0.9, 0.5, 0.5, 0.5, 0.1], [1, 1, 0, 0, 0])
    assert curve is not None
    fpr, tpr = curve
    assert fpr.tolist() == [0.0, 0.0, 2 / 3, 1.0]
    assert tpr.tolist() == [0.0, 0.5, 1.0, 1.0]
    assert trapezoid(fpr, tpr) == pytest.approx(auc([0.9, 0.5], [0.5, 0.5, 0.1]))


def test_roc_curve_edges() -> None:
    assert roc_curve([0.1, 0.2], [1, 1]) is None
    assert roc_curve([NAN, 0.2], [0, 1]) is None
    curve = roc_curve([0.3, 0.3], [0, 1])
    assert curve is not None
    assert [a.tolist() for a in curve] == [[0.0, 1.0], [0.0, 1.0]]


def test_bootstrap_interval_brackets_the_auc_and_is_seeded() -> None:
    rng = np.random.default_rng(1)
    scores = np.concatenate([rng.normal(1.0, 1.0, 150), rng.normal(0.0, 1.0, 250)])
    labels = np.r_[np.ones(150, bool), np.zeros(250, bool)]
    point = auc_from_labels(scores, labels)
    interval = bootstrap_auc_interval(scores, labels, n=2000, seed=3)
    assert interval is not None and point is not None
    low, high = interval
    assert low < point < high
    assert 0.05 < high - low < 0.2  # about 2 x 1.96 x 0.024 for this design
    assert bootstrap_auc_interval(scores, labels, n=2000, seed=3) == interval
    assert bootstrap_auc_interval(scores, labels, n=2000, seed=4) != interval


def test_bootstrap_matches_a_direct_resample() -> None:
    """The vectorized count-based AUC equals auc() on each resample, drawn the same way."""
    rng = np.random.default_rng(2)
    pos, neg = rng.integers(0, 5, 12).astype(float), rng.integers(0, 5, 9).astype(float)
    scores, labels = np.r_[pos, neg], np.r_[np.ones(12), np.zeros(9)]
    draws = np.random.default_rng(7)  # one block: all positive indices, then all negative ones
    pos_idx, neg_idx = draws.integers(0, 12, size=(50, 12)), draws.integers(0, 9, size=(50, 9))
    direct = np.array([auc(pos[i], neg[j]) for i, j in zip(pos_idx, neg_idx)])
    expected = tuple(np.quantile(direct, [0.1, 0.9]))
    assert bootstrap_auc_interval(scores, labels, n=50, seed=7, level=0.8) == pytest.approx(
        expected
    )


def test_bootstrap_edges() -> None:
    assert bootstrap_auc_interval([0.1, 0.2], [0, 0]) is None
    assert bootstrap_auc_interval([0.1, NAN], [0, 1]) is None
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_auc_interval([0.1, 0.2], [0, 1], n=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_auc_interval([0.1, 0.2], [0, 1], level=1.0)


finite = st.floats(-1e9, 1e9, allow_nan=False).map(lambda v: round(v, 1))
groups = st.lists(st.one_of(finite, st.sampled_from([0.0, 1.0])), min_size=1, max_size=25)


@settings(max_examples=200, deadline=None)
@given(groups, groups)
def test_auc_equals_the_pairwise_definition(pos: list[float], neg: list[float]) -> None:
    assert auc(pos, neg) == pytest.approx(pairwise_auc(pos, neg), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(groups, groups)
def test_auc_is_antisymmetric(pos: list[float], neg: list[float]) -> None:
    forward, backward = auc(pos, neg), auc(neg, pos)
    assert forward is not None and backward is not None
    assert forward == pytest.approx(1.0 - backward, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(groups, groups)
def test_roc_area_equals_auc(pos: list[float], neg: list[float]) -> None:
    curve = roc_curve(pos + neg, [1] * len(pos) + [0] * len(neg))
    assert curve is not None
    fpr, tpr = curve
    assert (fpr[0], tpr[0], fpr[-1], tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert (np.diff(fpr) >= 0).all() and (np.diff(tpr) >= 0).all()
    assert trapezoid(fpr, tpr) == pytest.approx(auc(pos, neg), abs=1e-12)
