"""numba kernels of the JSONL corpus reader: JSON strings, numbers and literals (see
:mod:`contam_cli.io._jsonl_kernels`, which reads the lines and containers around them).

Each returns the index after what it read, or -1 to decline (the line then goes to the full
reader): nothing is accepted that orjson would read differently.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.io._intrinsics import load8 as _load8
from contam_cli.io._intrinsics import store8 as _store8
from contam_cli.io._intrinsics import trailing_zeros as _trailing_zeros

__all__ = ["literal", "number", "string"]

_U = np.uint64
_LOW = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_QUOTES = _U(0x2222222222222222)
_BACKSLASHES = _U(0x5C5C5C5C5C5C5C5C)
_SPACES = _U(0x2020202020202020)
_MAX_DIGITS = 15


@njit(cache=True, nogil=True)
def _plain8(x):  # noqa: ANN001, ANN202
    """Non-zero unless all 8 bytes of `x` are plain string characters: ASCII, not a control
    character, quote or backslash (the classic "has a zero byte" tests, one per kind)."""
    q = x ^ _QUOTES
    b = x ^ _BACKSLASHES
    special = ((q - _LOW) & ~q) | ((b - _LOW) & ~b) | ((x - _SPACES) & ~x) | x
    return special & _HIGH


@njit(cache=True, nogil=True)
def _utf8(buf, i, end):  # noqa: ANN001, ANN202
    """Length of the valid UTF-8 sequence at i (lead byte >= 0x80), or 0 when invalid."""
    b0 = buf[i]
    if 0xC2 <= b0 <= 0xDF:
        n = 2
    elif 0xE0 <= b0 <= 0xEF:
        n = 3
    elif 0xF0 <= b0 <= 0xF4:
        n = 4
    else:
        return 0
    if i + n > end:
        return 0
    for k in range(1, n):
        if buf[i + k] & 0xC0 != 0x80:
            return 0
    b1 = buf[i + 1]
    if b0 == 0xE0 and b1 < 0xA0:  # overlong
        return 0
    if b0 == 0xED and b1 >= 0xA0:  # an encoded surrogate
        return 0
    if b0 == 0xF0 and b1 < 0x90:  # overlong
        return 0
    if b0 == 0xF4 and b1 >= 0x90:  # above U+10FFFF
        return 0
    return n


@njit(cache=True, nogil=True)
def _hex4(buf, i, end):  # noqa: ANN001, ANN202
    if i + 4 > end:
        return -1
    v = 0
    for k in range(4):
        c = buf[i + k]
        if 0x30 <= c <= 0x39:
            d = c - 0x30
        elif 0x61 <= c <= 0x66:
            d = c - 0x61 + 10
        elif 0x41 <= c <= 0x46:
            d = c - 0x41 + 10
        else:
            return -1
        v = v * 16 + d
    return v


@njit(cache=True, nogil=True)
def _put(out, o, cp):  # noqa: ANN001, ANN202
    """Write code point `cp` as UTF-8 at out[o]; the new end."""
    if cp < 0x80:
        out[o] = cp
        return o + 1
    if cp < 0x800:
        out[o] = 0xC0 | (cp >> 6)
        out[o + 1] = 0x80 | (cp & 0x3F)
        return o + 2
    if cp < 0x10000:
        out[o] = 0xE0 | (cp >> 12)
        out[o + 1] = 0x80 | ((cp >> 6) & 0x3F)
        out[o + 2] = 0x80 | (cp & 0x3F)
        return o + 3
    out[o] = 0xF0 | (cp >> 18)
    out[o + 1] = 0x80 | ((cp >> 12) & 0x3F)
    out[o + 2] = 0x80 | ((cp >> 6) & 0x3F)
    out[o + 3] = 0x80 | (cp & 0x3F)
    return o + 4


@njit(cache=True, nogil=True)
def string(buf, i, end, out, o, write):  # noqa: ANN001, ANN202
    """Read the string whose opening quote is at i. Returns (index after the closing quote, new
    out end, whether it was exactly the key ``text`` unescaped); index -1 to decline."""
    i += 1
    start = i
    escaped = False
    while i < end:
        # Eight plain ASCII characters at a time (no quote, backslash, control or high byte),
        # then the plain ones before the first other byte.
        while i + 8 <= end:
            x = _load8(buf, i)
            special = _plain8(x)
            if special == _U(0):
                if write:
                    _store8(out, o, x)
                    o += 8
                i += 8
            else:
                # NOTE: the lowest flagged byte is exact (borrows only run upwards); the bytes
                # stored past the plain ones are overwritten by what follows, or cut off.
                plain = np.int64(_trailing_zeros(special) >> _U(3))
                if write:
                    _store8(out, o, x)
                    o += plain
                i += plain
                # NOTE: the common UTF-8 sequences, two bytes or three (not after E0 or ED,
                # whose second byte has a narrower range), are taken here without leaving the
                # loop: all of them are valid. Everything else goes below (_utf8, escapes).
                # Calling _utf8 here instead was slower: 0.59 against 0.40 ns per byte of the
                # bench corpus (a /tmp copy of scan_lines, compiled both ways).
                c = buf[i]
                if 0xC2 <= c <= 0xDF:
                    if i + 1 < end and buf[i + 1] & 0xC0 == 0x80:
                        if write:
                            out[o] = c
                            out[o + 1] = buf[i + 1]
                            o += 2
                        i += 2
                        continue
                elif 0xE1 <= c <= 0xEF and c != 0xED:
                    if i + 2 < end and buf[i + 1] & 0xC0 == 0x80 and buf[i + 2] & 0xC0 == 0x80:
                        if write:
                            out[o] = c
                            out[o + 1] = buf[i + 1]
                            out[o + 2] = buf[i + 2]
                            o += 3
                        i += 3
                        continue
                break
        if i >= end:
            break
        c = buf[i]
        if c == 0x22:
            plain = not escaped and i - start == 4
            is_text = (
                plain
                and buf[start] == 0x74
                and buf[start + 1] == 0x65
                and buf[start + 2] == 0x78
                and buf[start + 3] == 0x74
            )
            return i + 1, o, is_text
        if c == 0x5C:
            escaped = True
            if i + 1 >= end:
                return -1, o, False
            e = buf[i + 1]
            cp = -1
            if e == 0x22 or e == 0x5C or e == 0x2F:
                cp = e
            elif e == 0x62:
                cp = 0x08
            elif e == 0x66:
                cp = 0x0C
            elif e == 0x6E:
                cp = 0x0A
            elif e == 0x72:
                cp = 0x0D
            elif e == 0x74:
                cp = 0x09
            elif e == 0x75:
                cp = _hex4(buf, i + 2, end)
                if cp < 0:
                    return -1, o, False
                if 0xDC00 <= cp <= 0xDFFF:
                    return -1, o, False  # a lone low surrogate: the full reader notes it
                if 0xD800 <= cp <= 0xDBFF:
                    if i + 12 > end or buf[i + 6] != 0x5C or buf[i + 7] != 0x75:
                        return -1, o, False
                    lo = _hex4(buf, i + 8, end)
                    if lo < 0xDC00 or lo > 0xDFFF:
                        return -1, o, False
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                    i += 6
                i += 4
            else:
                return -1, o, False
            if write:
                o = _put(out, o, cp)
            i += 2
            continue
        if c < 0x20:
            return -1, o, False  # a raw control character
        if c < 0x80:
            if write:
                out[o] = c
                o += 1
            i += 1
            continue
        n = _utf8(buf, i, end)
        if n == 0:
            return -1, o, False
        if write:
            for k in range(n):
                out[o + k] = buf[i + k]
            o += n
        i += n
    return -1, o, False


@njit(cache=True, nogil=True)
def number(buf, i, end):  # noqa: ANN001, ANN202
    """Index after the number at i; -1 to decline (invalid, an exponent, or many digits)."""
    if buf[i] == 0x2D:
        i += 1
    if i >= end:
        return -1
    digits = 0
    if buf[i] == 0x30:
        i += 1
        digits = 1
    elif 0x31 <= buf[i] <= 0x39:
        while i < end and 0x30 <= buf[i] <= 0x39:
            i += 1
            digits += 1
    else:
        return -1
    if i < end and buf[i] == 0x2E:
        i += 1
        frac = 0
        while i < end and 0x30 <= buf[i] <= 0x39:
            i += 1
            frac += 1
        if frac == 0:
            return -1
        digits += frac
    if i < end and (buf[i] == 0x65 or buf[i] == 0x45):
        return -1
    if digits > _MAX_DIGITS:
        return -1
    return i


@njit(cache=True, nogil=True)
def literal(buf, i, end):  # noqa: ANN001, ANN202
    c = buf[i]
    if c == 0x74 and i + 4 <= end:  # true
        if buf[i + 1] == 0x72 and buf[i + 2] == 0x75 and buf[i + 3] == 0x65:
            return i + 4
    elif c == 0x66 and i + 5 <= end:  # false
        if buf[i + 1] == 0x61 and buf[i + 2] == 0x6C and buf[i + 3] == 0x73 and buf[i + 4] == 0x65:
            return i + 5
    elif c == 0x6E and i + 4 <= end:  # null
        if buf[i + 1] == 0x75 and buf[i + 2] == 0x6C and buf[i + 3] == 0x6C:
            return i + 4
    return -1
