"""Normalization and tokenization: one definition of "the same words" for eval sets and corpora.

The order of the steps matters and is fixed:

1. format characters (Unicode category Cf: soft hyphen U+00AD, zero-width space U+200B,
   ZWNJ/ZWJ, LRM/RLM and the other bidi controls, word joiner U+2060, U+FEFF, U+061C, tag
   characters, ...: every Cf character of Python's Unicode database, none by hand) are removed,
   as Unicode word segmentation's rule WB4 lets them (UAX #29), so "so\u00adft" and
   "zero\u200bwidth" are "soft" and "zerowidth": a copy made invisible-but-different cannot hide
   a leak. Removed entirely, never a separator: a ZWSP between two words ("foo\u200bbar") joins
   them, because the text renders as "foobar", and the rule is that text whose rendering equals
   the eval text gives its tokens (splitting there instead would let "sof\u200bt" hide "soft");
   they are removed before NFKC, so one between a letter and its accent does not keep them apart;
2. Unicode NFKC, so full-width forms, ligatures and compatibility characters become their plain
   equivalents ("ＡＢＣ" -> "ABC", "ﬁ" -> "fi") before anything compares them;
3. casefold (not lower), so "ß" and "SS", or "Σ" and final "ς", compare equal;
4. tokens are maximal runs of Unicode letters and digits, each with the combining marks that
   follow it (categories Mn, Mc, Me that NFKC did not compose: Devanagari vowel signs and
   virama, Arabic harakat, Hebrew points stay in their word, WB4 again); everything else
   (spaces, punctuation, symbols, underscores, and a mark that follows none of these) separates
   tokens, so curly versus straight quotes or re-spacing cannot hide a leak;
5. characters of scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao,
   Khmer, Myanmar) are one token each, with the combining marks that follow them (a Thai vowel
   or tone mark is part of its consonant's token; a segmented mark is never a token alone).

The byte-level fast path in :mod:`contam_cli.text` produces exactly the tokens of
:func:`tokenize`; a property test holds the two together.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from contam_cli.text.unicode_ranges import mark_ranges

__all__ = [
    "NormConfig",
    "normalize",
    "tokenize",
    "token_spans",
    "token_span_array",
    "is_segmented",
    "SEGMENTED_RANGES",
]

#: Code point ranges whose characters are one token each (scripts without spaces between words).
SEGMENTED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0E7F),  # Thai
    (0x0E80, 0x0EFF),  # Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x19E0, 0x19FF),  # Khmer symbols
    (0x2E80, 0x2FDF),  # CJK radicals, Kangxi radicals
    (0x3005, 0x3005),  # ideographic iteration mark
    (0x3007, 0x3007),  # ideographic number zero
    (0x3021, 0x3029),  # Hangzhou numerals
    (0x3038, 0x303B),
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
    (0x20000, 0x3134F),  # CJK extensions B..G
)

#: The separators above ASCII, which split words like ASCII punctuation does (see
#: :func:`token_spans`): NBSP, and General Punctuation (U+2000..U+206F) less its format
#: characters (U+200B..U+200F, U+202A..U+202E, U+2060..U+2064, U+2066..U+206F) and the
#: unassigned U+2065, which are inside words (and what they do there is tokenize's to say).
UNICODE_SEPARATOR_RANGES: tuple[tuple[int, int], ...] = (
    (0x00A0, 0x00A0),
    (0x2000, 0x200A),
    (0x2010, 0x2029),
    (0x202F, 0x205F),
)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in ranges
    )


_SEG = _char_class(SEGMENTED_RANGES)
_SEGMENTED_RE = re.compile(f"[{_SEG}]")


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The token pattern and the format-character pattern, from this Python's Unicode database
    (built on first use, by a process that meets a non-ASCII word, from :func:`mark_ranges`)."""
    fmt, marks = mark_ranges()
    m = _char_class(marks)
    # NOTE: `[^\W_]` is "a Unicode letter or digit" in Python's re (\w minus the underscore);
    # no combining mark is one. A token: a segmented character that is not a mark, or a run of
    # other letters and digits, each followed by the combining marks after it.
    token = re.compile(f"(?![{m}])[{_SEG}][{m}]*|[^\\W_{_SEG}]+(?:[{m}]+[^\\W_{_SEG}]*)*")
    return token, re.compile(f"[{_char_class(fmt)}]+")


