"""Deterministic synthetic corpus and eval set, with planted leaks, for benchmarking scanners.

    python -m contam_cli.features.bench.generate --out DIR --mb 200 [--seed 1234] [--n-eval 1000]
        [--planted-frac F] [--shard-mb 32] [--reuse]

Writes, under ``DIR``:

- ``corpus/shard_00000.jsonl`` ...: ``{"id", "text"}``, one document (200-8000 characters,
  log-uniform) per line, about ``--mb`` MB of files in all;
- ``eval.jsonl``: ``{"id": "e00000", "text"}``, examples of 30-120 words;
- ``labels.jsonl``: ``{"id", "category", "planted", "expected_flag", "doc", "span_words"}``;
- ``meta.json``: parameters, sizes and counts, written last and free of timestamps, so the same
  parameters give byte-identical files.

Text is English-like: a Zipf-distributed vocabulary of English function words and syllable-built
words, of which about 2% of occurrences carry non-ASCII letters (accents, some in NFD form, Greek,
ligatures, full-width forms), with punctuation, curly quotes, em dashes and capitalised sentence
starts; about 0.5% of documents are Chinese or Japanese (no spaces). Corpus and eval text share a
pool of 3-8-word phrases, always separated by at least one random filler word, so short innocent
overlaps are common while chance 13-gram collisions are not.

Eval categories (default shares of the eval set; ``--planted-frac`` rescales the planted ones):

- ``full`` 8%: the whole example inserted verbatim into one corpus document;
- ``full_norm`` 2%: inserted lower-cased with punctuation stripped (a normalising scanner finds it);
- ``partial40`` 5%: one 40-word span inserted verbatim;
- ``near12`` 5%: one span of exactly 12 tokens inserted, a hard negative at n = 13;
- ``clean``: the rest, not planted.

Plants go between two words of a document, with a space on each side, where the neighbouring
corpus tokens differ from the example's tokens around the span, so no match can run past it.
``expected_flag`` follows the default flag rules (overlap >= 0.5 or a run >= 30 tokens at n = 13).
"""

from __future__ import annotations

import argparse
import math
import random
import re
import string
import sys
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import orjson

__all__ = ["CATEGORIES", "EXPECTED_FLAG", "category_counts", "generate", "tokens"]

FORMAT_VERSION = 1
"""Bumped whenever the same parameters would give different files."""

# NOTE: integer weights (per 100 examples), so category counts are exact, never float-rounded.
CATEGORY_WEIGHTS = {"full": 8, "full_norm": 2, "partial40": 5, "near12": 5}
DEFAULT_PLANTED_FRAC = sum(CATEGORY_WEIGHTS.values()) / 100
CATEGORIES = (*CATEGORY_WEIGHTS, "clean")
EXPECTED_FLAG = {
    "full": True,
    "full_norm": True,
    "partial40": True,
    "near12": False,
    "clean": False,
}
PARTIAL_WORDS = 40
NEAR_TOKENS = 12

VOCAB_SIZE = 30_000
N_PHRASES = 20_000
WORD_ZIPF = 1.05
PHRASE_ZIPF = 0.8
NON_ASCII_SHARE = 0.02
CJK_DOC_EVERY = 200  # documents 3, 203, 403, ... (0.5%, and one in even a tiny corpus)
DOC_CHARS = (200, 8000)
CHUNK_DOCS = 256

FUNCTION_WORDS = """
the of and to a in is that it was for on as with he be at by they this had from or not but have
are his an were which one all we there her she been when can their if will would who so no out
up what said them about more into some only could then its than time other two my first these
may over also any new like after our your him most did way made many before very through much
me must well down should where such because just how each those even back still here between
off own both under while might never same last us every again few around until always often
once since why yet upon among toward across against during without within however another
don't it's isn't can't won't didn't doesn't that's there's they're you're we're don’t it’s
""".split()
N_FUNCTION = len(dict.fromkeys(FUNCTION_WORDS))

