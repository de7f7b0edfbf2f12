"""Evidence: where an example's longest run sits in the corpus, and the text it matched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from contam_cli.io.model import Record
from contam_cli.text import DEFAULT_NORM, NormConfig, token_range, word_token_edge

if TYPE_CHECKING:
    from contam_cli.engine.match import ChunkRuns

__all__ = ["Evidence", "RunOffsets", "make_evidence"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where an example's longest run sits in the corpus, and the text it matched."""

    source: str
    path: str | None
    line: int | None
    record: int | None
    doc_id: str | None
    byte_offset: int | None = field(compare=False)
    """Start of the document's record in its (decompressed) file, for lines found later (not
    part of the report: two evidences that differ only here are equal)."""
    char_start: int
    """Character offsets of the run in the corpus document's text."""
    char_end: int
    doc_token: int
    """Token position of the run in the corpus document."""
    eval_token: int
    """Token position of the run in the eval example."""
    length: int
    """Run length in tokens."""
    text: str | None
    line_base: tuple[str, int] | None = field(default=None, compare=False)
    """Set while `line` and `record` count from the first line and record of the byte range of
    `path` that starts at this offset (a shard of a large file), and `doc_id` may be the range
    reader's ``"@<offset>"``; the scan makes them what a whole read of the file gives when all
    shards are in (:func:`~contam_cli.engine.corpus_pass.fill_ranged_evidence`)."""


class RunOffsets:
    """Character offsets of runs in their documents, from the words the tokenizer found.

    Equal to ``token_range(text, pos, pos + length - 1)`` for each run, without tokenizing the
    document again: a run's first and last tokens are located among the chunk's words
    (:meth:`WordLayout.locate`); an ASCII word is its own token, so its byte span is the
    token's, and only a boundary word holding non-ASCII bytes is looked at character by
    character (:func:`word_token_edge`, the rule token_range applies to one word). Byte
    offsets become character offsets by decoding the document's bytes up to them.
    """

    def __init__(
        self, runs: ChunkRuns, picks: np.ndarray, raw: Sequence[bytes], norm: NormConfig
    ) -> None:
        """Offsets for runs ``picks`` (indices into `runs`) of the chunk of documents `raw`,
        tokenized under `norm`."""
        words = runs.words
        assert words is not None and runs.doc_first is not None
        self.norm = norm
        self.raw = raw
        doc = runs.doc[picks]
        first = runs.doc_first[doc] + runs.doc_pos[picks]
        last = first + runs.length[picks] - 1
        word, inner, count = words.locate(np.concatenate([first, last]))
        n_special = len(words.special)
        if n_special:
            at = np.minimum(np.searchsorted(words.special, word), n_special - 1)
            special = words.special[at] == word
        else:
            special = np.zeros(len(word), dtype=bool)
        base = words.doc_starts[doc]
        m = len(picks)
        self.doc = doc.tolist()
        # Per side (0: the run's first token, 1: its last): the token's word, as byte offsets
        # in the document, the token's index in the word, the word's token count, and whether
        # the word holds non-ASCII bytes.
        start = words.starts[word] - np.concatenate([base, base])
        end = words.ends[word] - np.concatenate([base, base])
        self.start = (start[:m].tolist(), start[m:].tolist())
        self.end = (end[:m].tolist(), end[m:].tolist())
        self.inner = (inner[:m].tolist(), inner[m:].tolist())
        self.count = (count[:m].tolist(), count[m:].tolist())
        self.special = (special[:m].tolist(), special[m:].tolist())

    def char_range(self, j: int, text: str) -> tuple[int, int] | None:
        """``(char_start, char_end)`` of picked run `j` in its document's `text`, or None when
        only :func:`token_range` can say (the text is not the one that was tokenized)."""
        raw = self.raw[self.doc[j]]
        # NOTE: the record is built apart from the bytes that were tokenized; offsets into one
        # only hold for the other when they are the same text (an encode and a compare: a few
        # microseconds, against the hundreds token_range takes).
        if text.encode("utf-8", "surrogatepass") != raw:
            return None
        return self.char_range_of_bytes(j)

    def char_range_of_bytes(self, j: int) -> tuple[int, int]:
        """``(char_start, char_end)`` of picked run `j` in the text its bytes decode to (the
        caller knows the record's text is that text)."""
        raw = self.raw[self.doc[j]]
        if raw.isascii():  # every word is ASCII and every byte a character
            return self.start[0][j], self.end[1][j]
        out = []
        done = chars = 0  # `chars` characters in the first `done` bytes
        for side in (0, 1):
            a, b = self.start[side][j], self.end[side][j]
            chars += len(_chars(raw, done, a))
            done = a
            if not self.special[side][j]:  # an ASCII word: the token is the whole word
                out.append(chars if side == 0 else chars + b - a)
                continue
            word = _chars(raw, a, b)
            inner, count = self.inner[side][j], self.count[side][j]
            out.append(chars + word_token_edge(word, inner, count, side, self.norm))
        return out[0], out[1]


def _chars(raw: bytes, a: int, b: int) -> str:
    """Bytes ``[a, b)`` of a document's UTF-8 `raw` (on character boundaries), as text."""
    return raw[a:b].decode("utf-8", "surrogatepass")


def make_evidence(
    rec: Record | None,
    source: str,
    pos: int,
    eval_pos: int,
    length: int,
    redact: bool,
    span: tuple[int, int] | None = None,
    norm: NormConfig = DEFAULT_NORM,
    ranged: tuple[tuple[str, int], int, int] | None = None,
) -> Evidence:
    """Evidence for a run of `length` tokens at token `pos` of document `rec` (None: the
    document could not be read again, so there are no offsets and no text).

    `span`: the run's character offsets in ``rec.text`` when the caller already knows them
    (they must equal what :func:`~contam_cli.text.token_range` gives); None: computed here.
    `ranged`: for a document of a byte range, the range (path, start), the document's line
    counted from the range's first line and its ordinal among the range's records (see
    :attr:`Evidence.line_base`).
    """
    if rec is None:
        return Evidence(source, None, None, None, None, None, -1, -1, pos, eval_pos, length, None)
    a, b = span if span is not None else token_range(rec.text, pos, pos + length - 1, norm)
    loc = rec.locator
    base, line, record = (None, loc.line, loc.record) if ranged is None else ranged
    if line is not None and _is_text_file(loc.path):
        line += rec.text.count("\n", 0, a)  # a .txt document spans lines: point at the run's
    return Evidence(
        source=source,
        path=loc.path or None,
        line=line,
        record=record,
        doc_id=rec.id or None,
        byte_offset=loc.span[0] if loc.span else None,
        char_start=a,
        char_end=b,
        doc_token=pos,
        eval_token=eval_pos,
        length=length,
        text=None if redact else rec.text[a:b],
        line_base=base,
    )


def _is_text_file(path: str) -> bool:
    stem = path
    for ext in (".gz", ".bz2", ".xz", ".zst"):
        stem = stem.removesuffix(ext)
    return stem.endswith(".txt")
