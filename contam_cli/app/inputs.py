"""What the page was given, as named bytes: pasted text and uploads, checked against the caps
before anything is parsed.

A pasted input gets a name whose suffix says its format (``pasted-eval.jsonl``), chosen by the
visitor or sniffed from its first characters; an upload keeps its own name (``corpus.txt.gz``),
so :func:`contam_cli.io.memory.records_from_bytes` reads both as files of those names would be.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import orjson

from contam_cli.app.limits import Limits
from contam_cli.errors import UsageError
from contam_cli.io.formats import read
from contam_cli.io.memory import open_bytes
from contam_cli.io.output import split_compression

__all__ = [
    "PASTE_FORMATS",
    "NamedBytes",
    "Upload",
    "corpus_inputs",
    "eval_input",
    "expanded_size",
    "sniff",
]

#: The formats a pasted input can be read as (label -> name suffix; None: sniffed).
PASTE_FORMATS: dict[str, str | None] = {
    "auto": None,
    "JSONL (one record per line)": ".jsonl",
    "JSON (an array of records)": ".json",
    "plain text": ".txt",
}


@dataclass(frozen=True)
class NamedBytes:
    """One input: its bytes and the name that says how to read them."""

    name: str
    data: bytes


class Upload(Protocol):
    """What the page needs of an uploaded file (Streamlit's ``UploadedFile`` has it)."""

    @property
    def name(self) -> str: ...

    @property
    def size(self) -> int: ...

    def getvalue(self) -> bytes: ...


def sniff(data: bytes) -> str:
    """The suffix of pasted `data`: ``.json`` for an array (or an object that is not one
    record per line), ``.jsonl`` when the first line is a whole JSON value, else ``.txt``.

    >>> sniff(b'{"id": 1, "text": "a"}\\n{"id": 2, "text": "b"}'), sniff(b"[1]"), sniff(b"hi")
    ('.jsonl', '.json', '.txt')
    """
    body = data.removeprefix(b"\xef\xbb\xbf").lstrip()  # NOTE: the readers skip a BOM too
    if body.startswith(b"["):
        return ".json"
    if not body.startswith(b"{"):
        return ".txt"
    first = body.split(b"\n", 1)[0]
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        # NOTE: a pretty-printed object spans lines; a broken first record of a JSONL paste
        # is reported by the JSON reader then, naming the line, which still helps.
        return ".json"
    return ".jsonl"


def _pasted(text: str, what: str, fmt: str, limits: Limits) -> NamedBytes | None:
    if not text.strip():
        return None
    # NOTE: characters never outnumber UTF-8 bytes: a paste far over the cap is refused before
    # it is copied by encoding it.
    limits.check(what, len(text))
    # NOTE: "surrogatepass" keeps a lone surrogate (possible in a browser's text) as bytes that
    # are not UTF-8, so the reader refuses it with its line, as it would in a file.
    data = text.encode("utf-8", "surrogatepass")
    limits.check(what, len(data))
    if fmt not in PASTE_FORMATS:
        raise UsageError(f"unknown format {fmt!r} (formats: {', '.join(PASTE_FORMATS)})")
    suffix = PASTE_FORMATS[fmt] or sniff(data)
    return NamedBytes(f"pasted-{what}{suffix}", data)


def eval_input(text: str, fmt: str, upload: Upload | None, limits: Limits) -> NamedBytes:
    """The eval set: pasted, or one uploaded file (not both)."""
    if upload is not None:
        if text.strip():
            raise UsageError("eval: give the examples pasted or uploaded, not both")
        limits.check("eval", upload.size)
        data = upload.getvalue()
        limits.check("eval", expanded_size(upload.name, data, limits.max_eval_bytes))
        return NamedBytes(upload.name, data)
    pasted = _pasted(text, "eval", fmt, limits)
    if pasted is None:
        raise UsageError("eval: paste some examples or upload a file")
    return pasted


def corpus_inputs(
    text: str, fmt: str, uploads: Sequence[Upload], limits: Limits
) -> tuple[NamedBytes, ...]:
    """The corpus: pasted text and every uploaded file, their sizes together under the cap."""
    limits.check("corpus", sum(u.size for u in uploads) + len(text))
    pasted = _pasted(text, "corpus", fmt, limits)
    total = sum(u.size for u in uploads) + (len(pasted.data) if pasted else 0)
    limits.check("corpus", total)
    found = ([pasted] if pasted else []) + [NamedBytes(u.name, u.getvalue()) for u in uploads]
    if not found:
        raise UsageError("corpus: paste a document or upload files")
    expanded = 0
    for item in found:  # NOTE: the cap holds for what the scan reads, decompressed
        expanded += expanded_size(item.name, item.data, limits.max_corpus_bytes - expanded)
        limits.check("corpus", expanded)
    return tuple(found)


def expanded_size(name: str, data: bytes, most: int) -> int:
    """The bytes `data` holds once decompressed by `name`'s suffix, counted a block at a time
    and no further than past `most`: a small upload can expand a thousandfold (a 42 KB gzip
    of 12 MB), and the caps are there to keep one visitor from filling the container."""
    if not split_compression(name)[1]:
        return len(data)
    total = 0
    with open_bytes(data, name) as fh:
        while total <= most:
            block = read(fh, 1 << 20, name, None)
            if not block:
                break
            total += len(block)
    return total