ONSETS = (
    "",
    "",
    "b",
    "bl",
    "br",
    "c",
    "ch",
    "cl",
    "cr",
    "d",
    "dr",
    "f",
    "fl",
    "fr",
    "g",
    "gl",
    "gr",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "ph",
    "pl",
    "pr",
    "qu",
    "r",
    "s",
    "sc",
    "sh",
    "sk",
    "sl",
    "sm",
    "sn",
    "sp",
    "st",
    "str",
    "sw",
    "t",
    "th",
    "tr",
    "v",
    "w",
    "wh",
    "z",
)
NUCLEI = (
    "a",
    "a",
    "e",
    "e",
    "i",
    "o",
    "u",
    "ai",
    "au",
    "ay",
    "ea",
    "ee",
    "ei",
    "ie",
    "oa",
    "oi",
    "oo",
    "ou",
    "y",
)
CODAS = (
    "",
    "",
    "",
    "",
    "b",
    "ck",
    "d",
    "ft",
    "g",
    "k",
    "l",
    "ld",
    "lt",
    "m",
    "mp",
    "n",
    "nd",
    "ng",
    "nk",
    "nt",
    "p",
    "r",
    "rd",
    "rm",
    "rn",
    "rt",
    "s",
    "sh",
    "sp",
    "ss",
    "st",
    "t",
    "th",
    "x",
)
ENDINGS = ("",) * 10 + (
    "s",
    "ed",
    "ing",
    "er",
    "est",
    "ly",
    "ness",
    "ment",
    "ful",
    "less",
    "ity",
    "ous",
    "ive",
    "al",
    "ist",
    "ion",
)

ACCENTS = {
    "a": "áàâäåã",
    "e": "éèêë",
    "i": "íìîï",
    "o": "óòôöøõ",
    "u": "úùûü",
    "c": "ç",
    "n": "ñ",
    "y": "ý",
}
GREEK_ONSETS = (
    "",
    "β",
    "γ",
    "δ",
    "θ",
    "κ",
    "λ",
    "μ",
    "ν",
    "ξ",
    "π",
    "ρ",
    "σ",
    "τ",
    "φ",
    "χ",
    "ψ",
    "ζ",
)
GREEK_VOWELS = (
    "α",
    "ε",
    "η",
    "ι",
    "ο",
    "υ",
    "ω",
    "ά",
    "έ",
    "ή",
    "ί",
    "ό",
    "ύ",
    "ώ",
    "αι",
    "ου",
    "ει",
)
LIGATURES = {"ffi": "ﬃ", "ffl": "ﬄ", "fi": "ﬁ", "fl": "ﬂ", "ff": "ﬀ"}
NON_ASCII_STYLES = ("accent", "nfd", "greek", "ligature", "fullwidth", "angstrom")
NON_ASCII_WEIGHTS = (55, 10, 20, 6, 6, 3)

# Word forms, then the suffix (punctuation plus separator) that follows each word.
PLAIN, CAP, QUOTE_CAP = 0, 1, 2
SUFFIXES = (" ", ", ", "—", "; ", "’s ", ". ", "? ", ".” ")
SPACE, COMMA, DASH, SEMI, POSS, STOP, QUESTION, QUOTE_STOP = range(8)
# Suffix of a word inside a sentence, by a uniform draw from 1000 cells: 5.5% comma, 0.5% em
# dash, 0.4% semicolon, 1% possessive (content words only), the rest a plain space.
MID_SUFFIX_TABLE = np.repeat(
    np.array([COMMA, DASH, SEMI, POSS, SPACE], dtype=np.int64), [55, 5, 4, 10, 926]
)
QUOTE_RATE = 0.04
QUESTION_RATE = 0.08

HIRAGANA = np.arange(0x3041, 0x3094, dtype=np.uint32)
KATAKANA = np.append(np.arange(0x30A1, 0x30F7, dtype=np.uint32), 0x30FC)
HAN_RANGE = (0x4E00, 0x9FA6)
CJK_PUNCT = np.array([0xFF0C, 0x3001, 0x3002], dtype=np.uint32)  # ， 、 。

_SPACELESS = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u2e80-\u2fdf\u3005\u3007\u3040-\u30ff"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
)
_TOKEN_RE = re.compile(f"[{_SPACELESS}]|[^\\W_{_SPACELESS}]+")
_PUNCT_TO_SPACE = str.maketrans(dict.fromkeys(string.punctuation + "“”‘’—–…", " "))


