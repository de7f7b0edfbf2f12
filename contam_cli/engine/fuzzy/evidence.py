"""FuzzyEvidence: where an example's best alignment sits in the corpus, and the matched words.

It mirrors :class:`~contam_cli.engine.evidence.Evidence` (the same fields, filled the same way
by :func:`~contam_cli.engine.evidence.make_evidence`), and adds the alignment: its scores, the
aligned eval span, and the matched (eval token, document token) pairs with each matched
document token's character offsets, so that a report can show the reworded text beside the
original with the matched words highlighted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from contam_cli.engine.evidence import make_evidence
from contam_cli.io.model import Record
from contam_cli.text import NormConfig, WordLayout, token_spans, word_token_edge

if TYPE_CHECKING:
    from contam_cli.engine.fuzzy.align import Alignment

__all__ = ["FuzzyEvidence", "TokenChars", "make_fuzzy_evidence"]


@dataclass(frozen=True, eq=False)
class FuzzyEvidence:
    """The best alignment of one example in one source: where it is, and what matched."""

    source: str
    path: str | None
    line: int | None
    record: int | None
    doc_id: str | None
    byte_offset: int | None
    """Start of the document's record in its (decompressed) file, for lines found later."""
    char_start: int
    """Character offsets, in the document's text, of the aligned span (first to last match)."""
    char_end: int
    doc_token: int
    """Token position of the aligned span's first token in the document."""
    doc_token_end: int
    """Token position just past its last token."""
    eval_token: int
    """Token position, in the eval example, of the first matched token."""
    eval_token_end: int
    """Just past the last matched eval token."""
    length: int
    """Document tokens in the aligned span."""
    text: str | None
    """The aligned span of the document (None with redact, or when it could not be read)."""
    score: float
    """Alignment score / the example's total weight (1.0: the whole example, verbatim)."""
    aligned_fraction: float
    """Eval tokens matched / eval tokens."""
    identity: float
    """Matched tokens / alignment columns (matches, mismatches, gaps)."""
    pairs: np.ndarray
    """int64 (k, 2): (eval token, document token) positions of each matched token."""
    pair_chars: np.ndarray
    """int64 (k, 2): character offsets in the document of each matched document token."""
    line_base: tuple[str, int] | None = None
    """As in Evidence: `line` counts from a byte range's first line until the scan fixes it."""


@dataclass
class TokenChars:
    """Character offsets of a chunk's tokens in their documents, from the tokenizer's words.

    Equal to :func:`~contam_cli.text.token_spans` of the document (the rule the exact scan's
    evidence offsets follow too), without tokenizing it again: a token is located among the
    chunk's words (:meth:`WordLayout.locate`); an ASCII word is its own token, and only a word
    holding non-ASCII bytes is looked at character by character (:func:`word_token_edge`).
    Byte offsets become character offsets from one count of the document's lead bytes, however
    many tokens are asked for.
    """

    words: WordLayout | None
    doc_first: np.ndarray
    """Each document's first token in the chunk."""
    raw: Sequence[bytes]
    norm: NormConfig

    def spans(self, doc: int, text: str, tokens: np.ndarray) -> np.ndarray:
        """int64 (k, 2): character (start, end) in `text` of document `doc`'s `tokens`."""
        raw = self.raw[doc]
        # NOTE: a record is built apart from the bytes that were tokenized; offsets into one
        # hold for the other only when they are the same text.
        if self.words is None or len(tokens) == 0 or text.encode("utf-8", "surrogatepass") != raw:
            return _by_definition(text, tokens, self.norm)
        words = self.words
        word, inner, count = words.locate(self.doc_first[doc] + tokens)
        base = words.doc_starts[doc]
        start, end = words.starts[word] - base, words.ends[word] - base
        if raw.isascii():  # every word is ASCII, its own token, and every byte a character
            return np.stack([start, end], axis=1).astype(np.int64)
        chars = _char_positions(raw)
        cs, ce = chars[start], chars[end]
        at = np.minimum(np.searchsorted(words.special, word), max(len(words.special) - 1, 0))
        special = words.special[at] == word if len(words.special) else np.zeros(len(word), bool)
        for k in np.flatnonzero(special).tolist():
            w, i, n = text[cs[k] : ce[k]], int(inner[k]), int(count[k])
            cs[k], ce[k] = (
                cs[k] + word_token_edge(w, i, n, 0, self.norm),
                cs[k] + (word_token_edge(w, i, n, 1, self.norm)),
            )
        return np.stack([cs, ce], axis=1)


def _char_positions(raw: bytes) -> np.ndarray:
    """The character offset of every byte offset of UTF-8 `raw` (and of its end): the number
    of bytes before it that start a character (not 0b10xxxxxx)."""
    lead = (np.frombuffer(raw, dtype=np.uint8) & 0xC0) != 0x80
    out = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum(lead, out=out[1:])
    return out


def _by_definition(text: str, tokens: np.ndarray, norm: NormConfig) -> np.ndarray:
    if len(tokens) == 0:
        return np.zeros((0, 2), dtype=np.int64)
    spans = token_spans(text, norm, stop=int(tokens.max()) + 1)
    return np.array(spans, dtype=np.int64).reshape(-1, 2)[tokens]


def make_fuzzy_evidence(
    rec: Record | None,
    source: str,
    found: Alignment,
    total_weight: int,
    n_tokens: int,
    redact: bool,
    pair_chars: np.ndarray,
    norm: NormConfig,
) -> FuzzyEvidence:
    """Evidence for alignment `found` of an example (`n_tokens` tokens weighing
    `total_weight`) in document `rec`, whose matched document tokens lie at `pair_chars`
    (`rec` None: the document could not be read again; offsets -1, no text)."""
    pairs = found.pairs
    d0, d1 = int(pairs[:, 1].min()), int(pairs[:, 1].max()) + 1
    e0, e1 = int(pairs[:, 0].min()), int(pairs[:, 0].max()) + 1
    span = int(pair_chars[:, 0].min()), int(pair_chars[:, 1].max())
    ev = make_evidence(rec, source, d0, e0, d1 - d0, redact, span=span, norm=norm)
    return FuzzyEvidence(
        source=ev.source,
        path=ev.path,
        line=ev.line,
        record=ev.record,
        doc_id=ev.doc_id,
        byte_offset=ev.byte_offset,
        char_start=ev.char_start,
        char_end=ev.char_end,
        doc_token=d0,
        doc_token_end=d1,
        eval_token=e0,
        eval_token_end=e1,
        length=d1 - d0,
        text=ev.text,
        score=found.score / total_weight if total_weight else 0.0,
        aligned_fraction=found.matched / n_tokens if n_tokens else 0.0,
        identity=found.matched / found.columns if found.columns else 0.0,
        pairs=pairs,
        pair_chars=pair_chars,
    )
