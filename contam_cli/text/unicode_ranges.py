"""Where the Unicode database puts the characters the tokenizer treats apart: format characters
(removed before tokenizing) and combining marks (kept in the word before them)."""

from __future__ import annotations

import functools
import unicodedata

__all__ = ["MARK_PLANES", "mark_ranges"]

#: Where Unicode puts format characters and combining marks: the Basic and Supplementary
#: Multilingual Planes and plane 14 (tags, variation selectors). Planes 2 and 3 hold ideographs,
#: 4 to 13 are unassigned, 15 and 16 private use; ``tests/test_text.py`` checks every Cf, Mn,
#: Mc and Me character of the running Python's database lies here.
MARK_PLANES = (range(0x20000), range(0xE0000, 0xF0000))


@functools.cache
def mark_ranges() -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """The format characters (Cf) and the combining marks (Mn, Mc, Me) of this Python's Unicode
    database, as inclusive code point ranges, for the token patterns and the compiled
    tokenizer's tables: each code point of MARK_PLANES read once, on first use."""
    category = unicodedata.category
    found: dict[str, list[list[int]]] = {"C": [], "M": []}
    for plane in MARK_PLANES:
        for cp, c in enumerate(map(chr, plane), plane.start):
            k = category(c)
            if k[0] == "M" or k == "Cf":
                ranges = found[k[0]]
                if ranges and ranges[-1][1] == cp - 1:
                    ranges[-1][1] = cp
                else:
                    ranges.append([cp, cp])
    return tuple((a, b) for a, b in found["C"]), tuple((a, b) for a, b in found["M"])
