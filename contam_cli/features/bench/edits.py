"""How the labelled benchmark disguises a leak: synonyms, rewording, light edits, re-wrapping.

Words are edited as ids of a :class:`~contam_cli.features.bench.textmodel.TextModel` and
rendered again with the example's own punctuation and capitalization (a
:class:`~contam_cli.features.bench.textmodel.Draft`), so an edited example reads like the
original with some words changed.

- :func:`substitute` (``paraphrased``): a share of the words, at random positions, replaced by
  their synonyms.
- :func:`reword_hard` (``paraphrase_hard``): edits placed so that NO n-gram (n = 8) of the
  example's tokens survives anywhere in the reworded text; construction in its docstring.
- :func:`light_edit`: case, full-width forms and separators changed, tokens unchanged.
- :func:`rewrap`: hard-wrapped into short lines.

"Synonyms" (:meth:`Thesaurus.build`): ranks are cut into blocks of 8 (function words apart from
the other words), each block shuffled into a cycle; a word's synonym is the next word of its
cycle, so it has about the same frequency and is never the word itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contam_cli.features.bench.textmodel import N_FUNCTION, Draft, TextModel
from contam_cli.text import token_spans, tokenize

__all__ = ["Thesaurus", "light_edit", "ngrams", "reword_hard", "rewrap", "substitute"]

EDIT_SEPARATORS = (
    " ",
    "  ",
    ", ",
    " ; ",
    " - ",
    " -- ",
    "\t",
    " ... ",
    ' " ',
    " (",
    ") ",
    "! ",
    ": ",
    "' ",
    " / ",
    ",",
)
SWAP_RATE = 0.3
ANCHOR_GAP = (3, 6)


def ngrams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    """The distinct n-grams of ``tokens``."""
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


@dataclass(frozen=True)
class Thesaurus:
    """Each word's synonym and tokens."""

    syn: np.ndarray
    tokens: list[tuple[str, ...]]

    @classmethod
    def build(cls, model: TextModel, rng: np.random.Generator, block: int = 8) -> Thesaurus:
        n = len(model.words)
        syn = np.arange(n)
        for lo, hi in ((0, N_FUNCTION), (N_FUNCTION, n)):
            for a in range(lo, hi, block):
                members = a + rng.permutation(min(block, hi - a))
                syn[members] = np.roll(members, -1)
        return cls(syn, [tuple(tokenize(w)) for w in model.words])

    def differ(self, a: int, b: int) -> bool:
        return self.tokens[a] != self.tokens[b]


def substitute(draft: Draft, thesaurus: Thesaurus, rng: np.random.Generator, share: float) -> Draft:
    """``round(share * W)`` of the ``W`` words, at random positions, replaced by synonyms."""
    ids = draft.ids.copy()
    where = rng.choice(len(ids), size=round(share * len(ids)), replace=False)
    ids[where] = thesaurus.syn[ids[where]]
    return draft.with_ids(ids)


def _hard_ids(ids: np.ndarray, thesaurus: Thesaurus, rng: np.random.Generator) -> np.ndarray:
    out = ids.copy()
    p = int(rng.integers(0, ANCHOR_GAP[0] + 1))
    while p < len(ids):
        can_swap = p + 1 < len(ids) and thesaurus.differ(int(ids[p]), int(ids[p + 1]))
        synonym = int(thesaurus.syn[ids[p]])
        if can_swap and (rng.random() < SWAP_RATE or not thesaurus.differ(synonym, int(ids[p]))):
            out[p], out[p + 1] = ids[p + 1], ids[p]
        else:
            out[p] = synonym
        p += int(rng.integers(ANCHOR_GAP[0], ANCHOR_GAP[1] + 1))
    return out


def reword_hard(
    draft: Draft,
    model: TextModel,
    thesaurus: Thesaurus,
    rng: np.random.Generator,
    share: tuple[float, float] = (0.25, 0.35),
    n: int = 8,
) -> Draft:
    """Reword ``draft`` so that none of its token n-grams occurs in the result.

    Edit anchors: p[0] drawn from 0-3, then p[k+1] = p[k] + a gap drawn from 3-6, while
    p[k] < W (W words). At an anchor, w[p] is swapped with w[p+1] with probability 0.3 (if
    p + 1 < W and the two words tokenize differently), else replaced by its synonym (or, if the
    synonym tokenizes the same, swapped after all). At most 5 words in a row stay untouched.
    The result keeps the original layout (:meth:`Draft.with_ids`). It is accepted when the
    share of words whose tokens changed lies within ``share`` and no n-gram of the original's
    tokens occurs anywhere among the result's; otherwise new edits are drawn.
    """
    grams = ngrams(tokenize(draft.text(model)), n)
    tok = thesaurus.tokens
    for _ in range(1000):
        ids = _hard_ids(draft.ids, thesaurus, rng)
        changed = np.mean([tok[a] != tok[b] for a, b in zip(ids.tolist(), draft.ids.tolist())])
        if not share[0] <= changed <= share[1]:
            continue
        out = draft.with_ids(ids)
        if not grams & ngrams(tokenize(out.text(model)), n):
            return out
    raise RuntimeError("no rewording without a surviving n-gram")  # pragma: no cover


def _edit_case(token: str, rng: np.random.Generator, case_rate: float) -> str:
    u = rng.random()
    if u < 0.03 and token.isascii():
        return "".join(chr(ord(c) + 0xFEE0) for c in token)  # full-width forms
    if u >= case_rate:
        return token
    return (token.upper, token.lower, token.title)[int(rng.integers(3))]()


def light_edit(
    text: str, rng: np.random.Generator, case_rate: float = 0.3, sep_rate: float = 0.25
) -> str:
    """``text`` with case changes, some tokens in full-width forms, and separators (punctuation
    and whitespace between tokens) replaced, such that :func:`contam_cli.text.tokenize` gives
    the same tokens: separators stay separators, and touching tokens keep touching.

    >>> text = "“Don’t,” she said—twice, to the ﬁsh."
    >>> edited = light_edit(text, np.random.default_rng(3))
    >>> edited != text and tokenize(edited) == tokenize(text)
    True
    """
    for _ in range(100):
        out: list[str] = []
        prev = 0
        for a, b in token_spans(text):
            gap = text[prev:a]
            swap = gap and rng.random() < sep_rate
            out.append(EDIT_SEPARATORS[int(rng.integers(len(EDIT_SEPARATORS)))] if swap else gap)
            out.append(_edit_case(text[a:b], rng, case_rate))
            prev = b
        out.append(text[prev:])
        edited = "".join(out)
        if tokenize(edited) == tokenize(text):
            return edited
    raise RuntimeError("no light edit keeps the tokens")  # pragma: no cover


def rewrap(text: str, rng: np.random.Generator, width: tuple[int, int] = (6, 10)) -> str:
    """``text`` hard-wrapped: lines of ``width`` words (drawn per line), joined by newlines.

    >>> rewrap("a b c d e f g", np.random.default_rng(0), (2, 3)).split("\\n")
    ['a b c', 'd e f', 'g']
    """
    words = text.split(" ")
    lines: list[str] = []
    while words:
        k = int(rng.integers(width[0], width[1] + 1))
        lines.append(" ".join(words[:k]))
        words = words[k:]
    return "\n".join(lines)
