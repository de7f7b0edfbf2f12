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

import numpy as np

__all__ = ["HASH_NAME", "fmix64", "hash_tokens", "ngram_hash", "token_hash", "word_hashes"]

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


class Powers:
    """Growable tables of m**i and m**-i modulo 2**64."""

    def __init__(self, mult: int, inv: int) -> None:
        self.mult, self.inv = mult, inv
        self.fwd = np.ones(1, dtype=_U64)
        self.bwd = np.ones(1, dtype=_U64)

    def ensure(self, size: int) -> None:
        if size <= len(self.fwd):
            return
        size = max(size, 2 * len(self.fwd))
        self.fwd = power_table(self.mult, size)
        self.bwd = power_table(self.inv, size)


def power_table(mult: int, size: int) -> np.ndarray:
    out = np.full(size, mult, dtype=_U64)
    out[0] = 1
    # NOTE: uint64 cumprod wraps modulo 2**64, which is exactly the arithmetic wanted here.
    return np.cumprod(out, out=out)


PAD = b"\n" * 9  # trailing separators: every 8-byte load of a token stays inside the buffer
_WORD_MASK = np.array([(1 << (8 * r)) - 1 for r in range(8)] + [_M64], dtype=_U64)
_WORD_POW = np.array([pow(_P, k, 1 << 64) for k in range(8)], dtype=_U64)
_MAX_VECTOR_WORDS = 8


def word_hashes(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
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


def hash_tokens(tokens: list[str]) -> np.ndarray:
    """Vectorized :func:`token_hash` of many normalized tokens."""
    if not tokens:
        return np.zeros(0, dtype=_U64)
    raw = [t.encode("utf-8") for t in tokens]
    lengths = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
    starts = np.cumsum(lengths) - lengths
    buf = np.frombuffer(b"".join(raw) + PAD, dtype=np.uint8)
    return word_hashes(buf, starts, lengths)


def _long_word_sum(data: bytes) -> int:
    padded = data + b"\0" * (-len(data) % 8)
    w = np.frombuffer(padded, dtype="<u8")
    return int(np.sum(w * power_table(_P, len(w)), dtype=_U64))
