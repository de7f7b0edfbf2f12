"""Bootstrap intervals and the permutation test behind contam impact."""

from __future__ import annotations

import doctest
import importlib
import math

import numpy as np
import pytest

from contam_cli.stats import (
    bootstrap_difference_interval,
    bootstrap_full_minus_clean,
    bootstrap_mean_interval,
    permutation_test,
)

resample_module = importlib.import_module("contam_cli.stats.resample")

# 100 examples: 20 flagged, all answered correctly; 80 clean, 40 of them correct.
CORRECT = np.r_[np.ones(20), np.ones(40), np.zeros(40)]
CLEAN = np.r_[np.zeros(20, bool), np.ones(80, bool)]
FLAGGED_SCORES, CLEAN_SCORES = CORRECT[~CLEAN], CORRECT[CLEAN]
NORMAL_WIDTH = 2 * 1.96 * math.sqrt(0.25 / 80)  # 0.219


def test_doctests() -> None:
    result = doctest.testmod(resample_module)
    assert result.attempted > 0 and result.failed == 0


def test_point_estimates_of_the_example() -> None:
    full, clean, flagged = CORRECT.mean(), CLEAN_SCORES.mean(), FLAGGED_SCORES.mean()
    assert (full, clean, flagged) == pytest.approx((0.60, 0.50, 1.00))
    assert full - clean == pytest.approx(0.10)


def test_clean_accuracy_interval_matches_the_normal_approximation() -> None:
    interval = bootstrap_mean_interval(CLEAN_SCORES)
    assert interval is not None
    low, high = interval
    assert low < 0.5 < high
    assert abs((high - low) - NORMAL_WIDTH) <= 0.1 * NORMAL_WIDTH
    assert NORMAL_WIDTH == pytest.approx(0.219, abs=1e-3)


def test_full_minus_clean_interval() -> None:
    interval = bootstrap_full_minus_clean(CORRECT, CLEAN, n=4000)
    assert interval is not None
    low, high = interval
    assert 0.0 < low < 0.10 < high < 0.2


def test_flagged_minus_clean_interval() -> None:
    interval = bootstrap_difference_interval(FLAGGED_SCORES, CLEAN_SCORES, n=4000)
    clean = bootstrap_mean_interval(CLEAN_SCORES, n=4000)
    assert interval is not None and clean is not None
    assert interval[0] < 0.5 < interval[1]
    # The flagged group is constant, so the difference is 1 minus the clean mean.
    assert interval[1] - interval[0] == pytest.approx(clean[1] - clean[0], abs=0.03)


def test_same_seed_same_interval() -> None:
    calls = [
        lambda seed: bootstrap_mean_interval(CLEAN_SCORES, n=3000, seed=seed),
        lambda seed: bootstrap_difference_interval(FLAGGED_SCORES, CLEAN_SCORES, n=3000, seed=seed),
        lambda seed: bootstrap_full_minus_clean(CORRECT, CLEAN, n=3000, seed=seed),
        lambda seed: permutation_test(FLAGGED_SCORES[:3], CLEAN_SCORES, n=3000, seed=seed),
    ]
    for call in calls:
        assert call(11) == call(11)
        # NOTE: intervals of 0/1 scores sit on a lattice, so two seeds may give the same one;
        # ten seeds never all do.
        assert len({call(seed) for seed in range(10)}) > 1