#: The token rule as reports, indexes and caches record it (``NormConfig.describe()["tokens"]``).
#: "/2": format characters are ignored and combining marks stay in their word; under the rule
#: before it, "letters-digits+segmented-scripts", both split words.
TOKEN_RULE = "letters-digits-marks+segmented-scripts/2"


@dataclass(frozen=True, slots=True)
class NormConfig:
    """How text is normalized before tokenizing. Recorded in every report and index.

    >>> NormConfig().describe()
    {'unicode': 'NFKC', 'casefold': True, 'tokens': 'letters-digits-marks+segmented-scripts/2'}
    >>> normalize("Ｃａｆé Straße", NormConfig(casefold=False))
    'Café Straße'
    """

    nfkc: bool = True
    """Apply Unicode NFKC (compatibility composition) first."""
    casefold: bool = True
    """Casefold after NFKC ("Straße" -> "strasse")."""

    def describe(self) -> dict[str, object]:
        return {
            "unicode": "NFKC" if self.nfkc else "none",
            "casefold": self.casefold,
            "tokens": TOKEN_RULE,
        }


DEFAULT_NORM = NormConfig()


def normalize(text: str, config: NormConfig = DEFAULT_NORM) -> str:
    """Return `text` after NFKC and casefolding (each as configured). Idempotent.

    >>> normalize("ＨＥＬＬＯ Straße")
    'hello strasse'
    """
    if config.nfkc:
        text = unicodedata.normalize("NFKC", text)
    if config.casefold:
        text = text.casefold()
        if config.nfkc:
            # NOTE: casefolding can produce text that is not NFKC-stable (rare compatibility
            # characters); a second pass makes normalize() idempotent.
            text = unicodedata.normalize("NFKC", text)
    return text


def is_segmented(char: str) -> bool:
    """Whether `char` belongs to a script whose characters are one token each."""
    return _SEGMENTED_RE.fullmatch(char) is not None


def tokenize(text: str, config: NormConfig = DEFAULT_NORM) -> list[str]:
    """Split `text` into normalized tokens.

    >>> tokenize("The cat's “hat”, ＴＨＥ end!")
    ['the', 'cat', 's', 'hat', 'the', 'end']
    >>> tokenize("東京は晴れ")
    ['東', '京', 'は', '晴', 'れ']
    >>> tokenize("ΟΔΟΣ οδος")
    ['οδοσ', 'οδοσ']
    """
    return _patterns()[0].findall(_token_text(text, config))


def _token_text(text: str, config: NormConfig) -> str:
    """The text the token pattern reads: `text` without its format characters (removed first,
    so that one between a letter and its accent does not keep them from composing), then
    normalized."""
    if not text.isascii():
        text = _patterns()[1].sub("", text)
    return normalize(text, config)


def token_spans(
    text: str, config: NormConfig = DEFAULT_NORM, stop: int | None = None
) -> list[tuple[int, int]]:
    """Character offsets ``(start, end)`` in the ORIGINAL `text` of each token of :func:`tokenize`.

    Used for evidence, not on the hot path. Normalization can change lengths ("ﬁ" -> "fi"), so
    offsets are found by normalizing growing prefixes of each non-ASCII word; a token that starts
    or ends inside one original character maps to that whole character; format characters
    inside a token are inside its span, those before or after it are not. `stop`: only the
    first `stop` tokens are needed.

    >>> t = "Ｔｈｅ ﬁsh"
    >>> [t[a:b] for a, b in token_spans(t)]
    ['Ｔｈｅ', 'ﬁsh']
    """
    if text.isascii():  # NOTE: normalization never moves a token boundary in ASCII text
        return [m.span() for m in islice(_ASCII_TOKEN_RE.finditer(text), stop)]
    spans: list[tuple[int, int]] = []
    for word in _WORD_RE.finditer(text):
        if stop is not None and len(spans) >= stop:
            break
        start, chunk = word.start(), word.group()
        if chunk.isascii() or counted_as_one_token(chunk, config):
            # Separators split words: an ASCII word, or one made only of letters and digits of
            # spaced scripts, before and after normalization ("café"), is exactly one token.
            spans.append(word.span())
            continue
        spans.extend((start + a, start + b) for a, b in _nonascii_spans(chunk, config))
    return spans if stop is None else spans[:stop]