def tokens(text: str) -> list[str]:
    """Scanner tokens (NFKC, casefold, letter/digit runs, one per CJK character).

    Used here only to keep planted spans from extending; it follows DESIGN §3.

    >>> tokens("Ｃafé’s “naïve” ﬁx—日本")
    ['café', 's', 'naïve', 'fix', '日', '本']
    """
    return _TOKEN_RE.findall(unicodedata.normalize("NFKC", text).casefold())


def normalize_plain(text: str) -> str:
    """Lower-case, punctuation to spaces, whitespace collapsed: the ``full_norm`` plant.

    >>> normalize_plain("“Don’t,” she said—twice.")
    'don t she said twice'
    """
    return " ".join(text.lower().translate(_PUNCT_TO_SPACE).split())


def category_counts(n_eval: int, planted_frac: float | None = None) -> dict[str, int]:
    """Examples per category: planted ones keep the default proportions and sum to the fraction.

    >>> category_counts(60)
    {'full': 5, 'full_norm': 1, 'partial40': 3, 'near12': 3, 'clean': 48}
    """
    frac = DEFAULT_PLANTED_FRAC if planted_frac is None else planted_frac
    planted = math.floor(frac * n_eval + 0.5)
    weight_sum = sum(CATEGORY_WEIGHTS.values())
    counts = {k: w * planted // weight_sum for k, w in CATEGORY_WEIGHTS.items()}
    by_remainder = sorted(
        CATEGORY_WEIGHTS, key=lambda k: -(CATEGORY_WEIGHTS[k] * planted % weight_sum)
    )
    for k in by_remainder[: planted - sum(counts.values())]:
        counts[k] += 1
    counts["clean"] = n_eval - planted
    return counts


# ---------------------------------------------------------------------------------------------
# Vocabulary


def _zipf(n: int, s: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    return p / p.sum()


def _syllable_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` candidate words of 1-3 syllables plus an ending (duplicates possible)."""
    parts = [
        np.array(t, dtype=object)[rng.integers(len(t), size=(3, n))]
        for t in (ONSETS, NUCLEI, CODAS)
    ]
    syl = parts[0] + parts[1] + parts[2]
    k = rng.choice(3, size=n, p=[0.45, 0.45, 0.10])
    words = syl[0] + np.where(k >= 1, syl[1], "") + np.where(k >= 2, syl[2], "")
    words = words + np.array(ENDINGS, dtype=object)[rng.integers(len(ENDINGS), size=n)]
    return words.tolist()


def _base_vocab(rng: np.random.Generator, size: int) -> list[str]:
    """Function words first (the most frequent ranks), then syllable words, shortest first."""
    vocab = dict.fromkeys(FUNCTION_WORDS)
    while len(vocab) < size:
        for w in _syllable_words(rng, size):
            if len(w) >= 2 and len(vocab) < size:
                vocab.setdefault(w)
    words = list(vocab)
    # NOTE: shorter words take the more frequent ranks, as in natural language.
    return words[:N_FUNCTION] + sorted(words[N_FUNCTION:], key=len)


def _accent(word: str, r: random.Random) -> str:
    spots = [i for i, c in enumerate(word) if c in ACCENTS]
    if not spots:
        return word + "é"
    chars = list(word)
    for i in r.sample(spots, k=min(len(spots), r.choice((1, 1, 2)))):
        chars[i] = r.choice(ACCENTS[chars[i]])
    out = "".join(chars)
    return out.replace("ss", "ß", 1) if r.random() < 0.3 else out


def _greek(r: random.Random) -> str:
    word = "".join(r.choice(GREEK_ONSETS) + r.choice(GREEK_VOWELS) for _ in range(r.randint(2, 3)))
    word += r.choice(("", "", "ς", "ν", "ς"))
    return word


def _ligature(word: str, r: random.Random) -> str:
    for plain, lig in LIGATURES.items():
        if plain in word:
            return word.replace(plain, lig, 1)
    return "ﬁ" + word if r.random() < 0.5 else word + "ﬂ"


def _non_ascii(word: str, r: random.Random) -> str:
    """One non-ASCII variant of ``word``; a normalising scanner must tokenise each consistently."""
    style = r.choices(NON_ASCII_STYLES, weights=NON_ASCII_WEIGHTS)[0]
    if style == "nfd":
        return unicodedata.normalize("NFD", _accent(word, r))
    if style == "greek":
        return _greek(r)
    if style == "ligature":
        return _ligature(word, r)
    if style == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in word)
    if style == "angstrom":
        return "\u212b" + word[1:] if word[0] == "a" else "\u212b" + word  # NFKC: Å
    return _accent(word, r)


def _with_non_ascii(words: list[str], probs: np.ndarray, rng: np.random.Generator) -> list[str]:
    """Give random non-function words non-ASCII letters until they hold ~2% of occurrences."""
    first = N_FUNCTION
    order = first + rng.permutation(len(words) - first)
    n = int(np.searchsorted(np.cumsum(probs[order]), NON_ASCII_SHARE)) + 1
    r = random.Random(int(rng.integers(2**62)))
    out = list(words)
    for i in order[:n].tolist():
        out[i] = _non_ascii(words[i], r)
    return out


def _capitalized(word: str) -> str:
    # NOTE: not str.capitalize(), which would also lower-case a non-initial U+212B; title case
    # turns a leading "ﬁ" into "Fi", where upper case would give "FI".
    return word[:1].title() + word[1:]


# ---------------------------------------------------------------------------------------------
# Text model


@dataclass(frozen=True)
class Sampler:
    """Draws from a fixed discrete distribution via a quantised inverse-CDF table (2^21 cells)."""

    table: np.ndarray

    @classmethod
    def from_probs(cls, probs: np.ndarray, bits: int = 21) -> Sampler:
        edges = np.rint(np.cumsum(probs) / probs.sum() * (1 << bits)).astype(np.int64)
        return cls(np.repeat(np.arange(len(probs), dtype=np.int32), np.diff(edges, prepend=0)))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.table[rng.integers(0, len(self.table), size=size, dtype=np.uint32)]


@dataclass(frozen=True)
class TextModel:
    """Vocabulary, phrase pool and character tables; renders token ids into documents."""

    words: list[str]
    pieces: np.ndarray
    """Object array: ``pieces[(form * len(SUFFIXES) + suffix) * V + id]`` is a word in one of
    its forms (plain, Capitalised, “Capitalised) followed by one of the suffixes."""
    word_sampler: Sampler
    phrase_len: np.ndarray
    phrase_start: np.ndarray
    phrase_flat: np.ndarray
    phrase_sampler: Sampler
    han: np.ndarray
    han_sampler: Sampler
    chars_per_token: float

    @classmethod
    def build(cls, rng: np.random.Generator) -> TextModel:
        probs = _zipf(VOCAB_SIZE, WORD_ZIPF)
        words = _with_non_ascii(_base_vocab(rng, VOCAB_SIZE), probs, rng)
        caps = [_capitalized(w) for w in words]
        pieces = np.array(
            [
                w + sfx
                for form in (words, caps, ["“" + c for c in caps])
                for sfx in SUFFIXES
                for w in form
            ],
            dtype=object,
        )
        word_sampler = Sampler.from_probs(probs)
        phrase_len = rng.integers(3, 9, size=N_PHRASES)
        phrase_flat = word_sampler.draw(rng, int(phrase_len.sum()))
        han = HAN_RANGE[0] + rng.permutation(HAN_RANGE[1] - HAN_RANGE[0])[:3000].astype(np.uint32)
        lengths = np.array([len(w) for w in words], dtype=np.float64)
        return cls(
            words=words,
            pieces=pieces,
            word_sampler=word_sampler,
            phrase_len=phrase_len,
            phrase_start=np.cumsum(phrase_len) - phrase_len,
            phrase_flat=phrase_flat,
            phrase_sampler=Sampler.from_probs(_zipf(N_PHRASES, PHRASE_ZIPF)),
            han=han,
            han_sampler=Sampler.from_probs(_zipf(len(han), 1.0)),
            chars_per_token=float(probs @ lengths) + 1.12,
        )

    def stream(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` word ids: phrases from the pool alternating with runs of 1-6 filler words."""
        n_seg = n // 3 + 64
        while True:
            is_phrase = rng.random(n_seg) < 0.5
            is_phrase[1:] &= ~is_phrase[:-1]  # a phrase is always followed by filler
            pid = self.phrase_sampler.draw(rng, n_seg)
            seg_len = np.where(is_phrase, self.phrase_len[pid], rng.integers(1, 7, size=n_seg))
            if seg_len.sum() >= n:
                break
            n_seg *= 2
        seg = np.repeat(np.arange(n_seg), seg_len)[:n]
        within = np.arange(n) - (np.cumsum(seg_len) - seg_len)[seg]
        src = np.minimum(self.phrase_start[pid[seg]] + within, len(self.phrase_flat) - 1)
        return np.where(is_phrase[seg], self.phrase_flat[src], self.word_sampler.draw(rng, n))

    def render(self, ids: np.ndarray, lengths: np.ndarray, rng: np.random.Generator) -> list[str]:
        """Punctuated text of consecutive documents of ``lengths`` words each."""
        n = len(ids)
        doc_end = np.cumsum(lengths)
        is_end = np.zeros(n, dtype=bool)
        gaps = np.cumsum(rng.integers(5, 25, size=n // 5 + 2)) - 1
        is_end[gaps[gaps < n]] = True
        is_end[doc_end - 1] = True
        is_start = np.concatenate(([True], is_end[:-1]))
        sentence = np.cumsum(is_start) - 1
        quoted = (rng.random(int(sentence[-1]) + 1) < QUOTE_RATE)[sentence]
        form = np.where(is_start, np.where(quoted, QUOTE_CAP, CAP), PLAIN)
        suffix = self._suffixes(ids, rng, is_end, quoted)
        pieces = self.pieces[(form * len(SUFFIXES) + suffix) * len(self.words) + ids]
        bounds = np.concatenate(([0], doc_end)).tolist()
        # NOTE: every document ends on a sentence end, whose suffix has one trailing space.
        return ["".join(pieces[a:b].tolist())[:-1] for a, b in zip(bounds, bounds[1:])]

    def _suffixes(
        self, ids: np.ndarray, rng: np.random.Generator, is_end: np.ndarray, quoted: np.ndarray
    ) -> np.ndarray:
        draws = rng.integers(0, len(MID_SUFFIX_TABLE), size=len(ids), dtype=np.uint16)
        suffix = MID_SUFFIX_TABLE[draws]
        suffix[(suffix == POSS) & (ids < N_FUNCTION)] = SPACE
        question = rng.random(int(is_end.sum())) < QUESTION_RATE
        suffix[is_end] = np.where(quoted[is_end], QUOTE_STOP, np.where(question, QUESTION, STOP))
        return suffix

    def cjk_text(self, rng: np.random.Generator, n_chars: int) -> str:
        """Chinese (Han only) or Japanese (hiragana, katakana, kanji) text without spaces."""
        han = self.han[self.han_sampler.draw(rng, n_chars)]
        if rng.random() < 0.5:
            script = rng.choice(3, size=n_chars, p=[0.45, 0.2, 0.35])
            kana = np.where(
                script == 0,
                HIRAGANA[rng.integers(len(HIRAGANA), size=n_chars)],
                KATAKANA[rng.integers(len(KATAKANA), size=n_chars)],
            )
            han = np.where(script == 2, han, kana)
        stops = np.cumsum(rng.integers(6, 30, size=n_chars // 6 + 1)) - 1
        stops = stops[stops < n_chars]
        han[stops] = CJK_PUNCT[rng.integers(len(CJK_PUNCT), size=len(stops))]
        han[-1] = CJK_PUNCT[-1]
        return han.astype("<u4").tobytes().decode("utf-32-le")


# ---------------------------------------------------------------------------------------------
# Eval set and plants


@dataclass(frozen=True)
class Example:
    id: str
    text: str
    category: str


@dataclass(frozen=True)
class Plant:
    """A string to insert into the corpus for one eval example."""

    example: int
    text: str
    before: str | None
    """The example's token just before the span (None: the span starts the example)."""
    after: str | None
    offset: int
    """Corpus byte offset: the document containing it receives the plant."""
    span_words: tuple[int, int] | None


def make_eval_set(
    model: TextModel, rng: np.random.Generator, counts: dict[str, int]
) -> list[Example]:
    """Shuffled examples of 30-120 words (60-120 for ``partial40``, so the span fits)."""
    cats = rng.permutation(np.repeat(np.array(CATEGORIES), [counts[c] for c in CATEGORIES]))
    low = np.where(cats == "partial40", 60, 30)
    lengths = rng.integers(low, 121)
    texts = model.render(model.stream(rng, int(lengths.sum())), lengths, rng)
    return [Example(f"e{i:05d}", t, str(c)) for i, (t, c) in enumerate(zip(texts, cats))]


def _span(words: list[str], category: str, rng: np.random.Generator) -> tuple[int, int]:
    """Whitespace-word span [s, e) strictly inside the example: 40 words, or exactly 12 tokens."""
    if category == "partial40":
        s = int(rng.integers(1, max(2, len(words) - PARTIAL_WORDS)))
        return s, s + PARTIAL_WORDS
    cum = np.concatenate(([0], np.cumsum([len(tokens(w)) for w in words])))
    starts = np.arange(1, len(words) - 1)
    ends = np.searchsorted(cum, cum[starts] + NEAR_TOKENS)
    ok = (ends <= len(words) - 1) & (cum[np.minimum(ends, len(words))] == cum[starts] + NEAR_TOKENS)
    s = int(rng.choice(starts[ok])) if ok.any() else 1
    return s, (int(ends[s - 1]) if ok.any() else s + NEAR_TOKENS)


def _plant(i: int, ex: Example, rng: np.random.Generator) -> Plant:
    if ex.category == "full":
        return Plant(i, ex.text, None, None, 0, None)
    if ex.category == "full_norm":
        return Plant(i, normalize_plain(ex.text), None, None, 0, None)
    words = ex.text.split(" ")
    s, e = _span(words, ex.category, rng)
    before = tokens(words[s - 1])[-1] if s > 0 else None
    after = tokens(words[e])[0] if e < len(words) else None
    return Plant(i, " ".join(words[s:e]), before, after, 0, (s, e))


def make_plants(
    examples: list[Example], rng: np.random.Generator, target_bytes: int
) -> tuple[list[Plant], int]:
    """One plant per planted example, sorted by a uniform offset into the generated text.

    Returns the plants and how many bytes to generate, so that with the plants (and the space
    that each brings) the corpus comes to about ``target_bytes``; but at least half of it is
    generated text, whatever the plants weigh.
    """
    plants = [_plant(i, ex, rng) for i, ex in enumerate(examples) if ex.category != "clean"]
    plant_bytes = sum(len(p.text.encode()) + 1 for p in plants)
    stream_bytes = max(target_bytes - plant_bytes, target_bytes // 2, 1)
    offsets = rng.integers(0, stream_bytes, size=len(plants)).tolist()
    placed = [replace(p, offset=o) for p, o in zip(plants, offsets)]
    return sorted(placed, key=lambda p: (p.offset, p.example)), stream_bytes


def _blocked(plant: Plant, left: str, right: str) -> bool:
    """Whether a neighbouring corpus token would extend the planted span."""
    if plant.before is not None and (t := tokens(left)) and t[-1] == plant.before:
        return True
    return plant.after is not None and bool(t := tokens(right)) and t[0] == plant.after


def insert_plants(
    text: str, plants: list[Plant], rng: np.random.Generator
) -> tuple[str, list[Plant], list[Plant]]:
    """Insert plants between distinct pairs of words; returns (text, placed, left over).

    At most half of the gaps between words receive a plant; the rest wait for the next document.
    """
    words = text.split(" ")
    chosen: dict[int, Plant] = {}
    left_over: list[Plant] = []
    for k, plant in enumerate(plants):
        if 2 * len(chosen) >= len(words) - 1:
            left_over.extend(plants[k:])
            break
        for gap in rng.integers(1, max(2, len(words)), size=8).tolist():
            if (
                gap < len(words)
                and gap not in chosen
                and not _blocked(plant, words[gap - 1], words[gap])
            ):
                chosen[gap] = plant
                break
        else:
            left_over.append(plant)
    if not chosen:
        return text, [], left_over
    out: list[str] = []
    prev = 0
    for gap in sorted(chosen):
        out.extend(words[prev:gap])
        out.append(chosen[gap].text)
        prev = gap
    out.extend(words[prev:])
    return " ".join(out), list(chosen.values()), left_over


# ---------------------------------------------------------------------------------------------
# Corpus


def iter_documents(model: TextModel, rng: np.random.Generator) -> Iterator[tuple[str, bool]]:
    """Endless (text, is_cjk) documents of 200-8000 characters, log-uniform."""
    lo, hi = math.log(DOC_CHARS[0]), math.log(DOC_CHARS[1])
    for first in range(0, sys.maxsize, CHUNK_DOCS):
        chars = np.exp(rng.uniform(lo, hi, size=CHUNK_DOCS))
        cjk = (first + np.arange(CHUNK_DOCS)) % CJK_DOC_EVERY == 3
        n_words = np.maximum(4, np.rint(chars / model.chars_per_token)).astype(np.int64)[~cjk]
        texts = iter(model.render(model.stream(rng, int(n_words.sum())), n_words, rng))
        for size, is_cjk in zip(chars.tolist(), cjk.tolist()):
            yield (model.cjk_text(rng, int(size)), True) if is_cjk else (next(texts), False)


class ShardWriter:
    """Writes JSONL lines into ``shard_00000.jsonl``, ... of about ``shard_bytes`` each."""

    def __init__(self, directory: Path, shard_bytes: int) -> None:
        self.directory = directory
        self.shard_bytes = shard_bytes
        self.lines: list[bytes] = []
        self.pending = 0
        self.shards = 0
        self.bytes = 0

    def add(self, line: bytes) -> None:
        self.lines.append(line)
        self.pending += len(line)
        if self.pending >= self.shard_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.lines:
            return
        (self.directory / f"shard_{self.shards:05d}.jsonl").write_bytes(b"".join(self.lines))
        self.shards += 1
        self.bytes += self.pending
        self.lines, self.pending = [], 0


def _line(doc_id: str, text: str) -> bytes:
    return orjson.dumps({"id": doc_id, "text": text}, option=orjson.OPT_APPEND_NEWLINE)


def write_corpus(
    model: TextModel,
    rng: np.random.Generator,
    place_rng: np.random.Generator,
    writer: ShardWriter,
    target_bytes: int,
    plants: list[Plant],
) -> dict:
    """Stream documents into shards until ``target_bytes`` (before plants) and every plant
    has a home."""
    queue = iter(plants)
    nxt = next(queue, None)
    pending: list[Plant] = []
    home: dict[int, str] = {}
    offset = docs = cjk_docs = 0
    for text, is_cjk in iter_documents(model, rng):
        doc_id = f"c{docs:09d}"
        line = _line(doc_id, text)
        offset += len(line)  # NOTE: plant offsets count bytes before insertion
        while nxt is not None and nxt.offset < offset:
            pending.append(nxt)
            nxt = next(queue, None)
        if pending and not is_cjk:
            text, placed, pending = insert_plants(text, pending, place_rng)
            home.update((p.example, doc_id) for p in placed)
            line = _line(doc_id, text) if placed else line
        writer.add(line)
        docs += 1
        cjk_docs += is_cjk
        if offset >= target_bytes and not pending and nxt is None:
            break
    writer.flush()
    return {"home": home, "documents": docs, "cjk_documents": cjk_docs}


# ---------------------------------------------------------------------------------------------
# Outputs


def _write_jsonl(path: Path, rows: list[dict]) -> int:
    data = b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in rows)
    path.write_bytes(data)
    return len(data)


def _labels(examples: list[Example], plants: list[Plant], home: dict[int, str]) -> list[dict]:
    spans = {p.example: list(p.span_words) for p in plants if p.span_words is not None}
    return [
        {
            "id": ex.id,
            "category": ex.category,
            "planted": ex.category != "clean",
            "expected_flag": EXPECTED_FLAG[ex.category],
            "doc": home.get(i),
            "span_words": spans.get(i),
        }
        for i, ex in enumerate(examples)
    ]


def _prepare(out: Path) -> Path:
    """Create ``out/corpus`` and remove what an earlier run left (stale shards, meta.json)."""
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").unlink(missing_ok=True)
    for old in corpus.glob("shard_*.jsonl"):
        old.unlink()
    return corpus


def _check_params(mb: float, n_eval: int, planted_frac: float | None, shard_mb: float) -> None:
    if not mb > 0 or not shard_mb > 0:
        raise ValueError("mb and shard_mb must be positive")
    if n_eval < 1:
        raise ValueError("n_eval must be at least 1")
    if planted_frac is not None and not 0 <= planted_frac <= 1:
        raise ValueError("planted_frac must be between 0 and 1")


def _params(mb: float, seed: int, n_eval: int, planted_frac: float | None, shard_mb: float) -> dict:
    frac = DEFAULT_PLANTED_FRAC if planted_frac is None else planted_frac
    return {
        "mb": float(mb),
        "seed": seed,
        "n_eval": n_eval,
        "shard_mb": float(shard_mb),
        "planted_frac": float(frac),
    }


def existing_meta(
    out: Path,
    mb: float,
    seed: int = 1234,
    n_eval: int = 1000,
    planted_frac: float | None = None,
    shard_mb: float = 32,
) -> dict | None:
    """The meta.json of a complete earlier run into ``out`` with these parameters, else None."""
    try:
        meta = orjson.loads((Path(out) / "meta.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    shards = len(list((Path(out) / "corpus").glob("shard_*.jsonl")))
    same = (
        meta.get("format_version") == FORMAT_VERSION
        and meta.get("params") == _params(mb, seed, n_eval, planted_frac, shard_mb)
        and meta.get("corpus", {}).get("shards") == shards
    )
    return meta if same else None


def generate(
    out: Path,
    mb: float,
    seed: int = 1234,
    n_eval: int = 1000,
    planted_frac: float | None = None,
    shard_mb: float = 32,
) -> dict:
    """Write corpus shards, eval set, labels and meta.json under ``out``; return the meta dict.

    The eval set depends only on ``seed``, ``n_eval`` and ``planted_frac`` (not on ``mb``).
    meta.json is written last, so a directory that has one holds a complete run.
    """
    _check_params(mb, n_eval, planted_frac, shard_mb)
    out = Path(out)
    vocab_ss, eval_ss, corpus_ss, place_ss = np.random.SeedSequence(seed).spawn(4)
    model = TextModel.build(np.random.default_rng(vocab_ss))
    eval_rng = np.random.default_rng(eval_ss)
    counts = category_counts(n_eval, planted_frac)
    examples = make_eval_set(model, eval_rng, counts)
    plants, stream_bytes = make_plants(examples, eval_rng, int(mb * 1e6))
    writer = ShardWriter(_prepare(out), int(shard_mb * 1e6))
    corpus = write_corpus(
        model,
        np.random.default_rng(corpus_ss),
        np.random.default_rng(place_ss),
        writer,
        stream_bytes,
        plants,
    )
    eval_bytes = _write_jsonl(out / "eval.jsonl", [{"id": e.id, "text": e.text} for e in examples])
    _write_jsonl(out / "labels.jsonl", _labels(examples, plants, corpus["home"]))
    meta = {
        "generator": "contam_cli.features.bench.generate",
        "format_version": FORMAT_VERSION,
        "params": _params(mb, seed, n_eval, planted_frac, shard_mb),
        "counts": counts,
        "corpus": {
            "bytes": writer.bytes,
            "documents": corpus["documents"],
            "cjk_documents": corpus["cjk_documents"],
            "shards": writer.shards,
        },
        "eval": {"bytes": eval_bytes, "examples": len(examples)},
    }
    (out / "meta.json").write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m contam_cli.features.bench.generate", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--out", type=Path, required=True, help="output directory")
    ap.add_argument("--mb", type=float, required=True, help="corpus size in MB (1e6 bytes)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--n-eval", type=int, default=1000, help="eval examples (default 1000)")
    ap.add_argument(
        "--planted-frac",
        type=float,
        default=None,
        help=f"share of planted examples (default {DEFAULT_PLANTED_FRAC:g})",
    )
    ap.add_argument("--shard-mb", type=float, default=32.0, help="shard size in MB (default 32)")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="keep OUT as it is if it already holds a run with these parameters",
    )
    a = ap.parse_args(argv)
    params = (a.out, a.mb, a.seed, a.n_eval, a.planted_frac, a.shard_mb)
    t0 = time.perf_counter()
    meta = existing_meta(*params) if a.reuse else None
    if meta is not None:
        sys.stdout.write(orjson.dumps(meta).decode() + "\n")
        print(f"generate: reusing {a.out} (same parameters)", file=sys.stderr)
        return 0
    try:
        meta = generate(*params)
    except ValueError as e:
        ap.error(str(e))
    seconds = time.perf_counter() - t0
    sys.stdout.write(orjson.dumps(meta).decode() + "\n")
    mb_written = meta["corpus"]["bytes"] / 1e6
    print(
        f"generate: {mb_written:.1f} MB in {seconds:.1f} s ({mb_written / seconds:.1f} MB/s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
