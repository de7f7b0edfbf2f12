"""Guided prompting: cut an example into a prefix and a true suffix, let the model continue the
prefix, and measure how much of the true suffix it reproduces (LCS precision, recall and F1).

Near-verbatim reproduction is strong evidence of memorization (Golchin & Surdeanu, 2023). The
similarity is the LCS F1, not recall: normalizing by the true suffix alone lets a verbose model
that emits hundreds of generic words containing the suffix as a subsequence score a perfect 1.0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from contam_cli.detectors.scores import round_half_up
from contam_cli.errors import UsageError
from contam_cli.text import DEFAULT_NORM, NormConfig, token_spans, tokenize

__all__ = [
    "PREFIX_RATIO",
    "GuidedPromptResult",
    "LcsScore",
    "lcs_length",
    "lcs_score",
    "run_guided_prompt_test",
    "score_completion",
    "split_prefix_suffix",
]

PREFIX_RATIO = 0.7
"""The share of an example's tokens shown to the model as the prefix."""


@dataclass(frozen=True, slots=True)
class LcsScore:
    """How a candidate token sequence matches a reference through their longest common
    subsequence."""

    lcs: int
    """Length of the longest common subsequence, in tokens."""
    precision: float
    """lcs / candidate length: penalizes padding (0 for an empty candidate)."""
    recall: float
    """lcs / reference length: how much of the reference was reproduced (0 when empty)."""
    f1: float
    """2·lcs / (candidate length + reference length): symmetric, the similarity."""


@dataclass(frozen=True, slots=True)
class GuidedPromptResult:
    """The guided-prompting outcome for one example (None scores: too short to split)."""

    example_id: str
    similarity: float | None
    """LCS F1 of the completion against the true suffix; 1.0 is exact reproduction."""
    precision: float | None
    recall: float | None
    prefix: str
    """What the model was shown: the example's text up to the split, trailing spaces removed."""
    suffix: str
    """The true continuation (empty when the example could not be split)."""
    completion: str | None
    """What the model wrote (None when it was not asked)."""

    @property
    def scorable(self) -> bool:
        return self.similarity is not None


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences, O(len(a)·len(b)).

    >>> lcs_length("a b c d".split(), "a x c d y".split())
    3
    """
    if len(a) > len(b):
        a, b = b, a  # NOTE: one Python iteration per token of the shorter side
    if not a:
        return 0
    ids: dict[str, int] = {}
    b_ids = np.array([ids.setdefault(t, len(ids)) for t in b], dtype=np.int64)
    row = np.zeros(len(b) + 1, dtype=np.int64)
    for token in a:
        code = ids.get(token)
        if code is None:
            continue  # a token absent from b cannot extend any subsequence: the row is unchanged
        # NOTE: dp[i][j] = max(dp[i-1][j], dp[i][j-1], dp[i-1][j-1] + match) is the running
        # maximum over j of max(dp[i-1][j], dp[i-1][j-1] + match), so each row is one accumulate.
        extend = np.where(b_ids == code, row[:-1] + 1, 0)
        row[1:] = np.maximum.accumulate(np.maximum(row[1:], extend))
    return int(row[-1])


def lcs_score(candidate: Sequence[str], reference: Sequence[str]) -> LcsScore:
    """LCS precision (over the candidate), recall (over the reference) and F1 of two token lists.

    >>> s = lcs_score("of the eukaryotic cell".split(), "the eukaryotic cell".split())
    >>> s.lcs, s.precision, s.recall, round(s.f1, 3)
    (3, 0.75, 1.0, 0.857)
    """
    n = lcs_length(candidate, reference)
    precision = n / len(candidate) if candidate else 0.0
    recall = n / len(reference) if reference else 0.0
    total = len(candidate) + len(reference)
    return LcsScore(n, precision, recall, 2 * n / total if total else 0.0)


def split_prefix_suffix(
    text: str, ratio: float = PREFIX_RATIO, config: NormConfig = DEFAULT_NORM
) -> tuple[str, str] | None:
    """Cut ``text`` before token number round(ratio·tokens), keeping at least one token on each
    side; None when the text has fewer than 2 tokens (it cannot be split, so it is unscorable).

    Tokens are contam's normalized tokens, so CJK text (one token per character) splits too.
    The cut keeps the original text: the prefix is everything before the first suffix token.

    >>> split_prefix_suffix("The cat sat on the mat, quietly.")
    ('The cat sat on the', 'mat, quietly.')
    >>> split_prefix_suffix("alone") is None
    True
    """
    if not 0 < ratio < 1:
        raise UsageError(f"the prefix ratio must be strictly between 0 and 1, got {ratio}")
    spans = token_spans(text, config)
    if len(spans) < 2:
        return None
    cut = min(len(spans) - 1, max(1, round_half_up(ratio * len(spans))))
    start = spans[cut][0]
    return text[:start].rstrip(), text[start:]


def score_completion(
    example_id: str,
    prefix: str,
    suffix: str,
    completion: str,
    config: NormConfig = DEFAULT_NORM,
) -> GuidedPromptResult:
    """Score a model's ``completion`` of ``prefix`` against the true ``suffix`` (normalized
    tokens, so case, punctuation and spacing do not matter)."""
    score = lcs_score(tokenize(completion, config), tokenize(suffix, config))
    return GuidedPromptResult(
        example_id, score.f1, score.precision, score.recall, prefix, suffix, completion
    )


def run_guided_prompt_test(
    example_id: str,
    text: str,
    complete: Callable[[str], str],
    *,
    ratio: float = PREFIX_RATIO,
    config: NormConfig = DEFAULT_NORM,
) -> GuidedPromptResult:
    """Split ``text``, ask ``complete(prefix)`` for a continuation, score it against the suffix.

    A text of fewer than 2 tokens is returned unscored (None scores, ``complete`` not called):
    unscorable is never reported as clean.
    """
    parts = split_prefix_suffix(text, ratio, config)
    if parts is None:
        return GuidedPromptResult(example_id, None, None, None, text, "", None)
    prefix, suffix = parts
    return score_completion(example_id, prefix, suffix, complete(prefix), config)
