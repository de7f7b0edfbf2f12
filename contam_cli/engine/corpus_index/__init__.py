"""A persisted corpus index: the corpus' n-gram hashes, sorted, memory-mapped, with provenance.

Build once (``contam index build``), then check any number of eval sets against it in time that
grows with the eval set, not the corpus (``contam scan EVAL --index DIR``).

Layout of the index directory::

    header.json          format, tool version, n, normalization, hash, positions, corpus_text
                         (the text rules: fields, roles, id field), sources + files, and the
                         directories given with their globs (roots, for --verify)
    s{k}.grams.u64       source k: sorted n-gram hashes (distinct, or one per occurrence with
                         positions), raw little-endian uint64, memory-mapped when read
    s{k}.doc.u64 / .pos.u64   with positions: document ordinal and token position of each entry
    s{k}.docs.npz        with positions: per document its file ordinal, byte offset, record ordinal
"""

from __future__ import annotations

from contam_cli.engine.corpus_index.build import build_corpus_index
from contam_cli.engine.corpus_index.header import INDEX_FORMAT, IndexHeader, load_header
from contam_cli.engine.corpus_index.query import match_index

__all__ = ["INDEX_FORMAT", "IndexHeader", "build_corpus_index", "load_header", "match_index"]
