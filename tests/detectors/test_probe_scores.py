"""Min-K%, Min-K%++, perplexity and zlib: the pure per-token statistics of `contam probe`."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contam_cli.detectors.providers.base import TextScores
from contam_cli.detectors.scores import (
    TokenScore,
    calibrated,
    k_count,
    log_moments,
    lowest_k_means,
    min_k_percent,
    min_k_plus_plus,
    perplexity,
    round_half_up,
    text_scores_from_log_probs,
    text_scores_from_token_scores,
    zlib_ratio,
)
from contam_cli.errors import ContamError, UsageError

TEN = [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0, -9.0, -0.5]
CONFIDENT = np.log(np.array([0.9] + [0.1 / 999] * 999))  # one likely token and a flat tail


def _scores(logprob: list[float], mu: list[float], sigma: list[float]) -> TextScores:
    return TextScores(np.array(logprob), np.array(mu), np.array(sigma))


# -- Min-K% ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "k, expected",
    [
        pytest.param(20, -8.5, id="lowest 20% of ten = the two lowest"),
        pytest.param(0, -9.0, id="k=0 still uses one token"),
        pytest.param(100, sum(TEN) / 10, id="k=100 uses all"),
        pytest.param(5, -9.0, id="0.5 token rounds half up to 1"),
        pytest.param(25, -8.0, id="2.5 tokens round half up to 3 (banker's rounding gives 2)"),
    ],
)
def test_min_k_percent(k: float, expected: float) -> None:
    assert min_k_percent(TEN, k) == pytest.approx(expected)


def test_min_k_percent_empty_is_none() -> None:
    assert min_k_percent([], 20) is None
    assert min_k_plus_plus(_scores([], [], []), [10, 20]) == {10: None, 20: None}


@pytest.mark.parametrize("k", [-1, 100.5, float("nan")])
def test_k_outside_0_100_is_a_usage_error(k: float) -> None:
    with pytest.raises(UsageError, match="between 0 and 100"):
        min_k_percent(TEN, k)
    with pytest.raises(UsageError):
        min_k_percent([], k)


def test_round_half_up_differs_from_bankers_rounding_only_on_halves() -> None:
    assert [round_half_up(x) for x in (0.5, 1.5, 2.5, 3.5, 2.49, 2.51)] == [1, 2, 3, 4, 2, 3]
    assert [k_count(10, k) for k in (0, 5, 15, 25, 100)] == [1, 1, 2, 3, 10]


# -- TokenScore and the moments of the model's own distribution ------------------------------


def test_moments_of_a_confident_distribution() -> None:
    score = TokenScore.from_log_distribution(CONFIDENT, 0)
    assert score.expected_logprob == pytest.approx(-1.01576, abs=1e-5)
    assert score.logprob_std == pytest.approx(2.73119, abs=1e-5)
    assert score.logprob == pytest.approx(math.log(0.9))


def test_uniform_distribution_has_no_spread_and_scores_zero() -> None:
    score = TokenScore.from_log_distribution(np.full(100, -math.log(100)), 7)
    assert score.logprob_std <= 1e-9
    assert score.calibrated == 0.0
    text = text_scores_from_token_scores([score] * 3)
    assert min_k_plus_plus(text, [20]) == {20: 0.0}
    assert min_k_plus_plus([score] * 3, [20]) == {20: 0.0}  # a list of TokenScore works too


def test_zipf_mu_is_weighted_by_the_model_not_unweighted() -> None:
    ranks = np.arange(1, 50_001, dtype=np.float64)
    log_p = np.log(ranks**-1.2 / (ranks**-1.2).sum())
    score = TokenScore.from_log_distribution(log_p, 0)
    assert score.expected_logprob == pytest.approx(-5.40, abs=0.005)
    assert float(log_p.mean()) == pytest.approx(-13.40, abs=0.005)  # the mistake it avoids
    assert score.logprob_std > 2.5 * float(log_p.std())


def test_confident_token_beats_a_tail_token_in_min_k_plus_plus() -> None:
    head, tail = (TokenScore.from_log_distribution(CONFIDENT, i) for i in (0, 500))
    assert head.calibrated == pytest.approx(0.3333, abs=1e-4)
    assert tail.calibrated == pytest.approx(-3.0, abs=1e-4)
    head_text, tail_text = (text_scores_from_token_scores([s]) for s in (head, tail))
    assert min_k_plus_plus(head_text, [20])[20] == pytest.approx(0.3333, abs=1e-4)
    assert min_k_plus_plus(tail_text, [20])[20] == pytest.approx(-3.0, abs=1e-4)


def test_logits_are_normalized_and_minus_inf_is_probability_zero() -> None:
    logits = np.array([2.0, 1.0, -np.inf, 0.0])
    score = TokenScore.from_log_distribution(logits, 1)
    p = np.exp(logits - np.log(np.exp(logits).sum()))
    assert score.logprob == pytest.approx(math.log(p[1]))
    nz = p > 0
    assert score.expected_logprob == pytest.approx(float((p[nz] * np.log(p[nz])).sum()))
    assert math.isinf(TokenScore.from_log_distribution(logits, 2).logprob)


@pytest.mark.parametrize(
    "bad", [np.full(4, -np.inf), np.array([0.0, np.nan]), np.array([0.0, np.inf])]
)
def test_distribution_without_mass_or_with_nan_is_an_error(bad: np.ndarray) -> None:
    with pytest.raises(ContamError):
        TokenScore.from_log_distribution(bad, 0)


def test_truncated_distribution_uses_raw_log_probs_under_renormalized_weights() -> None:
    top = np.log([0.5, 0.2, 0.1])  # 0.8 of the mass came back
    score = TokenScore.from_truncated(top, math.log(0.2))
    q = np.array([0.5, 0.2, 0.1]) / 0.8
    mu = float((q * top).sum())
    assert score.expected_logprob == pytest.approx(mu)
    assert score.logprob_std == pytest.approx(math.sqrt(float((q * (top - mu) ** 2).sum())))
    assert score.logprob == math.log(0.2)


def test_vectorized_matrix_matches_rows_and_checks_shapes() -> None:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(5, 30)) * 3
    ids = rng.integers(0, 30, size=5)
    text = text_scores_from_log_probs(logits, ids, tokens=list("abcde"))
    assert text.tokens == tuple("abcde") and text.full_distribution
    for t in range(5):
        one = TokenScore.from_log_distribution(logits[t], int(ids[t]))
        assert (text.logprob[t], text.mu[t], text.sigma[t]) == pytest.approx(
            (one.logprob, one.expected_logprob, one.logprob_std), rel=1e-12, abs=1e-12
        )
    with pytest.raises(ContamError):
        text_scores_from_log_probs(logits, ids[:3])


def test_log_moments_do_not_warn_on_minus_inf() -> None:
    # NOTE: pytest turns RuntimeWarning into an error (pyproject), so 0·(-inf) would fail here.
    norm, mu, sigma = log_moments(np.array([[0.0, -np.inf, 0.0]]))
    assert mu[0] == pytest.approx(math.log(0.5)) and sigma[0] == pytest.approx(0.0)
    assert np.isneginf(norm[0, 1])


# -- perplexity and zlib -----------------------------------------------------------------------


def test_perplexity() -> None:
    assert perplexity([math.log(0.5)] * 4) == pytest.approx(2.0)
    assert perplexity([]) is None
    assert perplexity([-np.inf, -1.0]) == math.inf
    assert perplexity([-800.0]) == math.inf  # no overflow warning


def test_zlib_ratio_follows_the_reference_and_higher_is_more_suspicious() -> None:
    text = "the quick brown fox jumps over the lazy dog"
    size = len(zlib.compress(text.encode("utf-8")))
    assert zlib_ratio(text, [-1.0, -3.0]) == pytest.approx(-2.0 / size)
    assert zlib_ratio(text, []) is None
    # a likelier (memorized) text has a higher ratio at the same compressed size
    likely, unlikely = zlib_ratio(text, [-0.5, -0.5]), zlib_ratio(text, [-4.0, -4.0])
    assert likely is not None and unlikely is not None and likely > unlikely


# -- properties --------------------------------------------------------------------------------

finite = st.floats(min_value=-50, max_value=0, allow_nan=False)
ks = st.lists(st.floats(min_value=0, max_value=100), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(finite, min_size=1, max_size=60), a=st.floats(0, 100), b=st.floats(0, 100))
def test_min_k_is_monotone_in_k(values: list[float], a: float, b: float) -> None:
    # NOTE: true: the count never shrinks as k grows, and each added value is >= the ones before,
    # so the mean of the lowest c values never decreases with c (up to float rounding).
    lo, hi = sorted((a, b))
    low, high = min_k_percent(values, lo), min_k_percent(values, hi)
    assert low is not None and high is not None
    assert low <= high + 1e-9 * (1 + abs(high))


@settings(max_examples=150, deadline=None)
@given(
    logprob=arrays(np.float64, st.integers(0, 40), elements=finite),
    ks=ks,
    data=st.data(),
)
def test_min_k_plus_plus_many_ks_equals_single_calls(
    logprob: np.ndarray, ks: list[float], data: st.DataObject
) -> None:
    n = len(logprob)
    mu = data.draw(arrays(np.float64, n, elements=finite))
    sigma = data.draw(arrays(np.float64, n, elements=st.sampled_from([0.0, 1e-12, 0.5, 2.0])))
    text = _scores(list(logprob), list(mu), list(sigma))
    together = min_k_plus_plus(text, ks)
    assert together == {k: min_k_plus_plus(text, [k])[k] for k in ks}
    assert together == {k: min_k_percent(calibrated(text), k) for k in ks}


@settings(max_examples=100, deadline=None)
@given(
    logits=arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(1, 40)),
        elements=st.one_of(st.floats(-30, 30), st.just(-np.inf)),
    ),
    data=st.data(),
)
def test_token_score_equals_the_vectorized_form(logits: np.ndarray, data: st.DataObject) -> None:
    t, v = logits.shape
    logits[:, 0] = np.where(np.isinf(logits[:, 0]), 0.0, logits[:, 0])  # every row has mass
    ids = np.array(data.draw(st.lists(st.integers(0, v - 1), min_size=t, max_size=t)))
    text = text_scores_from_log_probs(logits, ids)
    for row in range(t):
        one = TokenScore.from_log_distribution(logits[row], int(ids[row]))
        got = (float(text.logprob[row]), float(text.mu[row]), float(text.sigma[row]))
        assert got == pytest.approx((one.logprob, one.expected_logprob, one.logprob_std))


def test_lowest_k_means_sorts_once_for_all_ks() -> None:
    assert lowest_k_means(TEN, [0, 20, 100]) == {0: -9.0, 20: -8.5, 100: sum(TEN) / 10}
