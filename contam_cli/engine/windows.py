"""Long documents in overlapping windows: a scan's memory a few times the window, not the document.

Tokenizing a chunk costs about ten bytes of arrays per byte of text (token and n-gram hashes,
word spans, positions), which is harmless for a chunk of ordinary documents and ruinous for one
document of a few hundred megabytes (a whole book dump on one JSONL line, a concatenated .txt).
A document longer than :data:`LONG_DOC_BYTES` is therefore matched window by window.

Exactness. A run is a verbatim copy of part of one eval example, so it spans at most
``L = max eval example tokens`` tokens. Consecutive windows overlap by at least ``L + n``
tokens, and every window ends on a separator byte, where tokenization is local (each word is
normalized on its own), so the tokens of a window are the document's tokens at a known offset.
Every run then lies whole inside some window; pieces of it that other windows cut short are
shorter, so they never win. Matched n-grams are a union (seen twice is seen once), and positions
and character offsets are shifted by where the window starts, so the results equal a whole-document
pass (``tests/engine/test_long_documents.py`` holds them equal).

A document with no separator byte after a window's target length (no ASCII space or punctuation
for megabytes: unspaced scripts) is taken whole from there on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from contam_cli.text import Tokenizer, TokenStream

__all__ = ["LONG_DOC_BYTES", "WINDOW_BYTES", "Window", "iter_windows", "window_ngrams"]

#: Documents longer than this are matched in windows (see the module docstring).
LONG_DOC_BYTES = 32 << 20
#: The target size of one window (grown when the eval set's examples need a wider overlap).
WINDOW_BYTES = 8 << 20
#: How far past a window's target end a separator byte is looked for at a time.
_SEARCH = 1 << 16


@dataclass(frozen=True, slots=True)
class Window:
    """One window of a long document, tokenized."""

    raw: bytes
    """The window's bytes: ``document[byte_base : byte_base + len(raw)]``."""
    stream: TokenStream
    """Its tokens (one document), equal to the document's from token `token_base` on."""
    byte_base: int
    token_base: int
    """Tokens of the document before the window."""
    char_base: int
    """Characters of the document before the window."""


def iter_windows(
    raw: bytes, tk: Tokenizer, overlap: int, window_bytes: int | None = None
) -> Iterator[Window]:
    """The windows of document `raw` (UTF-8), consecutive ones sharing at least `overlap`
    tokens, each window cut at a separator byte (`window_bytes`: the target size, by default
    WINDOW_BYTES).

    >>> tk = Tokenizer()
    >>> ws = list(iter_windows(b"one two three four five six seven", tk, 2, window_bytes=10))
    >>> [(w.raw, w.token_base, w.char_base) for w in ws][:2]
    [(b'one two three four five', 0, 0), (b'four five six seven', 3, 14)]
    >>> ws[-1].raw.endswith(b"seven")
    True
    """
    table = tk.separator_table
    a = token_base = char_base = 0
    target = max(window_bytes or WINDOW_BYTES, 1)
    size = target
    while True:
        b = _cut(raw, a + size, table)
        piece = raw[a:b]
        stream = tk.tokens([piece])
        if b >= len(raw):
            yield Window(piece, stream, a, token_base, char_base)
            return
        step, skipped = _next_start(stream, overlap)
        if step <= 0:
            size *= 2  # NOTE: too few tokens to step forward by; rare (huge words, long eval)
            continue
        yield Window(piece, stream, a, token_base, char_base)
        token_base += skipped
        char_base += _char_count(piece[:step])
        a += step
        size = target


def window_ngrams(
    raw: bytes, tk: Tokenizer, n: int, window_bytes: int | None = None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The n-gram hashes of document `raw` and the token position where each starts, window by
    window: together, once each and in order, what ``tk.ngrams`` gives for the whole document.

    Consecutive windows share at least n - 1 tokens, so every n-gram lies whole in one of them;
    one that two windows hold is taken from the first.

    >>> tk = Tokenizer()
    >>> doc = b"one two three four five six seven"
    >>> parts = list(window_ngrams(doc, tk, 3, window_bytes=10))
    >>> whole = tk.ngrams(tk.tokens([doc]), 3)
    >>> [np.concatenate(x).tolist() for x in zip(*parts)] == [w.tolist() for w in whole]
    True
    """
    covered = 0  # positions below this were given by an earlier window
    for w in iter_windows(raw, tk, max(n - 1, 1), window_bytes):
        grams, win = tk.ngrams(w.stream, n)
        start = win + w.token_base
        keep = start >= covered
        if len(start):
            covered = max(covered, int(start[-1]) + 1)
        yield grams[keep], start[keep]


def _next_start(stream: TokenStream, overlap: int) -> tuple[int, int]:
    """Where the window after this one starts: at the first token of the word holding token
    ``total - overlap`` (so that the two share at least `overlap` tokens). Its byte offset in
    this window and the tokens before it; a byte offset of 0 when there is no such start."""
    total = len(stream.hashes)
    if total <= 2 * overlap:
        return 0, 0
    assert stream.words is not None
    word, inner, _ = stream.words.locate(np.array([total - overlap]))
    step = int(stream.words.starts[word[0]] - stream.words.doc_starts[0])
    return step, total - overlap - int(inner[0])


def _cut(raw: bytes, at: int, table: bytes) -> int:
    """The first separator byte at or after `at` (the document's end if none)."""
    while at < len(raw):
        seps = np.frombuffer(raw[at : at + _SEARCH].translate(table), dtype=np.uint8)
        found = np.flatnonzero(seps == 0x20)
        if len(found):
            return at + int(found[0])
        at += _SEARCH
    return len(raw)


def _char_count(data: bytes) -> int:
    """Characters in UTF-8 `data` (which starts and ends on character boundaries)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    return int(len(arr) - np.count_nonzero((arr & 0xC0) == 0x80))
