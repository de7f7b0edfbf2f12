"""The Tokenizer: whole chunks of documents to uint64 token and n-gram hashes, with numpy.

ASCII text takes the vectorized path entirely (see :mod:`contam_cli.text.hashing` for the hash
definition). A "word" (maximal run of bytes that are not ASCII separators) holding any non-ASCII
byte is tokenized by :func:`contam_cli.text.normalize.tokenize` and its token hashes are cached by
the word's bytes, so Python only sees words it has never seen before. With the compiled kernels
(extra ``fast``) one kernel tokenizes every word of a chunk, the non-ASCII ones through the
character tables of :mod:`contam_cli.text.tables` first; only the words those cannot tokenize
reach the normalizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

import numpy as np

from contam_cli.errors import MissingExtraError
from contam_cli.io.packed import PackedTexts
from contam_cli.text.accel import kernels
from contam_cli.text.hashing import (
    _K,
    _M64,
    _Q,
    _Q_INV,
    _U64,
    Powers,
    fmix64,
    hash_tokens,
    word_hashes,
)
from contam_cli.text.normalize import DEFAULT_NORM, NormConfig, tokenize
from contam_cli.text.stream import TokenStream, WordLayout
from contam_cli.text.tables import word_table

__all__ = ["Tokenizer", "ngram_hashes"]


class _SingleTokenMap:
    """Raw word hash -> token hash, for non-ASCII words that normalize to exactly one token.

    Sorted numpy arrays, looked up with searchsorted; new entries wait in a dict and are merged
    in (sorted, then inserted in one pass) once they are 1/64 of the map, so that a word seen in
    one chunk is found by the next one's vectorized lookup while the merge cost stays
    proportional to what is added.
    """

    def __init__(self, limit: int) -> None:
        self.keys = np.zeros(0, dtype=_U64)
        self.values = np.zeros(0, dtype=_U64)
        self.pending: dict[int, int] = {}
        self.limit = limit

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if len(self.keys) == 0:
            return np.zeros(len(keys), dtype=bool), self.values[:0]
        pos = np.searchsorted(self.keys, keys)
        pos[pos == len(self.keys)] = 0
        found = self.keys[pos] == keys
        return found, self.values[pos[found]]

    def remember(self, keys: np.ndarray, parts: list[np.ndarray]) -> None:
        for key, part in zip(keys.tolist(), parts):
            if len(part) == 1:
                self.pending[key] = int(part[0])
        if not self.pending or len(self.pending) < len(self.keys) // 64:
            return
        if len(self.keys) + len(self.pending) > self.limit:
            self.keys, self.values = self.keys[:0], self.values[:0]
        new_k = np.fromiter(self.pending.keys(), dtype=_U64, count=len(self.pending))
        new_v = np.fromiter(self.pending.values(), dtype=_U64, count=len(self.pending))
        order = np.argsort(new_k)
        # NOTE: a pending key is never in the map already (only lookup misses are remembered).
        at = np.searchsorted(self.keys, new_k[order])
        self.keys = np.insert(self.keys, at, new_k[order])
        self.values = np.insert(self.values, at, new_v[order])
        self.pending.clear()


def _slots(first: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``first[j], first[j] + 1, ..., first[j] + counts[j] - 1`` for every j, in turn."""
    total = int(counts.sum())
    return np.repeat(first - (np.cumsum(counts) - counts), counts) + np.arange(total)


