"""Stable 64-bit token and n-gram hashes, computed over whole chunks of text with numpy.

The hash is part of contam's file formats (persisted indexes), so it is defined here once, in
plain arithmetic modulo 2**64, and pinned by tests:

* a token (its normalized UTF-8 bytes, ``L`` of them, read as little-endian 64-bit words
  ``w_0 .. w_m``, the last one zero-padded) hashes to ``fmix64(sum(w_k * P**k) + L * K)``;
* an n-gram of token hashes ``t_0 .. t_{n-1}`` hashes to ``fmix64(sum(t_j * Q**j) + n * K)``.

Token words are gathered straight out of the chunk's bytes (one unaligned 8-byte load per token
and word), and the n-gram sum comes from one prefix sum over the chunk: the sum over ``[s, e)``
is ``(C[e] - C[s]) * Q**-s`` (Q is odd, hence invertible modulo 2**64), so the cost is a few
numpy passes, independent of n. ``fmix64`` (the MurmurHash3 finalizer) spreads the polynomials'
weak low bits over the whole word.

ASCII text takes the vectorized path entirely. A "word" (maximal run of bytes that are not ASCII
separators) holding any non-ASCII byte is tokenized by :func:`contam_cli.text.tokenize` and its
token hashes are cached by the word's bytes, so Python only sees words it has never seen before.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from contam_cli._accel import kernels
from contam_cli.errors import MissingExtraError
from contam_cli.text import DEFAULT_NORM, NormConfig, is_segmented, normalize, tokenize

__all__ = [
    "HASH_NAME",
    "TokenStream",
    "Tokenizer",
    "WordLayout",
    "token_hash",
    "ngram_hash",
    "ngram_hashes",
    "fmix64",
    "hash_tokens",
]

#: Name and version of the hash definition, recorded in reports and persisted indexes.
HASH_NAME = "contam-poly64/1"

_M64 = (1 << 64) - 1
_P = 0x9E3779B97F4A7C15  # byte multiplier (odd)
_Q = 0xC2B2AE3D27D4EB4F  # token multiplier (odd)
_K = 0x165667B19E3779F9  # length salt
_F1 = 0xFF51AFD7ED558CCD
_F2 = 0xC4CEB9FE1A85EC53
_P_INV = pow(_P, -1, 1 << 64)
_Q_INV = pow(_Q, -1, 1 << 64)

_U64 = np.uint64


def _fmix_int(x: int) -> int:
    x ^= x >> 33
    x = (x * _F1) & _M64
    x ^= x >> 33
    x = (x * _F2) & _M64
    return x ^ (x >> 33)


def token_hash(token: str) -> int:
    """The stable hash of one (already normalized) token.

    >>> hex(token_hash("the"))
    '0x975d7c19563ff109'
    """
    data = token.encode("utf-8")
    acc, p = 0, 1
    for k in range(0, len(data), 8):
        acc = (acc + int.from_bytes(data[k : k + 8], "little") * p) & _M64
        p = (p * _P) & _M64
    return _fmix_int((acc + len(data) * _K) & _M64)


def ngram_hash(token_hashes: list[int]) -> int:
    """The stable hash of one n-gram, given its tokens' hashes (reference implementation)."""
    acc, q = 0, 1
    for t in token_hashes:
        acc = (acc + t * q) & _M64
        q = (q * _Q) & _M64
    return _fmix_int((acc + len(token_hashes) * _K) & _M64)


