"""Seeds: unordered pairs of nearby tokens, hashed (the definition; the index and the chunk
scan both hash pairs with it).

A seed is the pair {a, b} of two tokens at most ``max_gap`` apart in one text, hashed without
their order: ``fmix64(a + b + PAIR_SALT)`` over the tokens' uint64 hashes (modulo 2**64). A
reworded copy keeps a pair unless it replaced one of its two words; swapping two neighbours, or
inserting or deleting a word between them (within the gap), keeps it. Pairs never cross a
document boundary.
"""

from __future__ import annotations

import numpy as np

from contam_cli.text import fmix64

__all__ = ["PAIR_SALT", "pair_hash", "pair_hashes"]

#: Added to every pair's sum before mixing (odd; keeps pair hashes apart from token hashes).
PAIR_SALT = 0x2545F4914F6CDD1D

_U64 = np.uint64


def pair_hash(a: int, b: int) -> int:
    """The hash of the unordered pair of token hashes {a, b} (the definition).

    >>> pair_hash(1, 2) == pair_hash(2, 1)
    True
    """
    out = fmix64(np.array([(a + b + PAIR_SALT) & ((1 << 64) - 1)], dtype=_U64))
    return int(out[0])


def pair_hashes(tokens: np.ndarray, gap: int) -> np.ndarray:
    """Hashes of the pairs (tokens[i], tokens[i + gap]) for every i, in order."""
    out = tokens[:-gap] + tokens[gap:]  # NOTE: uint64 addition wraps modulo 2**64, as defined
    out += _U64(PAIR_SALT)
    return fmix64(out)
