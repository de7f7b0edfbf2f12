"""FuzzyResults: the fuzzy detector's per-example results, as numpy columns plus evidence."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contam_cli.engine.fuzzy.evidence import FuzzyEvidence
from contam_cli.engine.fuzzy.index import FuzzyIndex

__all__ = ["FuzzyResults", "build_results"]


@dataclass(frozen=True, eq=False)
class FuzzyResults:
    """Per example: the best alignment over every source (ties to the first source).

    Columns are NaN (floats) or -1 (integers) where they do not apply: unscorable examples
    (fewer than ``min_tokens`` tokens) have a NaN score, to be written as null; scorable
    examples without any candidate score 0.0 and have no evidence.
    """

    scorable: np.ndarray
    score: np.ndarray
    """float64 alignment score / the example's total weight, in [0, 1]."""
    aligned_fraction: np.ndarray
    """float64 matched eval tokens / eval tokens."""
    identity: np.ndarray
    """float64 matched tokens / alignment columns."""
    source: np.ndarray
    """int64 index of the source holding the best alignment (-1: none)."""
    doc_order: np.ndarray
    """int64 ``batch.order`` of the document holding it (file ordinal, then position)."""
    doc_start: np.ndarray
    doc_end: np.ndarray
    """int64 document token span of the alignment (first to last matched token, end past it)."""
    eval_start: np.ndarray
    eval_end: np.ndarray
    char_start: np.ndarray
    char_end: np.ndarray
    """int64 character offsets of the alignment's span in the document's text."""
    evidence: dict[int, FuzzyEvidence]
    """Example -> evidence of its best alignment (only examples with a candidate)."""

    def flagged(self, min_fuzzy: float) -> np.ndarray:
        """Scorable examples whose score reaches `min_fuzzy`."""
        return self.scorable & (np.nan_to_num(self.score, nan=-1.0) >= min_fuzzy)


#: Integer columns and the evidence fields they come from.
_SPAN = {
    "doc_start": "doc_token",
    "doc_end": "doc_token_end",
    "eval_start": "eval_token",
    "eval_end": "eval_token_end",
    "char_start": "char_start",
    "char_end": "char_end",
}


def build_results(
    index: FuzzyIndex,
    best_h: np.ndarray,
    best_order: np.ndarray,
    evidence: dict[tuple[int, int], FuzzyEvidence],
) -> FuzzyResults:
    """Per-example columns from an accumulator's (source, example) arrays."""
    n = index.n_examples
    scorable = np.asarray(index.scorable, dtype=bool)
    if best_h.shape[0]:
        src = np.argmax(best_h, axis=0)
        h = best_h[src, np.arange(n)]
    else:
        src, h = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    found = h > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(scorable, h / np.maximum(index.total_weight, 1), np.nan)
    floats = {k: np.where(scorable, 0.0, np.nan) for k in ("aligned_fraction", "identity")}
    ints = {k: np.full(n, -1, dtype=np.int64) for k in _SPAN}
    picked = {e: evidence[(int(src[e]), e)] for e in np.flatnonzero(found).tolist()}
    _fill(picked, floats, ints)
    return FuzzyResults(
        scorable=scorable,
        score=score,
        source=np.where(found, src, -1).astype(np.int64),
        doc_order=np.where(found, best_order[src, np.arange(n)] if len(best_h) else -1, -1),
        evidence=picked,
        **floats,
        **ints,
    )


def _fill(
    picked: dict[int, FuzzyEvidence], floats: dict[str, np.ndarray], ints: dict[str, np.ndarray]
) -> None:
    """Columns of the examples with evidence, from their evidence."""
    for column, values in (*floats.items(), *ints.items()):
        name = _SPAN.get(column, column)
        for e, ev in picked.items():
            values[e] = getattr(ev, name)
