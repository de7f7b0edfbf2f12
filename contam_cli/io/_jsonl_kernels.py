"""numba kernel of the JSONL corpus reader; imported only through :mod:`contam_cli.io.jsonl_fast`.

One pass over a block of complete lines validates each line as JSON and decodes its top-level
``"text"`` string straight into one output buffer, with no Python objects per line. The kernel
is sure or it declines: a line it accepts is valid JSON (RFC 8259, UTF-8) holding one top-level
``"text"`` key with a string value, and the bytes it writes are that string's UTF-8, exactly what
``orjson.loads(line)["text"].encode()`` gives. Anything else -- another shape, an escaped key, a
lone surrogate, a number orjson might read differently (an exponent, many digits), deep nesting,
invalid UTF-8 or JSON -- is declined (status FALLBACK), and the caller reads that line with the
full reader, which gives the exact record or error. Declining more than necessary is harmless
(slower, never different); accepting wrongly would not be, hence the test against orjson.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from contam_cli.io._json_scalars import literal as _literal
from contam_cli.io._json_scalars import number as _number
from contam_cli.io._json_scalars import string as _string

BLANK, FAST, FALLBACK = 0, 1, 2

_MAX_DEPTH = 64


@njit(cache=True, nogil=True)
def _ws(c):  # noqa: ANN001, ANN202
    # NOTE: not the newline, which ends the line: the parser stops there on its own.
    return c == 0x20 or c == 0x09 or c == 0x0D


@njit(cache=True, nogil=True)
def _skip(buf, i, end):  # noqa: ANN001, ANN202
    while i < end and _ws(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True)
def _line(buf, i, end, out, o, stack, ids, io, want_id):  # noqa: ANN001, ANN202
    """Validate the line starting at i and decode its text; (status, text start, text end,
    line end, id start, id end). The line ends at the first newline (or `end`): nothing the
    parser accepts holds a raw newline (a string declines control characters, whitespace here
    is not the newline, no token matches it), so it never reads past the line and finds the
    line's end itself. With `want_id`, the line must also hold one top-level ``"id"`` key with
    a string value, decoded into `ids` from `io` on."""
    i = _skip(buf, i, end)
    if i >= end or buf[i] != 0x7B:
        return FALLBACK, 0, 0, -1, 0, 0
    depth = 0
    stack[0] = 0x7B
    i += 1
    t0 = t1 = -1
    i0 = i1 = -1
    first = True  # at the start of a container: its end may come at once
    while True:
        # The start of a member of the container at `depth` (or its end, when `first`).
        i = _skip(buf, i, end)
        if i >= end:
            return FALLBACK, 0, 0, -1, 0, 0
        c = buf[i]
        in_object = stack[depth] == 0x7B
        if first and c == (0x7D if in_object else 0x5D):
            i += 1
            depth -= 1  # an empty container closed: a value of the level above
        else:
            top_text = top_id = False
            if in_object:
                if c != 0x22:
                    return FALLBACK, 0, 0, -1, 0, 0
                key = i
                i, o, is_key_text = _string(buf, i, end, out, o, False)
                if i < 0:
                    return FALLBACK, 0, 0, -1, 0, 0
                top_text = is_key_text and depth == 0
                # NOTE: four bytes from quote to quote: the key is exactly "id", unescaped.
                top_id = want_id and depth == 0 and i - key == 4
                top_id = top_id and buf[key + 1] == 0x69 and buf[key + 2] == 0x64
                i = _skip(buf, i, end)
                if i >= end or buf[i] != 0x3A:
                    return FALLBACK, 0, 0, -1, 0, 0
                i = _skip(buf, i + 1, end)
                if i >= end:
                    return FALLBACK, 0, 0, -1, 0, 0
                c = buf[i]
            if c == 0x7B or c == 0x5B:
                if top_text or top_id or depth + 1 >= _MAX_DEPTH:
                    return FALLBACK, 0, 0, -1, 0, 0
                depth += 1
                stack[depth] = c
                i += 1
                first = True
                continue
            if top_text:
                if t0 >= 0 or c != 0x22:
                    return FALLBACK, 0, 0, -1, 0, 0  # a second "text", or not a string
                t0 = o
                i, o, _ = _string(buf, i, end, out, o, True)
                t1 = o
            elif top_id:
                if i0 >= 0 or c != 0x22:
                    return FALLBACK, 0, 0, -1, 0, 0  # a second "id", or not a string
                i0 = io
                i, io, _ = _string(buf, i, end, ids, io, True)
                i1 = io
            elif c == 0x22:
                i, o, _ = _string(buf, i, end, out, o, False)
            elif c == 0x2D or 0x30 <= c <= 0x39:
                i = _number(buf, i, end)
            else:
                i = _literal(buf, i, end)
            if i < 0:
                return FALLBACK, 0, 0, -1, 0, 0
        # After a value of the container at `depth` (-1: the line's object has closed).
        while depth >= 0:
            i = _skip(buf, i, end)
            if i >= end:
                return FALLBACK, 0, 0, -1, 0, 0
            c = buf[i]
            if c == 0x2C:
                i += 1
                break
            if c != (0x7D if stack[depth] == 0x7B else 0x5D):
                return FALLBACK, 0, 0, -1, 0, 0
            i += 1
            depth -= 1
        if depth < 0:
            break
        first = False
    i = _skip(buf, i, end)
    if (i < end and buf[i] != 0x0A) or t0 < 0 or (want_id and i0 < 0):
        return FALLBACK, 0, 0, -1, 0, 0
    return FAST, t0, t1, i, i0, i1


@njit(cache=True, nogil=True)
def _grown(a, size):  # noqa: ANN001, ANN202
    b = np.empty(size, a.dtype)
    b[: a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def scan_lines(buf, first_is_file_start):  # noqa: ANN001, ANN201
    """Every line of `buf` (complete lines; the last may lack its newline): its start and end
    (without the newline), its status (BLANK, FAST or FALLBACK), and for FAST lines the span of
    its text in the returned buffer. A line at the start of the file is FALLBACK (a BOM). One
    pass over an accepted line: parsing it finds its end.

    The buffer is laid out as the tokenizer joins documents: a newline, then each text followed
    by a newline, so consecutive accepted lines' texts are one slice of it, ready to tokenize.
    """
    starts, ends, status, t0, t1, out, _, _, _ = _scan(buf, first_is_file_start, False)
    return starts, ends, status, t0, t1, out


@njit(cache=True, nogil=True)
def scan_eval_lines(buf, first_is_file_start):  # noqa: ANN001, ANN201
    """:func:`scan_lines` for an eval set: a FAST line also holds one top-level ``"id"`` with
    a string value, whose UTF-8 is in the second buffer returned (the span of each line's id
    after its text's)."""
    return _scan(buf, first_is_file_start, True)


@njit(cache=True, nogil=True)
def _scan(buf, first_is_file_start, want_id):  # noqa: ANN001, ANN202
    n = buf.shape[0]
    cap = n // 256 + 16  # lines, grown as needed
    starts = np.empty(cap, np.int64)
    ends = np.empty(cap, np.int64)
    status = np.empty(cap, np.uint8)
    t_start = np.zeros(cap, np.int64)
    t_end = np.zeros(cap, np.int64)
    i_start = np.zeros(cap if want_id else 0, np.int64)
    i_end = np.zeros(cap if want_id else 0, np.int64)
    # NOTE: an accepted line is at least 12 bytes ('{"text":""}' and its newline) and adds one
    # newline to the texts, which are never longer than the lines they come from; nor are the
    # ids (8 bytes more: a string's bytes are stored 8 at a time).
    out = np.empty(n + n // 12 + 2, np.uint8)
    ids = np.empty(n + 8 if want_id else 0, np.uint8)
    out[0] = 0x0A
    stack = np.empty(_MAX_DEPTH, np.uint8)
    o = 1
    io = 0
    i = 0
    k = 0
    while i < n:
        if k == cap:
            cap *= 2
            starts, ends = _grown(starts, cap), _grown(ends, cap)
            status, t_start, t_end = _grown(status, cap), _grown(t_start, cap), _grown(t_end, cap)
            if want_id:
                i_start, i_end = _grown(i_start, cap), _grown(i_end, cap)
        starts[k] = i
        j = -1
        if k or not first_is_file_start:
            s, a, b, j, id0, id1 = _line(buf, i, n, out, o, stack, ids, io, want_id)
            if j >= 0:
                status[k] = FAST
                t_start[k] = a
                t_end[k] = b
                out[b] = 0x0A
                o = b + 1
                if want_id:
                    i_start[k] = id0
                    i_end[k] = id1
                    io = id1
        if j < 0:  # declined (or a blank line): find its end
            j = i
            blank = True
            while j < n and buf[j] != 0x0A:
                c = buf[j]
                if not (c == 0x20 or (0x09 <= c <= 0x0D)):
                    blank = False
                j += 1
            status[k] = BLANK if blank else FALLBACK
            t_start[k] = t_end[k] = 0
        ends[k] = j
        i = j + 1
        k += 1
    m = k if want_id else 0
    texts = (starts[:k], ends[:k], status[:k], t_start[:k], t_end[:k], out[:o])
    return (
        texts[0],
        texts[1],
        texts[2],
        texts[3],
        texts[4],
        texts[5],
        i_start[:m],
        i_end[:m],
        ids[:io],
    )
