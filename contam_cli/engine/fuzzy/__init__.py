"""The fuzzy detector: reworded leaks found without a model, with lexical evidence.

Exact n-grams miss a leak once its words are edited (with a quarter of the words swapped, no
13-gram survives). This detector finds such copies in two stages, streamed over corpus chunks
like the exact scan, with memory bounded by the eval set:

1. **Seeds** (:mod:`.seeds`, :mod:`.candidates`): every unordered pair of tokens at most
   ``max_gap`` apart in an eval example (pairs of two common words left out) is indexed like an
   n-gram (:mod:`.index`). A corpus chunk's pairs are looked up (Bloom filter, then the sorted
   seeds); each hit lands on a diagonal (document position - eval position), and a document
   where an example's seeds gather on two adjacent bins of diagonals becomes a candidate.
2. **Verification** (:mod:`.align`): a banded local alignment over token ids, tolerant to
   substitutions, insertions, deletions and swaps of neighbours; a matched token scores its
   rarity weight (document frequency among the eval examples), so shared function words count
   for little. ``score`` = alignment score / the example's total weight (1.0: verbatim).

The :class:`FuzzyAccumulator` keeps the best alignment per (source, example), with evidence:
the aligned document span (tokens and characters), and the matched (eval token, document
token) pairs with their character offsets. Flag with ``score >= FuzzyConfig.min_fuzzy``.

>>> import numpy as np
>>> from contam_cli.engine import DocBatch
>>> from contam_cli.io.model import Locator, Record
>>> from contam_cli.text import Tokenizer
>>> ex = "the committee approved the new budget for the public library after a long debate"
>>> ex += " about opening hours and the cost of repairs to the old roof"
>>> doc = "after a long debate the board approved a new budget for the town library"
>>> doc += " after the debate about opening times and the cost of repairs to the old roof"
>>> cfg = FuzzyConfig()
>>> index = build_fuzzy_index([ex], config=cfg)
>>> acc = FuzzyAccumulator(1, ["web"], cfg)
>>> rec = Record("d0", doc, Locator("web.jsonl", 1))
>>> acc.add_batch(index, Tokenizer(), DocBatch(0, [doc.encode()], np.zeros(1, np.int64),
...                                             lambda d: rec))
>>> r = acc.results(index)
>>> bool(r.flagged(cfg.min_fuzzy)[0]), round(float(r.score[0]), 2), r.evidence[0].text[:30]
(True, 0.74, 'the board approved a new budge')
"""

from __future__ import annotations

from contam_cli.engine.fuzzy.accumulator import FuzzyAccumulator
from contam_cli.engine.fuzzy.align import Alignment, align
from contam_cli.engine.fuzzy.config import FuzzyConfig
from contam_cli.engine.fuzzy.evidence import FuzzyEvidence
from contam_cli.engine.fuzzy.index import FuzzyIndex, build_fuzzy_index
from contam_cli.engine.fuzzy.results import FuzzyResults

__all__ = [
    "Alignment",
    "FuzzyAccumulator",
    "FuzzyConfig",
    "FuzzyEvidence",
    "FuzzyIndex",
    "FuzzyResults",
    "align",
    "build_fuzzy_index",
]
