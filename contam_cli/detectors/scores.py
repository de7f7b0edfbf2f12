"""Per-token membership scores: Min-K%, Min-K%++, perplexity and zlib, as pure numpy functions.

Every score here is a statistic of one text's :class:`TextScores` (or of its log-probs). They
are only meaningful relative to a known-clean control set; ``contam report`` does the combining.
Directions (what a suspicious, i.e. likely-seen, text does):

==============  ====================================================  ====================
score           definition                                            suspicious when
==============  ====================================================  ====================
Min-K%          mean of the lowest k% token log-probs                 higher
Min-K%++        the same over (logprob - mu) / sigma                  higher
perplexity      exp(-mean logprob)                                    lower
zlib            mean logprob / len(zlib.compress(text as UTF-8))      higher
==============  ====================================================  ====================
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.detectors.providers.base import TextScores
from contam_cli.errors import ContamError, UsageError

__all__ = [
    "SIGMA_FLOOR",
    "TokenScore",
    "calibrated",
    "k_count",
    "log_moments",
    "lowest_k_means",
    "min_k_percent",
    "min_k_plus_plus",
    "perplexity",
    "round_half_up",
    "text_scores_from_log_probs",
    "text_scores_from_token_scores",
    "zlib_ratio",
]

SIGMA_FLOOR = 1e-9
"""A token whose next-token distribution has sigma at or below this scores 0 in Min-K%++."""

_CHUNK_ELEMENTS = 1 << 22  # rows of a [T, V] matrix are processed ~32 MB of float64 at a time


def round_half_up(x: float) -> int:
    """``x`` rounded to the nearest integer, halves away from zero (unlike Python's ``round``).

    >>> round_half_up(2.5), round(2.5), round_half_up(3.5), round_half_up(2.4999)
    (3, 2, 4, 2)
    """
    # NOTE: Python's round() is banker's rounding (round(2.5) == 2, round(3.5) == 4): the count of
    # tokens would depend on the parity of the integer part. Half-up is what "round" means in
    # the papers and in DESIGN.md; both agree on every value that is not exactly a half.
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def k_count(n: int, k: float) -> int:
    """How many of ``n`` scored tokens "the lowest k%" covers: ``max(1, round_half_up(n·k/100))``.

    >>> k_count(10, 20), k_count(10, 0), k_count(10, 100), k_count(10, 25), k_count(3, 1)
    (2, 1, 10, 3, 1)
    """
    if not 0 <= k <= 100:  # NOTE: also rejects NaN
        raise UsageError(f"k must be a percentage between 0 and 100, got {k}")
    return min(n, max(1, round_half_up(n * k / 100)))


def log_moments(log_probs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalize rows of log-weights and return ``(log p, mu, sigma)`` under p itself.

    ``log_probs`` is ``[..., V]`` (log-softmax output or raw logits; -inf entries are allowed and
    mean probability 0). mu = Σ p·log p (the negative entropy) and sigma² = Σ p·(log p − mu)²
    (the two-pass form, no cancellation), both over the last axis.
    """
    lp = np.asarray(log_probs, dtype=np.float64)
    if np.isnan(lp).any() or np.isposinf(lp).any():
        raise ContamError("a next-token distribution holds NaN or +inf log-probabilities")
    top = lp.max(axis=-1, keepdims=True)
    if np.isneginf(top).any():
        raise ContamError("a next-token distribution has no probability mass (all -inf)")
    lse = top + np.log(np.exp(lp - top).sum(axis=-1, keepdims=True))
    norm = lp - lse
    p = np.exp(norm)
    # NOTE: 0·(-inf) is NaN; tokens of probability 0 contribute nothing, so log p is zeroed there.
    finite = np.where(np.isfinite(norm), norm, 0.0)
    mu = (p * finite).sum(axis=-1)
    dev = finite - mu[..., None]
    sigma = np.sqrt((p * dev * dev).sum(axis=-1))
    return norm, mu, sigma


@dataclass(frozen=True, slots=True)
class TokenScore:
    """One scored token: its log-prob and the moments of the model's next-token log-prob."""

    logprob: float
    """log p(observed token | context), natural log."""
    expected_logprob: float
    """mu = E[log p] under the model's own next-token distribution (the negative entropy)."""
    logprob_std: float
    """sigma = sqrt(E[(log p − mu)²]) under the same distribution."""

    @classmethod
    def from_log_distribution(cls, log_probs: Any, token_id: int) -> TokenScore:
        """Score ``token_id`` under a full next-token distribution given as log-probs (or logits:
        the vector is normalized first). Expectations are weighted by p, never unweighted."""
        norm, mu, sigma = log_moments(np.asarray(log_probs, dtype=np.float64)[None, :])
        return cls(float(norm[0, token_id]), float(mu[0]), float(sigma[0]))

    @classmethod
    def from_truncated(cls, log_probs: Any, logprob: float) -> TokenScore:
        """Score a token from a truncated (top-K) distribution, as logprob APIs return it.

        The returned set is renormalized to weights q, and mu, sigma are the mean and std of the
        RAW log-probs under q (E_q[log p], not E_q[log q]): the conditional expectation given
        the top K, the closest the set can get to the full distribution's mu. ``logprob`` (the
        observed token's raw log-prob) is kept as given.
        """
        lp = np.asarray(log_probs, dtype=np.float64)[None, :]
        norm, mu, sigma = log_moments(lp)
        shift = float(lp[0, 0] - norm[0, 0])  # log of the set's total mass (<= 0)
        return cls(float(logprob), float(mu[0]) + shift, float(sigma[0]))

    @property
    def calibrated(self) -> float:
        """(logprob − mu) / sigma, or 0 when sigma <= SIGMA_FLOOR (the Min-K%++ token score)."""
        if self.logprob_std <= SIGMA_FLOOR:
            return 0.0
        return (self.logprob - self.expected_logprob) / self.logprob_std


def text_scores_from_log_probs(
    log_probs: Any, token_ids: Any, tokens: Sequence[str] = ()
) -> TextScores:
    """:class:`TextScores` from a ``[T, V]`` matrix of next-token log-probs (row t predicts token
    ``token_ids[t]``), row by row in bounded-memory chunks."""
    lp = np.asarray(log_probs)
    ids = np.asarray(token_ids, dtype=np.int64)
    if lp.ndim != 2 or ids.shape != (lp.shape[0],):
        raise ContamError(f"log-probs of shape {lp.shape} do not match {ids.shape[0]} token ids")
    out = np.empty((3, lp.shape[0]), dtype=np.float64)
    step = max(1, _CHUNK_ELEMENTS // max(1, lp.shape[1]))
    for start in range(0, lp.shape[0], step):
        stop = min(start + step, lp.shape[0])
        norm, mu, sigma = log_moments(lp[start:stop])
        out[0, start:stop] = norm[np.arange(stop - start), ids[start:stop]]
        out[1, start:stop], out[2, start:stop] = mu, sigma
    return TextScores(out[0], out[1], out[2], tokens=tuple(tokens))


def text_scores_from_token_scores(
    scores: Sequence[TokenScore], *, full_distribution: bool = True, tokens: Sequence[str] = ()
) -> TextScores:
    """Pack a list of :class:`TokenScore` into one :class:`TextScores`."""
    arr = np.array(
        [(s.logprob, s.expected_logprob, s.logprob_std) for s in scores], dtype=np.float64
    ).reshape(-1, 3)
    return TextScores(
        arr[:, 0].copy(),
        arr[:, 1].copy(),
        arr[:, 2].copy(),
        full_distribution=full_distribution,
        tokens=tuple(tokens),
    )


def calibrated(scores: TextScores) -> np.ndarray:
    """Per-token Min-K%++ scores (logprob − mu) / sigma, 0 where sigma <= SIGMA_FLOOR."""
    sigma = np.asarray(scores.sigma, dtype=np.float64)
    flat = sigma <= SIGMA_FLOOR
    z = (np.asarray(scores.logprob, dtype=np.float64) - scores.mu) / np.where(flat, 1.0, sigma)
    return np.where(flat, 0.0, z)


def lowest_k_means(values: Any, ks: Sequence[float]) -> dict[float, float | None]:
    """Mean of the lowest k% of ``values`` for every k in ``ks``, sorting once (see k_count)."""
    arr = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if arr.size == 0:
        for k in ks:
            k_count(1, k)  # NOTE: still reject a bad k on an empty text, for a consistent error
        return dict.fromkeys(ks)
    sums = np.cumsum(arr)
    counts = {k: k_count(arr.size, k) for k in ks}
    return {k: float(sums[c - 1] / c) for k, c in counts.items()}


def min_k_percent(logprobs: Any, k: float) -> float | None:
    """Min-K%: the mean of the lowest k% token log-probs (None for a text with no scored token).

    >>> min_k_percent([-1, -2, -3, -4, -5, -6, -7, -8, -9, -0.5], 20)
    -8.5
    """
    return lowest_k_means(logprobs, [k])[k]


def min_k_plus_plus(
    scores: TextScores | Sequence[TokenScore], ks: Sequence[float]
) -> dict[float, float | None]:
    """Min-K%++ for every k in ``ks`` (one sort): the mean of the lowest k% calibrated scores."""
    if not isinstance(scores, TextScores):
        scores = text_scores_from_token_scores(scores)
    return lowest_k_means(calibrated(scores), ks)


def perplexity(logprobs: Any) -> float | None:
    """exp(−mean logprob); lower is more suspicious. None when empty, inf when a token has
    probability 0."""
    arr = np.asarray(logprobs, dtype=np.float64)
    if arr.size == 0:
        return None
    nll = -float(arr.mean())
    return math.exp(nll) if nll < 709.0 else math.inf  # NOTE: exp overflows float64 past ~709.78


def zlib_ratio(text: str, logprobs: Any) -> float | None:
    """Mean log-likelihood over the zlib-compressed size of ``text`` in bytes (the Min-K%++
    reference's ``ll / len(zlib.compress(text))``); higher is more suspicious.

    Dividing by the compressed size discounts text that is likely simply because it is
    repetitive or formulaic. None when no token was scored.
    """
    arr = np.asarray(logprobs, dtype=np.float64)
    if arr.size == 0:
        return None
    return float(arr.mean()) / len(zlib.compress(text.encode("utf-8")))