def token_range(
    text: str, first: int, last: int, config: NormConfig = DEFAULT_NORM
) -> tuple[int, int]:
    """Character offsets in `text` from the start of token `first` to the end of token `last`.

    Equal to ``(token_spans(text)[first][0], token_spans(text)[last][1])``, but word boundaries
    come from numpy over the code points, so only words with several tokens are looked at in
    Python: fast enough to run for every finding of a heavily contaminated eval set.

    >>> t = "The ﬁsh, “東京” and café."
    >>> a, b = token_range(t, 1, 3)
    >>> t[a:b]
    'ﬁsh, “東京'
    """
    starts, ends, special = _words(text)
    counts = np.ones(len(starts), dtype=np.int64)
    before = 0  # tokens before the current special word, for an early stop after `last`
    prev = 0
    for w in special.tolist():
        before += w - prev
        if before > last:
            break
        chunk = text[starts[w] : ends[w]]
        if not counted_as_one_token(chunk, config):
            counts[w] = len(tokenize(chunk, config))
        before += int(counts[w])
        prev = w + 1
    ends_tok = np.cumsum(counts)
    return (
        _token_edge(text, first, 0, starts, ends, ends_tok, counts, config),
        _token_edge(text, last, 1, starts, ends, ends_tok, counts, config),
    )


def token_span_array(text: str, config: NormConfig = DEFAULT_NORM) -> np.ndarray:
    """:func:`token_spans` as an array of shape (tokens, 2), int64.

    Word boundaries come from numpy (as in :func:`token_range`) and only words that may hold
    several tokens are split in Python: a long document's spans cost 16 bytes a token, where
    the list of tuples costs about 120.
    """
    starts, ends, special = _words(text)
    counts = np.ones(len(starts), dtype=np.int64)
    split: dict[int, np.ndarray] = {}
    for w in special.tolist():
        a, b = int(starts[w]), int(ends[w])
        chunk = text[a:b]
        if not counted_as_one_token(chunk, config):
            split[w] = np.array(_nonascii_spans(chunk, config), dtype=np.int64).reshape(-1, 2) + a
            counts[w] = len(split[w])
    if not split:
        return np.stack([starts, ends], axis=1)
    first = np.cumsum(counts) - counts  # the row of each word's first token
    out = np.empty((int(counts.sum()), 2), dtype=np.int64)
    whole = np.ones(len(starts), dtype=bool)
    whole[list(split)] = False
    out[first[whole], 0], out[first[whole], 1] = starts[whole], ends[whole]
    for w, rows in split.items():
        out[first[w] : first[w] + len(rows)] = rows
    return out