def _special_words(arr: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Indices of the words holding a non-ASCII byte."""
    high = np.flatnonzero(arr >= 0x80)
    return np.unique(np.searchsorted(starts, high, side="right") - 1)


def _blank_unicode_separators(arr: np.ndarray) -> np.ndarray:
    """A copy of `arr` with the separators of UNICODE_SEPARATOR_RANGES (NBSP, and General
    Punctuation less its format characters) turned into spaces.

    NOTE: none of these characters is a letter, digit, mark or format character, before or after
    NFKC, and none composes with a neighbour, so they separate tokens exactly like ASCII
    punctuation does (a test checks every one). Treating them here keeps curly quotes and dashes
    from sending the words next to them down the slow non-ASCII path. The format characters of
    the block (U+200B..U+200F, U+202A..U+202E: 0xE2 0x80 then 0x8B..0x8F or 0xAA..0xAE; and
    U+2060..U+206F: 0xE2 0x81 0xA0..0xAF) stay, inside their word.
    """
    e2 = np.flatnonzero(arr[:-2] == 0xE2)
    b1, b2 = arr[e2 + 1], arr[e2 + 2]
    fmt = ((b2 >= 0x8B) & (b2 <= 0x8F)) | ((b2 >= 0xAA) & (b2 <= 0xAE))
    punct = e2[((b1 == 0x80) & ~fmt) | ((b1 == 0x81) & (b2 <= 0x9F))]
    c2 = np.flatnonzero(arr[:-1] == 0xC2)
    nbsp = c2[arr[c2 + 1] == 0xA0]
    if len(punct) == 0 and len(nbsp) == 0:
        return arr
    out = arr.copy()
    for k in range(3):
        out[punct + k] = 0x20
    for k in range(2):
        out[nbsp + k] = 0x20
    return out


# Bytes that separate tokens: every ASCII byte that is not a letter or digit.
_SEPARATORS = bytes(b for b in range(128) if not chr(b).isalnum())


def _translate_table(casefold: bool) -> bytes:
    table = bytearray(range(256))
    for b in _SEPARATORS:
        table[b] = 0x20
    if casefold:
        for b in range(ord("A"), ord("Z") + 1):
            table[b] = b + 32
    return bytes(table)


class Tokenizer:
    """Turns documents into token hashes and n-gram hashes; one per process, reused per chunk.

    >>> from contam_cli.text.hashing import token_hash
    >>> tk = Tokenizer()
    >>> [hex(int(h)) for h in tk.tokens(["The"]).hashes] == [hex(token_hash("the"))]
    True
    """

    def __init__(
        self, norm: NormConfig = DEFAULT_NORM, cache_limit: int = 1 << 20, accel: bool | None = None
    ) -> None:
        """`accel`: use the compiled kernels (extra ``fast``): None = when installed."""
        self.norm = norm
        self._k = kernels() if accel is not False else None
        if accel and self._k is None:
            raise MissingExtraError("numba", "fast")
        self._table = _translate_table(norm.casefold)
        self._toks = Powers(_Q, _Q_INV)
        self._cache: dict[bytes, np.ndarray] = {}
        self._singles = _SingleTokenMap(cache_limit)
        self._cache_limit = cache_limit
        self._empty = np.zeros(0, dtype=_U64)
        self._no_words = np.zeros(0, dtype=np.int64)  # an empty list of word indices

    @property
    def separator_table(self) -> bytes:
        """The byte translation this tokenizer applies first: every separator byte becomes
        0x20 (a document cut there tokenizes as the two halves do)."""
        return self._table

    @property
    def kernels(self) -> Any:
        """The compiled kernels this tokenizer uses (None: the numpy path)."""
        return self._k

    def tokens(self, docs: Sequence[str | bytes]) -> TokenStream:
        """Token hashes of `docs` (UTF-8 bytes or str), one stream for the whole list."""
        if not isinstance(docs, PackedTexts):
            # One join: a leading separator, the documents, then >= 9 trailing separators.
            docs = PackedTexts.from_texts(
                [d.encode("utf-8", "surrogatepass") if isinstance(d, str) else d for d in docs]
            )
        return self._tokens(docs.buffer, docs.starts)

    def _tokens(self, buf: bytes, doc_starts: np.ndarray) -> TokenStream:
        if self._k is not None:
            return self._compiled_tokens(self._k, buf, doc_starts)
        tb = buf.translate(self._table)
        arr = np.frombuffer(tb, dtype=np.uint8)
        ascii_only = tb.isascii()
        if not ascii_only:
            arr = _blank_unicode_separators(arr)
        # buf starts and ends with separators, so word edges alternate start, end, ...
        word = arr != 0x20
        edges = np.flatnonzero(word[1:] != word[:-1]) + 1
        starts, ends = edges[0::2], edges[1::2]
        hashes = word_hashes(arr, starts, ends - starts)
        # Words before each document start -> each word's document, without a search per word.
        first_word = np.searchsorted(starts, doc_starts)
        counts = np.diff(first_word, append=len(starts))
        run_doc = np.repeat(np.arange(len(doc_starts), dtype=np.int64), counts)
        none = self._no_words
        special = none if ascii_only else _special_words(arr, starts)
        layout = WordLayout(starts, ends, doc_starts, special, none, none)
        if len(special) == 0:
            return TokenStream(hashes, run_doc, layout)
        return self._with_nonascii(arr, layout, hashes, run_doc)

    def _compiled_tokens(self, k: ModuleType, buf: bytes, doc_starts: np.ndarray) -> TokenStream:
        """:meth:`_tokens` by the compiled kernels `k`: every word in one pass; only the words
        never seen before that the tables cannot tokenize go to the full normalizer."""
        arr, edges = k.translate_edges(np.frombuffer(buf, np.uint8), self.norm.casefold)
        singles = self._singles
        hashes, doc, special, multi, multi_counts, new, slots, keys = k.word_tokens(
            arr, edges, doc_starts, *word_table(self.norm), singles.keys, singles.values
        )
        starts, ends = edges[0::2], edges[1::2]
        if len(new):
            words = [arr[starts[w] : ends[w]].tobytes() for w in new.tolist()]
            parts = self._special_hashes(words)
            singles.remember(keys, parts)
            counts = np.array([len(p) for p in parts], dtype=np.int64)
            cat = np.concatenate(parts) if parts else self._empty
            if (counts == 1).all():
                hashes[slots] = cat
            else:
                hashes, doc = k.expand(hashes, doc, slots, counts, cat)
                more = counts != 1
                multi = np.concatenate([multi, new[more]])
                multi_counts = np.concatenate([multi_counts, counts[more]])
                order = np.argsort(multi, kind="stable")
                multi, multi_counts = multi[order], multi_counts[order]
        layout = WordLayout(starts, ends, doc_starts, special, multi, multi_counts)
        return TokenStream(hashes, doc, layout)

    def _with_nonascii(
        self, arr: np.ndarray, layout: WordLayout, hashes: np.ndarray, run_doc: np.ndarray
    ) -> TokenStream:
        """Replace the hashes of words holding non-ASCII bytes by their normalized tokens'."""
        starts, special = layout.starts, layout.special
        counts, cat = self._normalize_words(arr, layout, hashes[special])
        if (counts == 1).all():  # each word is one token
            hashes[special] = cat
            return TokenStream(hashes, run_doc, layout)
        multi = counts != 1
        layout = replace(layout, multi=special[multi], multi_counts=counts[multi])
        per_word = np.ones(len(starts), dtype=np.int64)
        per_word[special] = counts
        out = np.repeat(hashes, per_word)
        out[_slots(np.cumsum(per_word)[special] - counts, counts)] = cat
        return TokenStream(out, np.repeat(run_doc, per_word), layout)

    def _normalize_words(
        self, arr: np.ndarray, layout: WordLayout, keys: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The token count of each special word of `layout` and all their token hashes in turn:
        the words seen before that gave one token (looked up by `keys`, their raw-bytes
        hashes), then the full normalizer."""
        starts, ends, words = layout.starts, layout.ends, layout.special
        counts = np.ones(len(words), dtype=np.int64)
        known, values = self._singles.lookup(keys)
        new = np.flatnonzero(~known)
        new_words = [arr[starts[w] : ends[w]].tobytes() for w in words[new].tolist()]
        new_parts = self._special_hashes(new_words)
        self._singles.remember(keys[new], new_parts)
        counts[new] = [len(p) for p in new_parts]
        first = np.cumsum(counts) - counts  # where each word's tokens begin in `cat`
        cat = np.empty(int(counts.sum()), dtype=_U64)
        cat[first[known]] = values
        if new_parts:
            cat[_slots(first[new], counts[new])] = np.concatenate(new_parts)
        return counts, cat

    def _special_hashes(self, words: list[bytes]) -> list[np.ndarray]:
        """Token hashes of words holding non-ASCII bytes: cached, misses hashed in bulk."""
        cache = self._cache
        unique = dict.fromkeys(words)
        misses = [w for w in unique if w not in cache]
        if misses:
            if len(cache) + len(misses) > self._cache_limit:
                # NOTE: after a clear every word of this call is a miss, hits included.
                cache.clear()
                misses = list(unique)
            toks = [tokenize(w.decode("utf-8", "surrogatepass"), self.norm) for w in misses]
            flat = hash_tokens([t for ts in toks for t in ts])
            k = 0
            for w, ts in zip(misses, toks):
                cache[w] = flat[k : k + len(ts)]
                k += len(ts)
        return [cache[w] for w in words]

    def ngrams(self, stream: TokenStream, n: int) -> tuple[np.ndarray, np.ndarray]:
        """N-gram hashes of `stream` that lie inside one document, and their first token index."""
        total = len(stream.hashes)
        if total < n:
            return self._empty, np.zeros(0, dtype=np.int64)
        if self._k is not None:
            return self._k.ngrams(stream.hashes, stream.doc, n)
        self._toks.ensure(total + 1)
        prefix = np.empty(total + 1, dtype=_U64)
        prefix[0] = 0
        np.multiply(stream.hashes, self._toks.fwd[:total], out=prefix[1:])
        np.cumsum(prefix, out=prefix)
        grams = (prefix[n:] - prefix[: total - n + 1]) * self._toks.bwd[: total - n + 1]
        grams += _U64((n * _K) & _M64)
        fmix64(grams)
        inside = stream.doc[n - 1 :] == stream.doc[: total - n + 1]
        if inside.all():
            return grams, np.arange(len(grams), dtype=np.int64)
        where = np.flatnonzero(inside)
        return grams[where], where


def ngram_hashes(text: str, n: int, norm: NormConfig = DEFAULT_NORM) -> np.ndarray:
    """The uint64 hashes of every n-gram of `text`, in order (empty below n tokens).

    >>> len(ngram_hashes("a b c d e", 3))
    3
    """
    tk = Tokenizer(norm)
    grams, _ = tk.ngrams(tk.tokens([text]), n)
    return grams
