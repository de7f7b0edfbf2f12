"""The tokens of a chunk of documents: their hashes, documents, and the words they came from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["TokenStream", "WordLayout"]


@dataclass(frozen=True, slots=True)
class WordLayout:
    """Where a chunk's tokens come from: the chunk's words and how many tokens each one gave.

    A word is a maximal run of bytes that are not separators (see :class:`Tokenizer`) in the
    buffer the chunk was tokenized from: one leading separator, then the documents joined by
    one separator each. An ASCII word is exactly one token spanning the whole word; a word
    holding non-ASCII bytes ("special") gives the tokens of :func:`~contam_cli.text.tokenize`
    on its text, which can be none, one or several, and need not cover the whole word.

    Everything here is a by-product of tokenizing (no extra pass over the chunk); it is read
    only when a run needs evidence offsets, see :meth:`locate`.
    """

    starts: np.ndarray
    """int64 byte offset of each word in the chunk buffer."""
    ends: np.ndarray
    """int64 byte offset just past each word."""
    doc_starts: np.ndarray
    """int64 byte offset in the buffer where each document begins."""
    special: np.ndarray
    """Sorted int64 indices of the words holding non-ASCII bytes."""
    multi: np.ndarray
    """Sorted int64 indices of the words that did not give exactly one token (all special)."""
    multi_counts: np.ndarray
    """int64 token count of each word in `multi` (0 or >= 2)."""

    def locate(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For chunk token indices `tokens`: each one's word, its index among the tokens of
        that word, and that word's token count (all int64 arrays)."""
        tokens = np.asarray(tokens, dtype=np.int64)
        if len(self.multi) == 0:  # one token per word
            ones = np.ones(len(tokens), dtype=np.int64)
            return tokens.copy(), np.zeros(len(tokens), dtype=np.int64), ones
        extra = self.multi_counts - 1
        after = np.cumsum(extra)  # tokens gained (or lost) up to and including multi word j
        first = self.multi + (after - extra)  # index of multi word j's first token
        # NOTE: several multi words can share a first token (a word without tokens, then the
        # next one); the last of them is the one that can hold the token.
        j = np.searchsorted(first, tokens, side="right") - 1
        jj = np.maximum(j, 0)
        shift = np.where(j >= 0, after[jj], 0)
        inner = tokens - first[jj]
        inside = (j >= 0) & (inner < self.multi_counts[jj])
        word = np.where(inside, self.multi[jj], tokens - shift)
        return (
            word,
            np.where(inside, inner, 0),
            np.where(inside, self.multi_counts[jj], 1),
        )


@dataclass(frozen=True, slots=True)
class TokenStream:
    """Token hashes of a chunk of documents, with the document and byte offset of each token."""

    hashes: np.ndarray
    """uint64 token hashes, in text order."""
    doc: np.ndarray
    """int64 index (into the chunk's documents) of each token's document."""
    words: WordLayout | None = None
    """The words each token comes from (set by :meth:`Tokenizer.tokens`), for evidence offsets."""
