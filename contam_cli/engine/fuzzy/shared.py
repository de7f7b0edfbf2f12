"""Both detectors over one corpus pass: each batch tokenized once, one mergeable result per shard.

A corpus pass maps shards to :class:`~contam_cli.engine.accumulator.Accumulator` values and
merges them in shard order. With the fuzzy detector on, a shard's result is a
:class:`WithFuzzy`: the exact accumulator (so every executor, checkpoint and caller that handles
one handles it unchanged) carrying the shard's :class:`FuzzyAccumulator`, merged with it. Each
batch is tokenized once: the exact matcher gets the tokens through :class:`OneStream`, the
fuzzy accumulator takes them as its ``stream``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.fuzzy.accumulator import FuzzyAccumulator
from contam_cli.engine.fuzzy.index import FuzzyIndex
from contam_cli.engine.match import DocBatch
from contam_cli.text import Tokenizer, TokenStream

__all__ = ["OneStream", "WithFuzzy", "add_both", "with_fuzzy"]


class WithFuzzy(Accumulator):
    """An exact Accumulator and, in :attr:`fuzzy`, the fuzzy detector's of the same documents;
    merging merges both (each in any order, so the pair too)."""

    fuzzy: FuzzyAccumulator

    def merge(self, other: Accumulator) -> None:
        if not isinstance(other, WithFuzzy):
            raise TypeError("a fuzzy scan's shards all carry fuzzy results")
        super().merge(other)
        self.fuzzy.merge(other.fuzzy)


def with_fuzzy(acc: Accumulator, index: FuzzyIndex, redact: bool) -> WithFuzzy:
    """`acc` (new, empty) as a WithFuzzy with an empty fuzzy accumulator for `index`."""
    out = WithFuzzy(
        n_sources=acc.n_sources,
        n_grams=acc.n_grams,
        n_examples=acc.n_examples,
        source_names=list(acc.source_names),
        redact=redact,
    )
    out.fuzzy = FuzzyAccumulator(index.n_examples, list(acc.source_names), index.config, redact)
    return out


class OneStream:
    """A tokenizer that gives the tokens of one batch, already computed, without tokenizing it
    again; everything else (other texts, n-grams, kernels, normalization) is the tokenizer's.

    >>> tk = Tokenizer()
    >>> raw = [b"a b c"]
    >>> stream = tk.tokens(raw)
    >>> OneStream(tk, raw, stream).tokens(raw) is stream
    True
    """

    def __init__(self, tk: Tokenizer, raw: Sequence[bytes], stream: TokenStream) -> None:
        self._tk = tk
        self._raw = raw
        self._stream = stream

    def tokens(self, docs: list[bytes] | list[str]) -> TokenStream:
        # NOTE: identity, not equality: the batch's own list is what the matcher passes on.
        return self._stream if docs is self._raw else self._tk.tokens(docs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tk, name)


def add_both(
    acc: WithFuzzy, index: EvalIndex, fuzzy: FuzzyIndex, tk: Tokenizer, batch: DocBatch
) -> None:
    """One batch into both accumulators, tokenized once."""
    stream = tk.tokens(batch.raw)
    acc.add_batch(index, cast(Tokenizer, OneStream(tk, batch.raw, stream)), batch)
    acc.fuzzy.add_batch(fuzzy, tk, batch, stream)