@pytest.mark.parametrize("seed", [0, 1])
def test_counts_and_indices_resample_the_same_distribution(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Few distinct values are resampled through their counts; forcing the index draws gives
    the same intervals, to within one step of the lattice and the resampling noise."""
    rng = np.random.default_rng(seed)
    graded = rng.choice([0.0, 0.5, 1.0], size=300, p=[0.3, 0.2, 0.5])
    clean = rng.random(300) < 0.8

    def intervals() -> list[tuple[float, float] | None]:
        return [
            bootstrap_mean_interval(graded, n=20_000, seed=seed),
            bootstrap_difference_interval(graded[:100], graded[100:], n=20_000, seed=seed),
            bootstrap_full_minus_clean(graded, clean, n=20_000, seed=seed),
        ]

    by_counts = intervals()
    p_counts = permutation_test(graded[:30], graded[30:], n=20_000, seed=seed)
    monkeypatch.setattr(resample_module, "_MAX_DISTINCT", 0)
    by_indices = intervals()
    p_indices = permutation_test(graded[:30], graded[30:], n=20_000, seed=seed)
    for a, b in zip(by_counts, by_indices):
        assert a is not None and b is not None
        assert a == pytest.approx(b, abs=0.01)
    assert p_counts == pytest.approx(p_indices, abs=0.01)


def test_nan_is_left_out_and_empty_gives_none() -> None:
    assert bootstrap_mean_interval([1.0, math.nan, 1.0]) == (1.0, 1.0)
    assert bootstrap_mean_interval([math.nan]) is None
    assert bootstrap_difference_interval([], [1.0]) is None
    assert bootstrap_full_minus_clean([1.0, 0.0], [False, False]) is None
    assert bootstrap_full_minus_clean([1.0, math.nan], [False, True]) is None
    assert permutation_test([1.0], []) is None


def test_full_minus_clean_skips_resamples_without_a_clean_example() -> None:
    # One clean example in ten: about a third of resamples hold none, and are left out.
    values, clean = np.r_[np.ones(9), 0.0], np.r_[np.zeros(9, bool), True]
    interval = bootstrap_full_minus_clean(values, clean, n=500)
    assert interval is not None
    assert 0.5 <= interval[0] <= interval[1] < 1.0  # every kept resample holds the 0


def test_large_samples_are_resampled_in_bounded_blocks() -> None:
    values = np.random.default_rng(0).random(200_000)
    interval = bootstrap_mean_interval(values, n=30)
    assert interval is not None
    assert interval[0] < 0.5 < interval[1] and interval[1] - interval[0] < 0.005


@pytest.mark.parametrize(
    "kwargs, message",
    [
        pytest.param({"n": 0}, "resamples", id="no resamples"),
        pytest.param({"n": 2.5}, "resamples", id="fractional"),
        pytest.param({"level": 0.0}, "level", id="level 0"),
        pytest.param({"level": 95}, "level", id="percent, not a share"),
    ],
)
def test_bootstrap_rejects(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        bootstrap_mean_interval([1.0, 2.0], **kwargs)  # type: ignore[arg-type]


def test_full_minus_clean_rejects_a_mask_of_another_length() -> None:
    with pytest.raises(ValueError, match="mask"):
        bootstrap_full_minus_clean([1.0, 2.0], [True])


def test_permutation_test_finds_the_example_difference() -> None:
    p = permutation_test(FLAGGED_SCORES, CLEAN_SCORES, n=2000)
    assert p == pytest.approx(1 / 2001)  # no relabelling reaches 20 correct of 20
    assert permutation_test(FLAGGED_SCORES, CLEAN_SCORES, n=2000, alternative="less") == 1.0


def test_permutation_p_value_matches_the_exact_one() -> None:
    # Two of four values are 1; a random pair is {1, 1} with probability 1/6.
    p = permutation_test([1.0, 1.0], [0.0, 0.0], n=20_000)
    assert p == pytest.approx(1 / 6, abs=0.01)
    two_sided = permutation_test([1.0, 1.0], [0.0, 0.0], n=20_000, alternative="two-sided")
    assert two_sided == pytest.approx(2 / 6, abs=0.02)


def test_permutation_test_is_calibrated_under_no_difference() -> None:
    above = 0
    for seed in range(100):
        rng = np.random.default_rng(1000 + seed)
        flagged, clean = rng.random(20) < 0.5, rng.random(80) < 0.5
        p = permutation_test(flagged.astype(float), clean.astype(float), n=1000, seed=seed)
        assert p is not None and 1 / 1001 <= p <= 1.0
        above += p > 0.05
    assert above >= 90


def test_resample_counts_may_be_integral_floats() -> None:
    ten: int = 10.0  # type: ignore[assignment]
    assert permutation_test([1.0, 1.0], [0.0], n=ten) == permutation_test([1.0, 1.0], [0.0], n=10)
    with pytest.raises(ValueError, match="resamples"):
        permutation_test([1.0], [0.0], n=math.inf)  # type: ignore[arg-type]


def test_permutation_test_rejects_an_unknown_alternative() -> None:
    with pytest.raises(ValueError, match="alternative"):
        permutation_test([1.0], [0.0], alternative="bigger")  # type: ignore[arg-type]


@pytest.mark.parametrize("scale", [1e-12, 1e-6, 1.0, 1e6, 1e12])
def test_permutation_p_value_does_not_depend_on_the_scale(scale: float) -> None:
    # Two of four values are 1 (times scale); the exact p is 1/6 at every scale. An absolute
    # tolerance of 1e-9 made every relabelling of tiny values a tie: p was 1.0 at 1e-12.
    flagged, clean = np.array([1.0, 1.0]) * scale, np.array([0.0, 0.0]) * scale
    assert permutation_test(flagged, clean, n=20_000) == pytest.approx(1 / 6, abs=0.01)
    # every value different (the example-by-example path): only the observed split is as high
    flagged, clean = np.array([3.0, 4.0, 5.0]) * scale, np.array([0.0, 1.0, 2.0]) * scale
    assert permutation_test(flagged, clean, n=20_000) == pytest.approx(1 / 20, abs=0.01)