def fmix64(x: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, in place on a uint64 array (returned for chaining)."""
    x ^= x >> _U64(33)
    x *= _U64(_F1)
    x ^= x >> _U64(33)
    x *= _U64(_F2)
    x ^= x >> _U64(33)
    return x


class _Powers:
    """Growable tables of m**i and m**-i modulo 2**64."""

    def __init__(self, mult: int, inv: int) -> None:
        self.mult, self.inv = mult, inv
        self.fwd = np.ones(1, dtype=_U64)
        self.bwd = np.ones(1, dtype=_U64)

    def ensure(self, size: int) -> None:
        if size <= len(self.fwd):
            return
        size = max(size, 2 * len(self.fwd))
        self.fwd = _power_table(self.mult, size)
        self.bwd = _power_table(self.inv, size)


def _power_table(mult: int, size: int) -> np.ndarray:
    out = np.full(size, mult, dtype=_U64)
    out[0] = 1
    # NOTE: uint64 cumprod wraps modulo 2**64, which is exactly the arithmetic wanted here.
    return np.cumprod(out, out=out)


@dataclass(frozen=True, slots=True)
class WordLayout:
    """Where a chunk's tokens come from: the chunk's words and how many tokens each one gave.

    A word is a maximal run of bytes that are not separators (see :class:`Tokenizer`) in the
    buffer the chunk was tokenized from: one leading separator, then the documents joined by
    one separator each. An ASCII word is exactly one token spanning the whole word; a word
    holding non-ASCII bytes ("special") gives the tokens of :func:`~contam_cli.text.tokenize`
    on its text, which can be none, one or several, and need not cover the whole word.

    Everything here is a by-product of tokenizing (no extra pass over the chunk); it is read
    only when a run needs evidence offsets, see :meth:`locate`.
    """

    starts: np.ndarray
    """int64 byte offset of each word in the chunk buffer."""
    ends: np.ndarray
    """int64 byte offset just past each word."""
    doc_starts: np.ndarray
    """int64 byte offset in the buffer where each document begins."""
    special: np.ndarray
    """Sorted int64 indices of the words holding non-ASCII bytes."""
    multi: np.ndarray
    """Sorted int64 indices of the words that did not give exactly one token (all special)."""
    multi_counts: np.ndarray
    """int64 token count of each word in `multi` (0 or >= 2)."""

    def locate(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For chunk token indices `tokens`: each one's word, its index among the tokens of
        that word, and that word's token count (all int64 arrays)."""
        tokens = np.asarray(tokens, dtype=np.int64)
        if len(self.multi) == 0:  # one token per word
            ones = np.ones(len(tokens), dtype=np.int64)
            return tokens.copy(), np.zeros(len(tokens), dtype=np.int64), ones
        extra = self.multi_counts - 1
        after = np.cumsum(extra)  # tokens gained (or lost) up to and including multi word j
        first = self.multi + (after - extra)  # index of multi word j's first token
        # NOTE: several multi words can share a first token (a word without tokens, then the
        # next one); the last of them is the one that can hold the token.
        j = np.searchsorted(first, tokens, side="right") - 1
        jj = np.maximum(j, 0)
        shift = np.where(j >= 0, after[jj], 0)
        inner = tokens - first[jj]
        inside = (j >= 0) & (inner < self.multi_counts[jj])
        word = np.where(inside, self.multi[jj], tokens - shift)
        return (
            word,
            np.where(inside, inner, 0),
            np.where(inside, self.multi_counts[jj], 1),
        )


@dataclass(frozen=True, slots=True)
class TokenStream:
    """Token hashes of a chunk of documents, with the document and byte offset of each token."""

    hashes: np.ndarray
    """uint64 token hashes, in text order."""
    doc: np.ndarray
    """int64 index (into the chunk's documents) of each token's document."""
    words: WordLayout | None = None
    """The words each token comes from (set by :meth:`Tokenizer.tokens`), for evidence offsets."""


_PAD = b"\n" * 9  # trailing separators: every 8-byte load of a token stays inside the buffer
_WORD_MASK = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [_M64], dtype=_U64)
_WORD_POW = np.array([pow(_P, k, 1 << 64) for k in range(8)], dtype=_U64)
_MAX_VECTOR_WORDS = 8


