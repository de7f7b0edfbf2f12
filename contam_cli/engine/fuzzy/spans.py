"""Every reworded copy in a batch of texts: the aligned spans that reach a score, per document.

A scan keeps one best alignment per (source, example); removing reworded leaks from a corpus
needs every copy. :func:`aligned_spans` runs the detector's two stages over a batch of texts
(candidates, then the banded alignment) and keeps each candidate of example ``e`` whose score
(alignment score / the example's total weight, as in a scan) reaches ``threshold[e]``, traced
back to its matched tokens: the span from the first to the last of them, in characters of the
document's text. The same texts and index give the same spans whatever else is in the batch.
"""

from __future__ import annotations

import numpy as np

from contam_cli.engine.fuzzy.accumulator import trace_candidate
from contam_cli.engine.fuzzy.align import align_candidates
from contam_cli.engine.fuzzy.candidates import chunk_candidates, fuzzy_kernels
from contam_cli.engine.fuzzy.evidence import TokenChars
from contam_cli.engine.fuzzy.index import FuzzyIndex
from contam_cli.errors import UsageError
from contam_cli.text import Tokenizer

__all__ = ["aligned_spans"]


def aligned_spans(
    index: FuzzyIndex, tk: Tokenizer, texts: list[str], threshold: np.ndarray
) -> dict[int, list[tuple[int, int]]]:
    """Per document (index into `texts`), the character spans of the alignments of example
    ``e`` scoring at least ``threshold[e]`` (float; ``inf``: never), sorted.

    >>> from contam_cli.engine.fuzzy import build_fuzzy_index
    >>> ex = "the committee approved the new budget for the public library after a long debate"
    >>> ex += " about opening hours and the cost of repairs to the old roof"
    >>> doc = "Unrelated start. " + ex.replace("committee", "board") + " Unrelated end."
    >>> ix = build_fuzzy_index([ex])
    >>> [doc[a:b][:9] for a, b in aligned_spans(ix, Tokenizer(), [doc, "x"], np.array([0.5]))[0]]
    ['the board']
    """
    if tk.norm != index.norm:
        raise UsageError("the fuzzy index was built under another normalization")
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    stream = tk.tokens(raw)
    counts = np.bincount(stream.doc, minlength=len(raw))
    first = np.cumsum(counts) - counts
    kernels = fuzzy_kernels() if tk.kernels is not None else None
    cands = chunk_candidates(index, stream.hashes, stream.doc, first, counts, kernels)
    if len(cands) == 0:
        return {}
    pen = index.config.penalties()
    h, _, _ = align_candidates(
        cands, index.tokens, index.weights, index.tok_ptr, stream.hashes, pen, kernels
    )
    # NOTE: the score as a scan computes it (FuzzyResults), so the same copies reach the rule.
    score = h / np.maximum(index.total_weight[cands.example], 1)
    keep = np.flatnonzero((h > 0) & (score >= threshold[cands.example]))
    chars = TokenChars(stream.words, first, raw, tk.norm)
    out: dict[int, list[tuple[int, int]]] = {}
    for k in keep.tolist():
        found = trace_candidate(index, cands, k, stream.hashes, pen, kernels)
        if found.matched == 0:
            continue
        d = int(cands.doc[k])
        spans = chars.spans(d, texts[d], found.pairs[:, 1])
        out.setdefault(d, []).append((int(spans[:, 0].min()), int(spans[:, 1].max())))
    return {d: sorted(set(v)) for d, v in sorted(out.items())}
