"""Planting leaked text into corpus documents, so that no match can run past the plant.

A plant goes between two words of a document, with a separator on each side, at a gap where the
corpus tokens next to it differ from the example's tokens next to the planted span; a planted
span of k tokens then matches exactly k tokens. This module holds the throughput generator's eval
set and plants (:mod:`contam_cli.features.bench.generate`) and the labelled generator's
:class:`Host` documents (:mod:`contam_cli.features.bench.labelled`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from contam_cli.features.bench import textmodel as tm
from contam_cli.features.bench.edits import ngrams
from contam_cli.features.bench.textmodel import Draft, TextModel
from contam_cli.text import token_spans, tokenize

__all__ = [
    "CATEGORIES",
    "EXPECTED_FLAG",
    "Host",
    "boilerplate_sentence",
    "category_counts",
    "exact_token_span",
    "insert_sentence",
    "insert_plants",
    "make_eval_set",
    "make_plants",
    "normalize_plain",
    "place_anywhere",
    "spread",
]

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


def normalize_plain(text: str) -> str:
    """The ``full_norm`` plant: lower-cased, punctuation to spaces, whitespace collapsed.

    Token boundaries are the project tokenizer's (:func:`contam_cli.text.token_spans`); each
    token keeps its original characters, lower-cased, and tokens that touch (scripts written
    without spaces) stay together.

    >>> normalize_plain("“Don’t,” she said—twice. 日本, ½")
    'don t she said twice 日本 ½'
    """
    out: list[str] = []
    end = -1
    for a, b in token_spans(text):
        if a < end:  # NOTE: another token of the same character ("½" is "1", "2")
            continue
        if out and a > end:
            out.append(" ")
        out.append(text[a:b].lower())
        end = b
    return "".join(out)


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
# The throughput generator's eval set and plants


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


def exact_token_span(words: list[str], n_tokens: int, rng: np.random.Generator) -> tuple[int, int]:
    """A span [s, e) of whole words strictly inside ``words`` holding exactly ``n_tokens``
    tokens (falls back to ``n_tokens`` words from the second if no span has that count)."""
    cum = np.concatenate(([0], np.cumsum([len(tokenize(w)) for w in words])))
    starts = np.arange(1, len(words) - 1)
    ends = np.searchsorted(cum, cum[starts] + n_tokens)
    ok = (ends <= len(words) - 1) & (cum[np.minimum(ends, len(words))] == cum[starts] + n_tokens)
    s = int(rng.choice(starts[ok])) if ok.any() else 1
    return s, (int(ends[s - 1]) if ok.any() else s + n_tokens)


def _span(words: list[str], category: str, rng: np.random.Generator) -> tuple[int, int]:
    """Whitespace-word span [s, e) strictly inside the example: 40 words, or exactly 12 tokens."""
    if category == "partial40":
        s = int(rng.integers(1, max(2, len(words) - PARTIAL_WORDS)))
        return s, s + PARTIAL_WORDS
    return exact_token_span(words, NEAR_TOKENS, rng)


def _plant(i: int, ex: Example, rng: np.random.Generator) -> Plant:
    if ex.category == "full":
        return Plant(i, ex.text, None, None, 0, None)
    if ex.category == "full_norm":
        return Plant(i, normalize_plain(ex.text), None, None, 0, None)
    words = ex.text.split(" ")
    s, e = _span(words, ex.category, rng)
    before = tokenize(words[s - 1])[-1] if s > 0 else None
    after = tokenize(words[e])[0] if e < len(words) else None
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
    if plant.before is not None and (t := tokenize(left)) and t[-1] == plant.before:
        return True
    return plant.after is not None and bool(t := tokenize(right)) and t[0] == plant.after


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
# The labelled generator's host documents

Block = tuple[set[str], set[str]] | None
"""Tokens that must not come just before, and just after, a plant."""
SENTENCE_ENDS = (".", "?", "”")


class Host:
    """A corpus document as words, with plants inserted into distinct gaps between them."""

    def __init__(self, text: str) -> None:
        self.words = text.split(" ")
        self.inserts: dict[int, tuple[str, str]] = {}

    def place(
        self,
        text: str,
        rng: np.random.Generator,
        block: Block = None,
        sep: str = " ",
        sentence: bool = False,
    ) -> int | None:
        """Insert ``text`` at a free gap (at a sentence boundary if ``sentence``, else strictly
        inside) whose neighbour tokens are not in ``block``; return the gap, or None."""
        n = len(self.words)
        lo, hi = (0, n) if sentence else (1, n - 1)
        for g in rng.integers(lo, hi + 1, size=48).tolist():
            if g in self.inserts or (
                sentence and g and not self.words[g - 1].endswith(SENTENCE_ENDS)
            ):
                continue
            if block and (
                (g > 0 and tokenize(self.words[g - 1])[-1] in block[0])
                or (g < n and tokenize(self.words[g])[0] in block[1])
            ):
                continue
            self.inserts[g] = (text, sep)
            return g
        return None

    def edges(self, g: int) -> tuple[set[str], set[str]]:
        """The tokens just before and just after gap ``g`` (empty at the document's ends)."""
        before = {tokenize(self.words[g - 1])[-1]} if g > 0 else set()
        return before, ({tokenize(self.words[g])[0]} if g < len(self.words) else set())

    def adds(self, gap: int, grams: set[tuple[str, ...]], n: int) -> bool:
        """Whether the plant at ``gap`` adds any of ``grams`` (n-grams) to the document."""
        here = grams & ngrams(tokenize(self.render()), n)
        return bool(here - ngrams(tokenize(self.render(skip=gap)), n))

    def render(self, skip: int | None = None) -> str:
        """The document with its plants (but not the one at gap ``skip``); a plant whose
        separator is a newline gets newlines on both sides."""
        chunks: list[tuple[str, str]] = []
        prev = 0
        for g in sorted(self.inserts):
            if g != skip:
                if g > prev:
                    chunks.append((" ".join(self.words[prev:g]), " "))
                chunks.append(self.inserts[g])
                prev = g
        if prev < len(self.words):
            chunks.append((" ".join(self.words[prev:]), " "))
        out = [chunks[0][0]]
        for (_, left), (text, sep) in zip(chunks, chunks[1:]):
            out.extend(("\n" if "\n" in (left, sep) else " ", text))
        return "".join(out)


def place_anywhere(
    hosts: list[Host], text: str, rng: np.random.Generator, block: Block = None, sep: str = " "
) -> tuple[int, int]:
    """Plant ``text`` into a random one of ``hosts`` (see :meth:`Host.place`): (host, gap)."""
    for _ in range(200):
        h = int(rng.integers(len(hosts)))
        gap = hosts[h].place(text, rng, block, sep)
        if gap is not None:
            return h, gap
    raise RuntimeError("no room left for a plant; use more or longer corpus documents")


def spread(
    sentence: str, hosts: list[Host], copies: int, rng: np.random.Generator, block: Block
) -> list[int]:
    """Place ``sentence`` at a sentence boundary of ``copies`` hosts (tried in random order);
    the hosts that took it."""
    got: list[int] = []
    for h in rng.permutation(len(hosts)).tolist():
        if len(got) == copies:
            break
        if hosts[h].place(sentence, rng, block, sentence=True) is not None:
            got.append(h)
    return got


def boilerplate_sentence(
    model: TextModel, rng: np.random.Generator, words: int, quote: bool
) -> str:
    """One sentence of ``words`` words: licence-like (plain) or quote-like (in curly quotes)."""
    draft = model.drafts(rng, np.array([words]))[0]
    form, suffix = np.full(words, tm.PLAIN), draft.suffix.copy()
    form[0] = tm.QUOTE_CAP if quote else tm.CAP
    suffix[suffix >= tm.STOP] = tm.SPACE
    suffix[-1] = tm.QUOTE_STOP if quote else tm.STOP
    return Draft(draft.ids, form, suffix).text(model)


def insert_sentence(
    text: str, sentence: str, rng: np.random.Generator
) -> tuple[str, tuple[set[str], set[str]]]:
    """``text`` with ``sentence`` at one of its sentence boundaries (else at the end), and the
    tokens just before and after it there."""
    body = Host(text)
    gap = body.place(sentence, rng, sentence=True)
    if gap is None:
        gap = len(body.words)
        body.inserts[gap] = (sentence, " ")
    return body.render(), body.edges(gap)
