"""Fuzz the readers: `contam_cli.io.readers.iter_records` on a temp file made from the input.

The first byte of the input picks the variant: format (.jsonl, .json, .txt), role (eval or
corpus), compression (none, .gz, .bz2, .xz, .zst), and whether the rest of the input is the
content (compressed here first) or is itself the compressed bytes; the second byte picks a
TextSpec. What must hold:

- the only exception is InputError, and its message starts with the file's path;
- a compressed file reads exactly like its decompressed content in a plain file: the same
  records (text, line, ordinal, span) or the same error;
- compressed bytes that do not decompress whole (truncated, corrupt, trailing garbage after the
  last stream) are an error, never a short read;
- JSONL and eval TXT: one record per non-blank line, or an error; every span lies in the file
  and is that line's bytes (without ``\\r`` and a leading BOM); a corpus TXT file is one
  document holding the whole text.

Run: ``python fuzz/fuzz_readers.py [libFuzzer flags] [corpus dirs]`` (see scripts/fuzz.sh).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import zstandard  # noqa: E402
from _harness import ALLOWED, main  # noqa: E402

from contam_cli.io.extract import TextSpec  # noqa: E402
from contam_cli.io.readers import iter_records  # noqa: E402

FORMATS = (".jsonl", ".json", ".txt")
ROLES = ("eval", "corpus")
COMPRESSIONS = ("", ".gz", ".bz2", ".xz", ".zst")
HOWS = ("content", "compressed")
SPECS = (
    TextSpec(),
    TextSpec(fields=("text",)),
    TextSpec(fields=("a.b", "c.0")),
    TextSpec(roles=("user",)),
    TextSpec(id_field="id"),
    TextSpec(fields=("messages",), roles=("assistant", "user"), id_field="meta.id"),
)
VARIANTS = [
    (fmt, role, comp, how)
    for fmt in FORMATS
    for role in ROLES
    for comp in COMPRESSIONS
    for how in HOWS
    if comp or how == "content"
]

COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    ".gz": lambda b: gzip.compress(b, mtime=0),
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda b: zstandard.ZstdCompressor().compress(b),
}

_DIR = tempfile.mkdtemp(prefix="contam-fuzz-readers-")


def _strict_decompress(comp: str, data: bytes) -> bytes | None:
    """`data` decompressed whole (every stream or frame, nothing after the last but the zero
    padding .gz and .xz allow), or None when it does not decompress whole. An empty file is
    None."""
    if comp == ".gz":
        # NOTE: the stdlib's own member loop (zero padding allowed, trailing data refused); it
        # accepts reserved header flags, as gzip.open does, where zlib alone refuses them.
        try:
            return gzip.decompress(data) if data else None
        except (OSError, EOFError, zlib.error):
            return None
    makers: dict[str, Callable[[], object]] = {
        ".bz2": bz2.BZ2Decompressor,
        ".xz": lzma.LZMADecompressor,
        ".zst": lambda: zstandard.ZstdDecompressor().decompressobj(),
    }
    out: list[bytes] = []
    rest = data
    started = False
    while rest:
        if started and comp == ".xz":
            rest = rest.lstrip(b"\0")  # NOTE: stream padding between and after .xz streams
            if not rest:
                break
        d = makers[comp]()
        try:
            out.append(d.decompress(rest))  # type: ignore[attr-defined]
        except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error, zstandard.ZstdError):
            return None
        done = d.eof  # type: ignore[attr-defined]
        if not done:
            return None
        rest = d.unused_data  # type: ignore[attr-defined]
        started = True
    return b"".join(out) if started else None


def _blank(line: bytes) -> bool:
    return not line or line.isspace()


def _outcome(path: str, role: str, spec: TextSpec) -> tuple[str, object]:
    """('ok', records as plain tuples) or ('error', message without the path)."""
    try:
        records = list(iter_records(path, role=role, spec=spec))  # type: ignore[arg-type]
    except ALLOWED as e:
        message = str(e)
        assert message.startswith(path), f"error does not start with the path: {message!r}"
        return "error", message[len(path) :]
    name = Path(path).name
    rows = []
    for r in records:
        assert isinstance(r.id, str) and isinstance(r.text, str), r
        rid = "<name>" if r.id == name else r.id
        rows.append((rid, r.text, r.locator.line, r.locator.record, r.locator.span))
    return "ok", rows


def _check_plain(content: bytes, fmt: str, role: str, got: tuple[str, object]) -> None:
    """What must hold of an uncompressed file's records."""
    kind, rows = got
    if kind != "ok":
        return
    assert isinstance(rows, list) and rows, "ok but no records"
    for _, _, _, _, span in rows:
        assert span is not None and 0 <= span[0] <= span[1] <= len(content), span
    if fmt == ".jsonl" or (fmt == ".txt" and role == "eval"):
        lines = content.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        offsets, at = [], 0
        for line in lines:
            offsets.append(at)
            at += len(line) + 1
        kept = [(i, o, line) for i, (o, line) in enumerate(zip(offsets, lines)) if not _blank(line)]
        assert len(rows) == len(kept), f"{len(kept)} non-blank lines, {len(rows)} records"
        for (i, offset, line), (_, text, line_no, _, span) in zip(kept, rows):
            assert line_no == i + 1, (line_no, i + 1)
            expect = line[:-1] if line.endswith(b"\r") else line
            start = offset
            if offset == 0 and expect.startswith(b"\xef\xbb\xbf"):
                expect, start = expect[3:], 3
            assert span == (start, start + len(expect)), (span, start, len(expect))
            if fmt == ".txt":
                assert text == expect.decode("utf-8"), (text, expect)
    elif fmt == ".txt":  # a corpus TXT file: one document, the whole text
        body = content[3:] if content.startswith(b"\xef\xbb\xbf") else content
        assert len(rows) == 1 and rows[0][1] == body.decode("utf-8"), rows


def check(data: bytes) -> None:
    if len(data) < 2:
        return
    fmt, role, comp, how = VARIANTS[data[0] % len(VARIANTS)]
    spec = SPECS[data[1] % len(SPECS)]
    payload = data[2:]
    if comp and how == "content":
        content: bytes | None = payload
        raw = COMPRESS[comp](payload)
    elif comp:
        raw = payload
        content = _strict_decompress(comp, payload)
    else:
        raw = content = payload
    path = os.path.join(_DIR, "in" + fmt + comp)
    with open(path, "wb") as fh:
        fh.write(raw)
    got = _outcome(path, role, spec)
    if not comp:
        _check_plain(payload, fmt, role, got)
        return
    if content is None:
        assert got[0] == "error", f"{comp} bytes that do not decompress whole were read: {got}"
        return
    plain = os.path.join(_DIR, "plain", "in" + fmt)
    os.makedirs(os.path.dirname(plain), exist_ok=True)
    with open(plain, "wb") as fh:
        fh.write(content)
    expected = _outcome(plain, role, spec)
    _check_plain(content, fmt, role, expected)
    assert got == expected, f"{comp} file reads differently from its content:\n{got}\n{expected}"


if __name__ == "__main__":
    main(check)