def _word_hashes(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Token hashes of the byte strings ``buf[s:s+L]`` (already normalized), all at once.

    `buf` must extend at least 7 bytes past the last word.
    """
    # A uint64 view at every byte offset: element i is the 8 bytes starting at buf[i].
    words = np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
    acc = words[starts] & _WORD_MASK[np.minimum(lengths, 8)]
    active = np.flatnonzero(lengths > 8)
    k = 1
    while len(active) and k < _MAX_VECTOR_WORDS:
        rest = lengths[active] - 8 * k
        w = words[starts[active] + 8 * k] & _WORD_MASK[np.minimum(rest, 8)]
        acc[active] += w * _WORD_POW[k]
        k += 1
        active = active[lengths[active] > 8 * k]
    for i in active.tolist():  # rare very long tokens (URLs, base64): one at a time
        acc[i] = _long_word_sum(buf[starts[i] : starts[i] + lengths[i]].tobytes())
    acc += lengths.astype(_U64) * _U64(_K)
    return fmix64(acc)


class _SingleTokenMap:
    """Raw word hash -> token hash, for non-ASCII words that normalize to exactly one token.

    Sorted numpy arrays, looked up with searchsorted; new entries wait in a dict and are merged
    in when there are enough of them, so the merge cost stays proportional to what is added.
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
        if len(self.pending) < max(256, len(self.keys) // 4):
            return
        if len(self.keys) + len(self.pending) > self.limit:
            self.keys, self.values = self.keys[:0], self.values[:0]
        new_k = np.fromiter(self.pending.keys(), dtype=_U64, count=len(self.pending))
        new_v = np.fromiter(self.pending.values(), dtype=_U64, count=len(self.pending))
        keys_all = np.concatenate([self.keys, new_k])
        order = np.argsort(keys_all, kind="stable")
        self.keys = keys_all[order]
        self.values = np.concatenate([self.values, new_v])[order]
        self.pending.clear()


def hash_tokens(tokens: list[str]) -> np.ndarray:
    """Vectorized :func:`token_hash` of many normalized tokens."""
    if not tokens:
        return np.zeros(0, dtype=_U64)
    raw = [t.encode("utf-8") for t in tokens]
    lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
    starts = np.cumsum(lengths) - lengths
    buf = np.frombuffer(b"".join(raw) + _PAD, dtype=np.uint8)
    return _word_hashes(buf, starts, lengths)


_FAST_TABLE: np.ndarray | None = None


def fast_table() -> np.ndarray:
    """Per BMP code point: 0 separator, 1 one-character token, 2 needs the full normalizer.

    Derived from :func:`contam_cli.text.tokenize` itself, for the scripts written without spaces
    (CJK ideographs, kana) and CJK / full-width punctuation: a character is fast only when it is
    unchanged by normalization (or normalizes to punctuation), never combines with a neighbour,
    and on its own tokenizes to itself (1) or to nothing (0). Everything else stays slow (2).
    """
    global _FAST_TABLE
    if _FAST_TABLE is None:
        table = np.full(0x10000, 2, dtype=np.uint8)
        candidates = [
            *range(0x3000, 0x3100),
            *range(0x3400, 0x4DC0),
            *range(0x4E00, 0xA000),
            *range(0xFF00, 0xFF66),
        ]
        for cp in candidates:
            c = chr(cp)
            if unicodedata.combining(c):
                continue
            norm = normalize(c)
            toks = tokenize(c)
            if toks == [c] and norm == c and is_segmented(c):
                table[cp] = 1
            elif not toks and not any(ch.isalnum() for ch in norm) and not _composes(c):
                table[cp] = 0
        _FAST_TABLE = table
    return _FAST_TABLE


def _composes(c: str) -> bool:
    """Whether `c` can combine with a following character under NFKC (e.g. kana + voicing)."""
    return any(len(unicodedata.normalize("NFKC", c + m)) < 2 for m in ("\u3099", "\u309a"))


def _special_words(arr: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Indices of the words holding a non-ASCII byte."""
    high = np.flatnonzero(arr >= 0x80)
    return np.unique(np.searchsorted(starts, high, side="right") - 1)


def _blank_unicode_separators(arr: np.ndarray) -> np.ndarray:
    """A copy of `arr` with General Punctuation (U+2000-U+206F) and NBSP turned into spaces.

    NOTE: none of these characters is a letter or digit, before or after NFKC, and none composes
    with a neighbour, so they separate tokens exactly like ASCII punctuation does (a test checks
    every one). Treating them here keeps curly quotes and dashes from sending the words next to
    them down the slow non-ASCII path.
    """
    e2 = np.flatnonzero(arr[:-2] == 0xE2)
    b1, b2 = arr[e2 + 1], arr[e2 + 2]
    punct = e2[(b1 == 0x80) | ((b1 == 0x81) & (b2 <= 0xAF))]
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


def _long_word_sum(data: bytes) -> int:
    padded = data + b"\0" * (-len(data) % 8)
    w = np.frombuffer(padded, dtype="<u8")
    return int(np.sum(w * _power_table(_P, len(w)), dtype=_U64))


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
        self._toks = _Powers(_Q, _Q_INV)
        self._cache: dict[bytes, np.ndarray] = {}
        self._singles = _SingleTokenMap(cache_limit)
        self._cache_limit = cache_limit
        self._empty = np.zeros(0, dtype=_U64)
        self._no_words = np.zeros(0, dtype=np.int64)  # an empty list of word indices

    @property
    def kernels(self) -> Any:
        """The compiled kernels this tokenizer uses (None: the numpy path)."""
        return self._k

    def tokens(self, docs: list[bytes] | list[str]) -> TokenStream:
        """Token hashes of `docs` (UTF-8 bytes or str), one stream for the whole list."""
        raw = [d.encode("utf-8", "surrogatepass") if isinstance(d, str) else d for d in docs]
        size = 1 + sum(map(len, raw)) + len(raw)  # the leading separator, documents, separators
        # One join: a leading separator, the documents, then >= 9 trailing separators, with the
        # whole buffer's length a multiple of 8.
        buf = b"\n".join([b"", *raw, b"\n" * (8 + (-size) % 8)])
        lengths = np.fromiter((len(d) + 1 for d in raw), dtype=np.int64, count=len(raw))
        doc_starts = np.cumsum(lengths) - lengths + 1  # where each document's bytes begin in buf
        return self._tokens(buf, doc_starts)

    def _tokens(self, buf: bytes, doc_starts: np.ndarray) -> TokenStream:
        tb = buf.translate(self._table)
        arr = np.frombuffer(tb, dtype=np.uint8)
        ascii_only = tb.isascii()
        if not ascii_only:
            arr = _blank_unicode_separators(arr)
        # buf starts and ends with separators, so word edges alternate start, end, start, ...
        if self._k is not None:
            edges = self._k.word_edges(arr)
        else:
            word = arr != 0x20
            edges = np.flatnonzero(word[1:] != word[:-1]) + 1
        starts, ends = edges[0::2], edges[1::2]
        if self._k is not None:
            hashes, run_doc, special = self._k.hash_words(arr.view(np.uint64), edges, doc_starts)
        else:
            hashes = _word_hashes(arr, starts, ends - starts)
            # Words before each document start -> each word's document, without a search per word.
            first_word = np.searchsorted(starts, doc_starts)
            counts = np.diff(first_word, append=len(starts))
            run_doc = np.repeat(np.arange(len(doc_starts), dtype=np.int64), counts)
            special = None if ascii_only else _special_words(arr, starts)
        none = self._no_words
        if special is None or len(special) == 0:
            layout = WordLayout(starts, ends, doc_starts, none, none, none)
            return TokenStream(hashes, run_doc, layout)
        layout = WordLayout(starts, ends, doc_starts, special, none, none)
        return self._with_nonascii(arr, layout, hashes, run_doc)

    def _with_nonascii(
        self, arr: np.ndarray, layout: WordLayout, hashes: np.ndarray, run_doc: np.ndarray
    ) -> TokenStream:
        """Replace the hashes of words holding non-ASCII bytes by their normalized tokens'."""
        starts, ends, special = layout.starts, layout.ends, layout.special
        # Words seen before that normalize to one token: a vectorized lookup by raw-bytes hash.
        keys = hashes[special]
        known, values = self._singles.lookup(keys)
        hashes[special[known]] = values
        rest = special[~known]
        parts = self._normalize_words(arr, starts, ends, rest, keys[~known])
        counts = np.array([len(p) for p in parts], dtype=np.int64)
        if (counts == 1).all():  # each remaining word is one token too
            if parts:
                hashes[rest] = np.concatenate(parts)
            return TokenStream(hashes, run_doc, layout)
        multi = counts != 1
        layout = replace(layout, multi=rest[multi], multi_counts=counts[multi])
        cat = np.concatenate(parts)
        if self._k is not None:
            out, out_doc = self._k.expand(hashes, run_doc, rest, counts, cat)
            return TokenStream(out, out_doc, layout)
        per_word = np.ones(len(starts), dtype=np.int64)
        per_word[rest] = counts
        out = np.repeat(hashes, per_word)
        slots = np.repeat(np.cumsum(per_word)[rest] - counts, counts)
        slots += np.arange(len(slots)) - np.repeat(np.cumsum(counts) - counts, counts)
        out[slots] = cat
        return TokenStream(out, np.repeat(run_doc, per_word), layout)

    def _normalize_words(
        self,
        arr: np.ndarray,
        starts: np.ndarray,
        ends: np.ndarray,
        words: np.ndarray,
        keys: np.ndarray,
    ) -> list[np.ndarray]:
        """Token hashes of each word in `words` (indices), by the fastest exact route."""
        parts: list[np.ndarray] = [self._empty] * len(words)
        slow = np.arange(len(words))
        if self._k is not None and len(words):
            fast, counts, cat = self._k.segmented_words(arr, starts, ends, words, fast_table())
            bounds = np.cumsum(counts[fast]).tolist()
            for j, a, b in zip(np.flatnonzero(fast).tolist(), [0, *bounds[:-1]], bounds):
                parts[j] = cat[a:b]
            slow = np.flatnonzero(~fast)
        slow_words = [arr[starts[w] : ends[w]].tobytes() for w in words[slow].tolist()]
        slow_parts = self._special_hashes(slow_words)
        for j, p in zip(slow.tolist(), slow_parts):
            parts[j] = p
        self._singles.remember(keys[slow], slow_parts)
        return parts

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
