"""Per-character tables for the compiled tokenizer: which non-ASCII characters it may handle
without the full normalizer, and how. Each table is derived from :mod:`contam_cli.text.normalize`
itself (never written by hand), and tests hold the compiled words to :func:`tokenize`.
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

from contam_cli.text.normalize import (
    SEGMENTED_RANGES,
    NormConfig,
    is_segmented,
    normalize,
    tokenize,
)
from contam_cli.text.unicode_ranges import mark_ranges

__all__ = ["IGNORED", "JOINING", "SEPARATOR", "SINGLE", "SLOW", "fast_table", "word_table"]

#: Kinds of a BMP code point in a word (a run of bytes that are not ASCII separators).
SEPARATOR, SINGLE, SLOW, JOINING, IGNORED = 0, 1, 2, 3, 4


@functools.cache
def fast_table() -> np.ndarray:
    """Per BMP code point: 0 separator, 1 one-character token, 2 needs the full normalizer.

    For the scripts written without spaces (CJK ideographs, kana) and CJK / full-width
    punctuation: a character is fast only when it is unchanged by normalization (or normalizes
    to punctuation), never combines with a neighbour, and on its own tokenizes to itself (1) or
    to nothing (0). Everything else stays slow (2).
    """
    table = np.full(0x10000, SLOW, dtype=np.uint8)
    candidates = [
        *range(0x3000, 0x3100),
        *range(0x3400, 0x4DC0),
        *range(0x4E00, 0xA000),
        *range(0xFF00, 0xFF66),
    ]
    segmented = bytearray(0x10000)  # NOTE: a lookup, not a search of the ranges per character
    for lo, hi in SEGMENTED_RANGES:
        top = min(hi, 0xFFFF) + 1
        if lo < top:
            segmented[lo:top] = b"\1" * (top - lo)
    for cp in candidates:
        c = chr(cp)
        if unicodedata.combining(c) or _is_mark_or_format(c):
            continue
        if segmented[cp]:
            # NOTE: a segmented character is a token of its own: it is fast exactly when
            # normalization leaves it alone (cheaper tests than normalize(), same answer).
            if unicodedata.is_normalized("NFKC", c) and c.casefold() == c:
                table[cp] = SINGLE
            continue
        norm = normalize(c)
        if not tokenize(c) and not any(ch.isalnum() for ch in norm) and not _composes(c):
            if _starts_clean(norm):
                table[cp] = SEPARATOR
    return table


#: Letters and digits that may join an ASCII word: Latin-1 Supplement through Armenian, Latin
#: Extended Additional and Greek Extended, the Latin ligatures, full-width digits and letters.
_JOINING_CANDIDATES = (
    (0x00A0, 0x0590),
    (0x1E00, 0x2000),
    (0xFB00, 0xFB18),
    (0xFF10, 0xFF5B),
)

#: Where the characters that compose with a preceding starter although they are starters
#: themselves (ccc 0: Indic vowel signs, Hangul jamo, ...) live; none may begin a fast piece.
_COMPOSING_STARTERS = ((0x0900, 0x0E00), (0x1000, 0x10A0), (0x1100, 0x1200), (0x1B00, 0x1B80))


@functools.cache
def word_table(norm: NormConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kinds of every BMP code point for :func:`~contam_cli.text._kernels.word_tokens`, and
    what a JOINING one becomes.

    Kinds: :func:`fast_table`'s (SEPARATOR, SINGLE, SLOW), IGNORED, a format character (Cf,
    which :func:`tokenize` removes before anything else), and JOINING, a letter or digit that
    normalizes on its own to 1..8 bytes of letters and digits, none of which combines with a
    neighbour: inside a word it is replaced by that text, exactly as :func:`normalize` of the
    whole word does (no character of such a word composes with or reorders around another), and
    the word stays one token. Returns (kinds, the replacement's UTF-8 as a little-endian uint64,
    its length in bytes).
    """
    kinds = fast_table().copy()
    fold = np.zeros(0x10000, dtype=np.uint64)
    fold_len = np.zeros(0x10000, dtype=np.uint8)
    for lo, hi in _JOINING_CANDIDATES:
        for cp in range(lo, hi):
            c = chr(cp)
            if not c.isalnum() or is_segmented(c) or unicodedata.combining(c):
                continue
            out = normalize(c, norm)
            data = out.encode("utf-8")
            if not 0 < len(data) <= 8 or not _starts_clean(c) or not _starts_clean(out):
                continue
            if all(ch.isalnum() and not is_segmented(ch) and not unicodedata.combining(ch)
                   and not _is_mark_or_format(ch) for ch in out):  # fmt: skip
                kinds[cp] = JOINING
                fold[cp] = int.from_bytes(data, "little")
                fold_len[cp] = len(data)
    for lo, hi in mark_ranges()[0]:  # the format characters
        kinds[lo : min(hi, 0xFFFF) + 1] = IGNORED
    return kinds, fold, fold_len


def _is_mark_or_format(c: str) -> bool:
    """Whether `c` is a combining mark (Mn, Mc, Me: part of the token before it) or a format
    character (Cf: removed before tokenizing); neither is ever a token of its own."""
    return unicodedata.category(c) in ("Mn", "Mc", "Me", "Cf")


def _starts_clean(text: str) -> bool:
    """Whether `text` begins (after canonical decomposition) with a starter that cannot
    compose with what precedes it, or is empty."""
    if not text:
        return True
    first = unicodedata.normalize("NFD", text)[0]
    cp = ord(first)
    if unicodedata.combining(first):
        return False
    return not any(lo <= cp < hi for lo, hi in _COMPOSING_STARTERS)


def _composes(c: str) -> bool:
    """Whether `c` can combine with a following character under NFKC (e.g. kana + voicing)."""
    return any(len(unicodedata.normalize("NFKC", c + m)) < 2 for m in ("\u3099", "\u309a"))
