"""The probe's methods: what each is called in a report, its direction, and one batch of texts
scored through a provider with the detectors of :mod:`contam_cli.detectors`.

* ``min-k``: ``min_k@K`` for each k, Min-K% (higher is more suspicious);
* ``min-k++``: ``min_k_pp@K`` for each k, Min-K%++ (higher);
* ``ppl``: ``perplexity`` (LOWER is more suspicious);
* ``zlib``: ``zlib``, mean log-prob over the zlib-compressed size (higher);
* ``guided``: ``guided_f1``, the LCS F1 of the model's continuation of the first 70% of the
  example against the true rest (higher); the details hold precision, recall and the completion.

A text a method cannot score (no scored token; fewer than 2 words for guided prompting) gets
``None`` for it, never a number that would read as clean.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.detectors.guided import PREFIX_RATIO, score_completion, split_prefix_suffix
from contam_cli.detectors.providers.base import Provider, ProviderError, TextScores
from contam_cli.detectors.scores import (
    k_count,
    lowest_k_means,
    min_k_plus_plus,
    perplexity,
    round_half_up,
    zlib_ratio,
)
from contam_cli.errors import UsageError
from contam_cli.report import Direction, Method
from contam_cli.text import tokenize

__all__ = [
    "ALL_METHODS",
    "DEFAULT_METHODS",
    "FLOAT_MAX",
    "TOKEN_METHODS",
    "Entry",
    "Plan",
    "guided_budget",
    "parse_methods",
]

TOKEN_METHODS = ("min-k", "min-k++", "ppl", "zlib")
"""The methods computed from per-token scores (one ``token_scores`` call per batch)."""
ALL_METHODS = (*TOKEN_METHODS, "guided")
DEFAULT_METHODS = TOKEN_METHODS
FLOAT_MAX = sys.float_info.max
"""What an infinite score is written as (JSON has no infinity; see :func:`_finite`)."""

_COLUMNS: dict[str, tuple[str, Direction, str]] = {
    "min-k": ("min_k@{k}", "higher", "Min-K% (k={k}): mean of the lowest k% token log-probs"),
    "min-k++": (
        "min_k_pp@{k}",
        "higher",
        "Min-K%++ (k={k}): mean of the lowest k% of (logprob - mu) / sigma",
    ),
    "ppl": ("perplexity", "lower", "exp(-mean token log-prob)"),
    "zlib": ("zlib", "higher", "mean token log-prob / zlib-compressed bytes of the text"),
    "guided": (
        "guided_f1",
        "higher",
        "guided prompting: LCS F1 of the model's continuation against the true suffix",
    ),
}
"""Per method: its report name (``{k}``: one per k), direction and description."""

Entry = dict[str, Any]
"""One scored text: ``{"scores": {name: float | None}, "probe": details or None}``."""


def parse_methods(methods: str | Iterable[str]) -> tuple[str, ...]:
    """Method names from ``"min-k,ppl"`` or a list of such strings: known, in order, once each.

    >>> parse_methods(["min-k++, ppl", "min-k++"])
    ('min-k++', 'ppl')
    """
    items = [methods] if isinstance(methods, str) else list(methods)
    names = [part.strip() for item in items for part in str(item).split(",") if part.strip()]
    unknown = [n for n in names if n not in ALL_METHODS]
    if unknown:
        raise UsageError(f"unknown probe method {unknown[0]!r}: expected {', '.join(ALL_METHODS)}")
    if not names:
        raise UsageError(f"no probe method given: expected some of {', '.join(ALL_METHODS)}")
    return tuple(dict.fromkeys(names))


def _ks(k: float | Iterable[float]) -> tuple[float, ...]:
    values = [k] if isinstance(k, (int, float)) else list(k)
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise UsageError(f"k must be a percentage between 0 and 100, got {v!r}")
        k_count(1, v)  # NOTE: the detectors' own check (0 <= k <= 100)
    if not values:
        raise UsageError("give at least one k for min-k and min-k++")
    return tuple(dict.fromkeys(int(v) if float(v).is_integer() else float(v) for v in values))


def guided_budget(suffix: str) -> int:
    """The default completion budget for a true suffix: 1.5 model tokens per word (subword
    tokenizers split words), rounded up to a multiple of 8 so that a batch's prompts share few
    budgets.

    >>> guided_budget("one two three"), guided_budget(" ".join(["w"] * 20))
    (8, 32)
    """
    want = round_half_up(1.5 * len(tokenize(suffix)))
    return max(8, 8 * math.ceil(want / 8))


def _finite(value: float | None) -> float | None:
    """A score as the report holds it: NaN is None (no score), ±inf the largest float.

    NOTE: an infinite score is real (a token of probability 0: infinite perplexity, -inf
    Min-K%), and it is the least suspicious value there is; ±FLOAT_MAX keeps that order in strict
    JSON, where None would read as "could not score".
    """
    if value is None or math.isnan(value):
        return None
    if math.isinf(value):
        return FLOAT_MAX if value > 0 else -FLOAT_MAX
    return float(value)


@dataclass(frozen=True)
class Plan:
    """Which methods to run, with which k, and how to ask for guided completions."""

    methods: tuple[str, ...] = DEFAULT_METHODS
    ks: tuple[float, ...] = (20,)
    max_tokens: int | None = None
    """The completion budget for guided prompting; None: :func:`guided_budget` per example."""
    redact: bool = False
    """Leave the model's completions out of the details."""

    @classmethod
    def make(
        cls,
        methods: str | Iterable[str],
        k: float | Iterable[float],
        max_tokens: int | None = None,
        redact: bool = False,
    ) -> Plan:
        if max_tokens is not None and (isinstance(max_tokens, bool) or max_tokens < 1):
            raise UsageError(f"max_tokens must be at least 1, got {max_tokens!r}")
        return cls(parse_methods(methods), _ks(k), max_tokens, bool(redact))

    @property
    def token_methods(self) -> bool:
        return any(m in TOKEN_METHODS for m in self.methods)

    def report_methods(self) -> tuple[Method, ...]:
        """The report's methods, in the order asked (each k in the order given)."""
        out: list[Method] = []
        for m in self.methods:
            name, direction, text = _COLUMNS[m]
            for k in self.ks if "{k}" in name else (0,):
                label = f"{k:g}"
                described = text.format(k=label)
                out.append(Method(name.format(k=label), "probe", direction, description=described))
        return tuple(out)

    def describe(self) -> dict[str, Any]:
        """The plan's part of the report's config."""
        out: dict[str, Any] = {"methods": list(self.methods), "k": list(self.ks)}
        if "guided" in self.methods:
            out["guided"] = {"prefix_ratio": PREFIX_RATIO, "max_tokens": self.max_tokens}
        return out

    def score(self, provider: Provider, texts: Sequence[str]) -> list[Entry]:
        """Every text of one batch scored by every method of the plan."""
        entries: list[Entry] = [{"scores": {}, "probe": {}} for _ in texts]
        if self.token_methods:
            scored = provider.token_scores(list(texts))
            if len(scored) != len(texts):
                raise ProviderError(
                    f"{provider.spec}: scored {len(scored)} texts of a batch of {len(texts)}"
                )
            for entry, text, ts in zip(entries, texts, scored):
                entry["scores"].update(self._token_scores(text, ts))
                entry["probe"].update(tokens=len(ts), full_distribution=bool(ts.full_distribution))
        if "guided" in self.methods:
            for entry, (f1, details) in zip(entries, self._guided(provider, texts)):
                entry["scores"]["guided_f1"] = f1
                if details is not None:
                    entry["probe"]["guided"] = details
        for entry in entries:
            entry["probe"] = entry["probe"] or None
        return entries

    def _token_scores(self, text: str, ts: TextScores) -> dict[str, float | None]:
        logprob = np.asarray(ts.logprob, dtype=np.float64)
        out: dict[str, float | None] = {}
        for m in self.methods:
            if m == "min-k":
                got = lowest_k_means(logprob, self.ks)
                out.update({f"min_k@{k:g}": got[k] for k in self.ks})
            elif m == "min-k++":
                got = min_k_plus_plus(ts, self.ks)
                out.update({f"min_k_pp@{k:g}": got[k] for k in self.ks})
            elif m == "ppl":
                out["perplexity"] = perplexity(logprob)
            elif m == "zlib":
                out["zlib"] = zlib_ratio(text, logprob)
        return {name: _finite(v) for name, v in out.items()}

    def _guided(
        self, provider: Provider, texts: Sequence[str]
    ) -> list[tuple[float | None, dict[str, Any] | None]]:
        parts = [split_prefix_suffix(t) for t in texts]
        split = {i: p for i, p in enumerate(parts) if p is not None}
        budgets = {i: self.max_tokens or guided_budget(p[1]) for i, p in split.items()}
        completions: dict[int, str] = {}
        # NOTE: one complete() call per budget, in order: a short suffix is not scored against
        # a completion padded out to the batch's longest budget.
        for budget in sorted(set(budgets.values())):
            group = [i for i, b in budgets.items() if b == budget]
            got = provider.complete([split[i][0] for i in group], max_tokens=budget)
            if len(got) != len(group):
                raise ProviderError(f"{provider.spec}: {len(got)} completions for {len(group)}")
            completions.update(zip(group, got))
        out: list[tuple[float | None, dict[str, Any] | None]] = []
        for i, p in enumerate(parts):
            if p is None:
                out.append((None, None))
                continue
            r = score_completion("", p[0], p[1], completions[i])
            completion = None if self.redact else r.completion
            details = {"precision": r.precision, "recall": r.recall, "completion": completion}
            out.append((r.similarity, details))
        return out