def _words(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every word of `text` (a run of non-separators): start and end offsets, and the indices of
    the words holding a non-ASCII character (the only ones that may not be one token).

    A text longer than _WORDS_CHUNK characters is taken in pieces cut before a separator (no
    word spans one), so the temporaries are a piece's, not the whole text's.
    """
    if len(text) <= _WORDS_CHUNK:
        return _piece_words(text)
    parts = []
    base = words = 0
    while base < len(text):
        found = _SEPARATOR_RE.search(text, base + _WORDS_CHUNK)
        end = found.start() if found is not None else len(text)
        starts, ends, special = _piece_words(text[base:end])
        parts.append((starts + base, ends + base, special + words))
        base, words = end, words + len(starts)
    return (
        np.concatenate([p[0] for p in parts]),
        np.concatenate([p[1] for p in parts]),
        np.concatenate([p[2] for p in parts]),
    )


def _piece_words(text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sep = np.zeros(len(cps) + 2, dtype=bool)
    sep[0] = sep[-1] = True
    inner = sep[1:-1]
    small = cps < 128
    inner[small] = _ASCII_SEPARATOR[cps[small]]
    for lo, hi in UNICODE_SEPARATOR_RANGES:
        inner |= (cps >= lo) & (cps <= hi)
    edges = np.flatnonzero(sep[1:] != sep[:-1])
    starts, ends = edges[0::2], edges[1::2]
    high = np.flatnonzero(~small & ~inner)  # non-ASCII characters inside words
    return starts, ends, np.unique(np.searchsorted(starts, high, side="right") - 1)


def _token_edge(
    text: str,
    tok: int,
    side: int,
    starts: Any,
    ends: Any,
    ends_tok: Any,
    counts: Any,
    config: NormConfig,
) -> int:
    """Start (side 0) or end (side 1) character offset of token number `tok`."""
    w = int(np.searchsorted(ends_tok, tok, side="right"))
    a, b = int(starts[w]), int(ends[w])
    inside = tok - (int(ends_tok[w]) - int(counts[w]))
    return a + word_token_edge(text[a:b], inside, int(counts[w]), side, config)


def counted_as_one_token(word: str, config: NormConfig = DEFAULT_NORM) -> bool:
    """Whether the non-ASCII `word` (a run of non-separators) is one token spanning the whole
    word, decided without tokenizing it: letters and digits only, before and after
    normalization, and no character of a script written without spaces ("café" is; "İstanbul"
    is not, casefolding gives "i̇stanbul", a combining dot: one token still, found the slow way).
    """
    if not word.isalnum() or _SEGMENTED_RE.search(word):
        return False
    norm = normalize(word, config)
    return norm.isalnum() and not _SEGMENTED_RE.search(norm)


def word_token_edge(
    word: str, inside: int, count: int, side: int, config: NormConfig = DEFAULT_NORM
) -> int:
    """Start (side 0) or end (side 1) offset in `word` of its token number `inside` (of `count`
    tokens), where :func:`token_range` puts it. `word` is a whole run of non-separators."""
    if count == 1 and counted_as_one_token(word, config):
        return 0 if side == 0 else len(word)
    spans = _nonascii_spans(word, config) if not word.isascii() else [(0, len(word))]
    return spans[inside][side]


def _nonascii_spans(chunk: str, config: NormConfig) -> list[tuple[int, int]]:
    # plen[j] = length of _token_text(chunk[:j]); maps normalized offsets back to original ones.
    # NOTE: only through cut points j whose prefix normalizes to a prefix of the whole word's
    # normalization: canonical reordering of combining marks can move a later character
    # before an earlier one ("a\u031b\u0301" -> "á\u031b"), and a cut elsewhere would leave
    # part of a token outside its span (found by fuzz/fuzz_text.py).
    norm = _token_text(chunk, config)
    prefixes = [_token_text(chunk[:j], config) for j in range(len(chunk) + 1)]
    plen = [len(p) for p in prefixes]
    cuts = [j for j, p in enumerate(prefixes) if norm.startswith(p)]
    out = []
    for m in _patterns()[0].finditer(norm):
        a = max(j for j in cuts if plen[j] <= m.start())
        b = min(j for j in cuts if plen[j] >= m.end())
        while b < len(chunk) and plen[b + 1] == plen[b]:  # trailing combining marks
            b += 1
        while b > a + 1 and unicodedata.category(chunk[b - 1]) == "Cf":  # NOTE: a format
            b -= 1  # character after a token is outside it, as one before it is (max above)
        out.append((a, max(b, a + 1)))
    return out


# A "word" is a maximal run of characters that are not separators: ASCII ones and
# UNICODE_SEPARATOR_RANGES. They can never be part of, or join, tokens, so each word is
# tokenized on its own.
_SEPARATORS = r"\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f" + _char_class(UNICODE_SEPARATOR_RANGES)
_WORD_RE = re.compile(f"[^{_SEPARATORS}]+")
_SEPARATOR_RE = re.compile(f"[{_SEPARATORS}]")
_ASCII_TOKEN_RE = re.compile(r"[0-9A-Za-z]+")
_ASCII_SEPARATOR = np.array([not chr(c).isalnum() for c in range(128)])
_WORDS_CHUNK = 1 << 22  # characters
