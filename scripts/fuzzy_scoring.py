"""The fuzzy detector and the exact engine run in memory on lists of texts, for the fuzzy
detector's measurements (``scripts/fuzzy_eval.py`` and ``scripts/fuzzy_null.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from contam_cli.engine import Accumulator, build_eval_index, iter_batches
from contam_cli.engine.fuzzy import FuzzyAccumulator, FuzzyConfig, build_fuzzy_index
from contam_cli.engine.fuzzy.results import FuzzyResults
from contam_cli.io.model import Locator, Record
from contam_cli.text import Tokenizer


def fuzzy_scores(
    examples: list[str],
    docs: list[str],
    cfg: FuzzyConfig,
    names: list[str] | None = None,
) -> FuzzyResults:
    """The fuzzy detector's results for `examples` against the documents `docs` (`names`:
    each document's path, for the evidence)."""
    tk = Tokenizer()
    index = build_fuzzy_index(examples, tokenizer=tk, config=cfg)
    acc = FuzzyAccumulator(len(examples), ["corpus"], cfg)
    for batch in iter_batches(_records(docs, names), 0, 1 << 20):
        acc.add_batch(index, tk, batch)
    return acc.results(index)


def exact_signals(examples: list[str], docs: list[str], n: int) -> dict[str, np.ndarray]:
    """The exact engine's overlap fraction and longest run (n-grams of `n` tokens)."""
    tk = Tokenizer()
    index = build_eval_index(examples, n, tokenizer=tk)
    acc = Accumulator(1, len(index.grams), index.n_examples, ["corpus"])
    for batch in iter_batches(_records(docs), 0, 1 << 20):
        acc.add_batch(index, tk, batch)
    overlap = acc.matched_any(index) / np.maximum(index.total_ngrams, 1)
    return {f"overlap{n}": overlap, f"run{n}": acc.best_len.max(axis=0).astype(float)}


def _records(docs: list[str], names: list[str] | None = None) -> Iterator[tuple[Record, int]]:
    for i, t in enumerate(docs):
        yield Record(str(i), t, Locator(names[i] if names else "<corpus>", record=i)), i
