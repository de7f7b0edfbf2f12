"""Readers for every input format, and text and id detection.

Eval sets and corpora share one reading path: a file is opened (decompressing by suffix), split
into records by its format (JSONL/NDJSON lines, a JSON array, TXT lines or documents, Parquet rows),
and each record becomes a :class:`~contam_cli.model.Record` through :func:`extract_text` and
:func:`extract_id`.
Every problem with an input is an :class:`~contam_cli.errors.InputError` naming the file and line.
"""

from __future__ import annotations

import bz2
import fnmatch
import gzip
import io
import lzma
import os
import re
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, cast

import orjson

from contam_cli.errors import InputError, MissingExtraError
from contam_cli.jsonarray import iter_array_elements
from contam_cli.model import Locator, Record

# NOTE: atomic_writer and write_atomic are re-exported for existing imports; use contam_cli.output.
from contam_cli.output import _split_compression, atomic_writer, write_atomic

__all__ = [
    "TextSpec",
    "atomic_writer",
    "detect_format",
    "extract_id",
    "extract_text",
    "iter_corpus",
    "iter_files",
    "iter_records",
    "open_binary",
    "read_eval",
    "iter_eval",
    "sha256_file",
    "write_atomic",
]

Format = Literal["jsonl", "json", "txt", "parquet", "arrow"]
Role = Literal["eval", "corpus"]
StrPath = str | os.PathLike[str]
"""A file system path as users pass it (``str`` or ``pathlib.Path``)."""
Where = tuple[str, int | None]
"""(path, line) of the record being read, for error messages."""

BLOCK_SIZE = 1 << 22
"""Bytes read per block when splitting lines (4 MiB: amortizes calls, stays cache-friendly)."""

_FORMATS: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".txt": "txt",
    ".parquet": "parquet",
    ".arrow": "arrow",
}
# Metadata files that Hugging Face `Dataset.save_to_disk` writes beside its .arrow shards.
_HF_METADATA = ("state.json", "dataset_info.json", "dataset_dict.json")
_TEXT_KEYS = "text, content, question, prompt, instruction, messages, conversations"
_ID_KEYS = ("id", "_id", "uid", "qid", "question_id", "task_id", "example_id", "idx")
_SHAREGPT_ROLES = {"human": "user", "gpt": "assistant", "system": "system"}
_BOM = b"\xef\xbb\xbf"
_MISSING = object()


@dataclass(frozen=True, slots=True)
class TextSpec:
    """Which part of a record is its text and which its id (``--field/--roles/--id-field``).

    ``TextSpec()`` auto-detects both; ``TextSpec(fields=("question", "choices.0"))`` joins two
    fields with a newline; ``TextSpec(roles=("user",))`` keeps only the user turns of a chat record.
    """

    fields: tuple[str, ...] = ()
    """Dotted paths (dict keys; integer parts index lists). Several are joined with "\\n"."""
    roles: tuple[str, ...] | None = None
    """Chat roles to keep (ShareGPT ``human``/``gpt`` match ``user``/``assistant``); None = all."""
    id_field: str | None = None
    """Dotted path of the id; None = the first of the usual id keys, else the position."""


# --------------------------------------------------------------------------------------------
# Files, formats, compression


def _format_of(name: str) -> Format | None:
    base, compression = _split_compression(name)
    fmt = _FORMATS.get(Path(base).suffix.lower())
    if fmt in ("parquet", "arrow") and compression:
        return None
    return fmt


def detect_format(path: StrPath) -> Format:
    """The format of ``path`` from its suffix, after stripping a compression suffix.

    >>> detect_format("train.ndjson.zst")
    'jsonl'
    """
    fmt = _format_of(Path(path).name)
    if fmt is None:
        raise InputError(
            path,
            "unknown file format (expected .jsonl, .ndjson, .json, .txt, .parquet or "
            ".arrow, the text formats optionally compressed with .gz, .bz2, .xz or .zst)",
        )
    return fmt


def _open_zstd(path: Path) -> BinaryIO:
    try:
        import zstandard
    except ImportError:
        raise MissingExtraError("zstandard", "zstd") from None
    # NOTE: read_across_frames, because `zstd` and parallel writers emit multi-frame files.
    reader = zstandard.ZstdDecompressor().stream_reader(
        open(path, "rb"), read_across_frames=True, closefd=True
    )
    return cast(BinaryIO, io.BufferedReader(reader, BLOCK_SIZE))  # type: ignore[arg-type]


def open_binary(path: StrPath) -> BinaryIO:
    """Open ``path`` for binary reading, decompressing .gz/.bz2/.xz/.zst on the fly."""
    p = Path(path)
    compression = _split_compression(p.name)[1]
    if compression == ".gz":
        return cast(BinaryIO, gzip.open(p, "rb"))
    if compression == ".bz2":
        return cast(BinaryIO, bz2.open(p, "rb"))
    if compression == ".xz":
        return cast(BinaryIO, lzma.open(p, "rb"))
    if compression == ".zst":
        return _open_zstd(p)
    return open(p, "rb")


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    base = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, g) or fnmatch.fnmatchcase(base, g) for g in patterns)


def _walk(root: Path) -> Iterator[str]:
    """Relative posix paths of the regular, non-hidden files below ``root``."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not _is_hidden(d)]
        rel_dir = Path(dirpath).relative_to(root)
        if any(name.endswith(".arrow") for name in filenames) or "dataset_dict.json" in filenames:
            # A Hugging Face dataset saved to disk: its records are in the .arrow shards.
            filenames = [n for n in filenames if n not in _HF_METADATA]
        for name in filenames:
            if not _is_hidden(name) and os.path.isfile(os.path.join(dirpath, name)):
                yield (rel_dir / name).as_posix()


def iter_files(
    path: StrPath, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[Path]:
    """The input files named by ``path``: the file itself, or the readable files below a directory.

    Directory members are found recursively, skipping hidden names, keeping known formats only, and
    filtered by ``include``/``exclude`` globs (matched against the relative posix path and the
    basename); they are sorted by relative path so every machine reads them in the same order.
    """
    root = Path(path)
    if not root.exists():
        raise InputError(path, "no such file or directory")
    if not root.is_dir():
        return [root]
    rels = sorted(
        rel
        for rel in _walk(root)
        if _format_of(rel) is not None
        and (not include or _matches(rel, include))
        and not _matches(rel, exclude)
    )
    if not rels:
        raise InputError(
            path,
            "no input files found (looked for .jsonl, .json, .txt, .ndjson, "
            ".parquet, .arrow; text formats optionally .gz/.bz2/.xz/.zst)",
        )
    return [root / rel for rel in rels]


def sha256_file(path: StrPath) -> str:
    """Hex SHA-256 of the raw (still compressed) bytes of ``path``, read in blocks."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


# --------------------------------------------------------------------------------------------
# Text and id extraction (shared by the eval and corpus readers)


def _fail(where: Where, message: str) -> InputError:
    return InputError(where[0], message, where[1])


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, (int, float)) else "a value")


def _lookup(obj: object, path: str) -> object:
    """The value at a dotted path, or ``_MISSING``. A key that itself contains dots wins."""
    if isinstance(obj, dict) and path in obj:
        return obj[path]
    current = obj
    for part in path.split("."):
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and re.fullmatch(r"-?\d+", part):
            index = int(part)
            if not -len(current) <= index < len(current):
                return _MISSING
            current = current[index]
        else:
            return _MISSING
    return current


def _turn_text(turn: dict[str, Any], spec: TextSpec, where: Where) -> str | None:
    """The text of one chat turn (OpenAI ``role/content`` or ShareGPT ``from/value``), if kept."""
    role = turn.get("role", turn.get("from"))
    if spec.roles is not None:
        raw = str(role)
        if raw not in spec.roles and _SHAREGPT_ROLES.get(raw, raw) not in spec.roles:
            return None
    content = turn["content"] if "content" in turn else turn.get("value")
    return None if content is None else _value_text(content, "content", spec, where)


def _item_text(item: object, name: str, spec: TextSpec, where: Where) -> str | None:
    """One list element: a string, a chat turn, or a content part (non-text parts give None)."""
    if isinstance(item, str):
        return item
    if isinstance(item, (int, float)):
        return str(item)
    if item is None:
        return None
    if isinstance(item, dict):
        if "role" in item or "from" in item:
            return _turn_text(item, spec, where)
        if "text" in item and str(item.get("type", "text")).endswith("text"):
            return _value_text(item["text"], name, spec, where)
        if "type" in item:
            return None
    raise _fail(
        where,
        f"field {name!r} holds {_kind(item)} that is not text, a chat turn or a "
        "content part; choose the text with --field",
    )


def _value_text(value: object, name: str, spec: TextSpec, where: Where) -> str:
    """Text from a field value: a string, a number, a list of strings/parts, or a chat."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        parts = (_item_text(item, name, spec, where) for item in value)
        return "\n".join(p for p in parts if p is not None)
    raise _fail(where, f"field {name!r} is {_kind(value)}, not text; choose the text with --field")


def _joined(obj: dict[str, Any], keys: Sequence[str], spec: TextSpec, where: Where) -> str:
    """The non-empty texts of ``keys`` (absent keys count as empty), joined by newlines."""
    texts = (_value_text(obj.get(key), key, spec, where) for key in keys)
    return "\n".join(text for text in texts if text)


def _auto_text(obj: dict[str, Any], spec: TextSpec, where: Where) -> str:
    for key in ("text", "content"):
        if obj.get(key) is not None:
            return _value_text(obj[key], key, spec, where)
    if obj.get("question") is not None:
        return _joined(obj, ("question", "answer"), spec, where)
    if obj.get("prompt") is not None:
        return _joined(obj, ("prompt", "completion"), spec, where)
    if obj.get("instruction") is not None:
        return _joined(obj, ("instruction", "input", "output"), spec, where)
    for key in ("messages", "conversations"):
        if obj.get(key) is not None:
            return _value_text(obj[key], key, spec, where)
    raise _fail(where, f"no text field found (looked for {_TEXT_KEYS}); use --field")


def _field_text(obj: object, field: str, spec: TextSpec, where: Where) -> str:
    value = _lookup(obj, field)
    if value is _MISSING:
        raise _fail(where, f"field {field!r} not found in this record")
    return _value_text(value, field, spec, where)


def extract_text(obj: object, spec: TextSpec, where: Where) -> str:
    """The text of one parsed record: ``spec.fields`` joined by newlines, or auto-detected.

    A bare JSON string is its own text. Auto-detection takes the first of ``text``, ``content``,
    ``question`` (+``answer``), ``prompt`` (+``completion``), ``instruction`` (+``input``,
    ``output``), ``messages`` and ``conversations``; chat turns are filtered by ``spec.roles``.

    >>> extract_text({"question": "2+2?", "answer": 4}, TextSpec(), ("x.jsonl", 1))
    '2+2?\\n4'
    """
    if isinstance(obj, str):
        return obj
    if not isinstance(obj, dict):
        raise _fail(where, f"record is {_kind(obj)}, expected an object or a string")
    if spec.fields:
        return "\n".join(_field_text(obj, field, spec, where) for field in spec.fields)
    return _auto_text(obj, spec, where)


def _as_id(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _find_id(obj: object, spec: TextSpec, where: Where, required: bool) -> str | None:
    if spec.id_field is not None:
        value = _lookup(obj, spec.id_field)
        if value is _MISSING:
            if not required:
                return None
            raise _fail(where, f"id field {spec.id_field!r} not found in this record")
        found = _as_id(value)
        if found is None:
            raise _fail(
                where,
                f"id field {spec.id_field!r} is {_kind(value)}, expected a string or an integer",
            )
        return found
    if isinstance(obj, dict):
        for key in _ID_KEYS:
            found = _as_id(obj.get(key))
            if found is not None:
                return found
    return None


def extract_id(obj: object, spec: TextSpec, where: Where) -> str | None:
    """The id of one parsed record (``spec.id_field`` or the first usual id key), or None.

    Integer ids become strings; booleans, null and containers are never ids. A missing
    ``spec.id_field`` is an error; with auto-detection, None means "use the position".

    >>> extract_id({"idx": 7}, TextSpec(), ("x.jsonl", 1))
    '7'
    """
    return _find_id(obj, spec, where, required=True)


# --------------------------------------------------------------------------------------------
# Format readers


@dataclass(frozen=True, slots=True)
class _Source:
    """What every format reader needs to know about the file it reads."""

    path: str
    role: Role
    spec: TextSpec
    name: str
    """File name relative to the directory given (or the basename of a file given): the id of a
    one-document TXT file and the prefix of qualified ids."""
    qualify_ids: bool = False
    """Prefix positional ids with ``name:`` (read_eval over several files)."""

    def make(self, obj: object, where: Where, position: str, locator: Locator) -> Record:
        text = extract_text(obj, self.spec, where)
        found = _find_id(obj, self.spec, where, required=self.role == "eval")
        if found is None:
            found = f"{self.name}:{position}" if self.qualify_ids else position
        return Record(found, text, locator)


def _decompress_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
    zstd = sys.modules.get("zstandard")
    return (*errors, zstd.ZstdError) if zstd is not None else errors


def _read(fh: BinaryIO, size: int, path: str, line: int | None) -> bytes:
    try:
        return fh.read(size)
    except _decompress_errors() as exc:
        raise InputError(path, f"cannot read file: {exc}", line) from None


def _iter_lines(fh: BinaryIO, offset: int, path: str) -> Iterator[tuple[int, bytes]]:
    """``(offset, line)`` for each line from ``offset`` on, without its ``\\n`` (``\\r`` is kept).

    NOTE: pieces without a newline are collected and joined once, so a huge line costs O(n).
    """
    pending: list[bytes] = []
    count = 0
    while block := _read(fh, BLOCK_SIZE, path, count + 1):
        if b"\n" not in block:
            pending.append(block)
            continue
        lines = b"".join((*pending, block)).split(b"\n") if pending else block.split(b"\n")
        pending = [lines.pop()]
        for line in lines:
            yield offset, line
            offset += len(line) + 1
        count += len(lines)
    tail = b"".join(pending)
    if tail:
        yield offset, tail


def _line_span(offset: int, line: bytes) -> tuple[int, int, bytes]:
    """Strip ``\\r`` (and a BOM at file start) from a line: ``(start, end, content)``."""
    if line.endswith(b"\r"):
        line = line[:-1]
    if offset == 0 and line.startswith(_BOM):
        return 3, len(line), line[3:]
    return offset, offset + len(line), line


def _parse_line(content: bytes, where: Where) -> object:
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        try:
            content.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise _fail(where, f"invalid UTF-8 (byte {bad.start + 1} of the line)") from None
        raise _fail(where, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


def _decode_line(content: bytes, where: Where) -> str:
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as bad:
        raise _fail(where, f"invalid UTF-8 (byte {bad.start + 1} of the line)") from None


def _line_records(
    src: _Source, lines: Iterator[tuple[int, bytes]], fmt: Format, end: int | None
) -> Iterator[Record]:
    """Records of a JSONL or eval-TXT stream. ``end`` set = byte-range mode (no line numbers)."""
    fast = not src.spec.fields and src.spec.id_field is None and fmt == "jsonl"
    ranged = end is not None
    limit = sys.maxsize if end is None else end
    line_no = 0
    ordinal = 0
    path = src.path
    for offset, raw in lines:
        line_no += 1
        if offset >= limit:
            return
        if not raw or raw.isspace():
            continue
        if offset and not raw.endswith(b"\r"):  # NOTE: hot path, _line_span inlined
            start, stop, content = offset, offset + len(raw), raw
        else:
            start, stop, content = _line_span(offset, raw)
        line = None if ranged else line_no
        where = (path, line)
        locator = Locator(path, line, None if ranged else ordinal, (start, stop))
        ordinal += 1
        if fmt == "txt":
            obj: object = _decode_line(content, where)
        else:
            obj = _parse_line(content, where)
            if fast and type(obj) is dict:  # NOTE: hot path: {"id": str, "text": str}, no spec.
                text = obj.get("text")
                found = obj.get("id")
                if type(text) is str and type(found) is str:
                    yield Record(found, text, locator)
                    continue
        yield src.make(obj, where, f"@{start}" if ranged else str(line_no), locator)


def _seek_line_start(fh: BinaryIO, start: int, path: str) -> int:
    """Position ``fh`` at the first line starting at or after ``start``; return that offset."""
    if start == 0:
        return 0
    pos = start - 1
    fh.seek(pos)
    while chunk := _read(fh, 1 << 16, path, None):
        newline = chunk.find(b"\n")
        if newline >= 0:
            fh.seek(pos + newline + 1)
            return pos + newline + 1
        pos += len(chunk)
    return pos


def _ranged_records(src: _Source, fmt: Format, byte_range: tuple[int, int]) -> Iterator[Record]:
    start, end = byte_range
    if not 0 <= start <= end:
        raise ValueError(f"invalid byte range {byte_range}")
    with open(src.path, "rb") as fh:
        first = _seek_line_start(fh, start, src.path)
        yield from _line_records(src, _iter_lines(fh, first, src.path), fmt, end)


def _decode_whole(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as bad:
        line = data.count(b"\n", 0, bad.start) + 1
        raise InputError(path, "invalid UTF-8", line) from None


def _read_all(path: str) -> bytes:
    with open_binary(path) as fh:
        return _read(fh, -1, path, None)


def _txt_document(src: _Source) -> Iterator[Record]:
    data = _read_all(src.path)
    start = 3 if data.startswith(_BOM) else 0
    text = _decode_whole(data, src.path)[1 if start else 0 :]
    if text.strip():
        yield Record(src.name, text, Locator(src.path, 1, 0, (start, len(data))))


def _json_records(src: _Source) -> Iterator[Record]:
    data = _read_all(src.path)
    elements = iter_array_elements(_decode_whole(data, src.path), src.path)
    for index, (obj, line, span) in enumerate(elements):
        where = (src.path, line)
        yield src.make(obj, where, str(index), Locator(src.path, line, index, span))


def _parquet_records(src: _Source) -> Iterator[Record]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError("pyarrow", "parquet") from None
    try:
        batches = pq.ParquetFile(src.path).iter_batches(batch_size=4096)
        index = 0
        for batch in batches:
            for row in batch.to_pylist():
                where = (src.path, None)
                yield src.make(row, where, str(index), Locator(src.path, None, index, None))
                index += 1
    except (OSError, ValueError) as exc:  # NOTE: pyarrow's ArrowInvalid is a ValueError.
        raise InputError(src.path, f"cannot read parquet: {exc}") from None


def _arrow_records(src: _Source) -> Iterator[Record]:
    """Rows of an Arrow IPC file (stream or file format), as `Dataset.save_to_disk` writes them."""
    try:
        import pyarrow as pa
    except ImportError:
        raise MissingExtraError("pyarrow", "parquet") from None
    try:
        with pa.memory_map(str(src.path)) as source:
            try:
                reader = pa.ipc.open_stream(source)
            except pa.ArrowInvalid:
                source.seek(0)
                reader = pa.ipc.open_file(source)
                batches: Iterator[Any] = (
                    reader.get_batch(i) for i in range(reader.num_record_batches)
                )
            else:
                batches = iter(reader)
            index = 0
            for batch in batches:
                for row in batch.to_pylist():
                    yield src.make(
                        row, (src.path, None), str(index), Locator(src.path, None, index, None)
                    )
                    index += 1
    except (OSError, ValueError) as exc:  # NOTE: pyarrow's ArrowInvalid is a ValueError.
        raise InputError(src.path, f"cannot read Arrow file: {exc}") from None


def _file_records(src: _Source, byte_range: tuple[int, int] | None) -> Iterator[Record]:
    fmt = detect_format(src.path)
    compressed = bool(_split_compression(Path(src.path).name)[1])
    if byte_range is not None:
        if compressed or not (fmt == "jsonl" or (fmt == "txt" and src.role == "eval")):
            raise ValueError(f"{src.path}: byte_range needs an uncompressed .jsonl or eval .txt")
        yield from _ranged_records(src, fmt, byte_range)
    elif fmt == "parquet":
        yield from _parquet_records(src)
    elif fmt == "arrow":
        yield from _arrow_records(src)
    elif fmt == "json":
        yield from _json_records(src)
    elif fmt == "txt" and src.role == "corpus":
        yield from _txt_document(src)
    else:
        with open_binary(src.path) as fh:
            yield from _line_records(src, _iter_lines(fh, 0, src.path), fmt, None)


def _read_file(src: _Source, byte_range: tuple[int, int] | None = None) -> Iterator[Record]:
    """Records of one file; an unreadable or empty file is an InputError."""
    count = 0
    try:
        for record in _file_records(src, byte_range):
            count += 1
            yield record
    except OSError as exc:
        raise InputError(src.path, f"cannot read file: {exc.strerror or exc}") from None
    if count == 0 and byte_range is None:
        raise InputError(src.path, "no records")


def iter_records(
    path: StrPath,
    *,
    role: Role,
    spec: TextSpec = TextSpec(),
    byte_range: tuple[int, int] | None = None,
) -> Iterator[Record]:
    """Stream the records of one file (or of every input file below a directory).

    ``byte_range=(start, end)`` (uncompressed .jsonl, or .txt with ``role="eval"``) yields exactly
    the records whose line starts at a byte offset in ``[start, end)``, so adjacent ranges split a
    file without loss or overlap. In that mode ``Locator.line`` and ``Locator.record`` are None
    (counting earlier lines would mean reading them), spans stay absolute file offsets, a record
    without an id gets ``"@<offset>"`` instead of its line number, and an empty range is no error.
    """
    if Path(path).is_dir():
        if byte_range is not None:
            raise ValueError(f"{path}: byte_range needs a file, not a directory")
        for file in iter_files(path):
            name = file.relative_to(path).as_posix()
            yield from _read_file(_Source(str(file), role, spec, name))
        return
    yield from _read_file(_Source(str(path), role, spec, Path(path).name), byte_range)


@dataclass
class TextBatch:
    """About `chunk_bytes` of consecutive documents of one file, as UTF-8 text, for scanning.

    Records are not built for the documents (that is most of the cost of reading); `record(d)`
    rebuilds document `d`'s full Record on demand, for the few that become evidence.
    """

    texts: list[bytes]
    offsets: list[int]
    """Byte offset of each document's record in the (decompressed) file; -1 when unknown."""
    first_ordinal: int
    """Ordinal of the first document within its file; -1 in byte-range mode."""
    record: Callable[[int], Record]
    lines: list[int]
    """1-based line of each document (-1 when unknown); in byte-range mode counted from the
    range's first line (see `line_count` of :func:`iter_text_batches`)."""


def iter_text_batches(
    path: StrPath,
    *,
    spec: TextSpec = TextSpec(),
    byte_range: tuple[int, int] | None = None,
    chunk_bytes: int = 1 << 20,
    line_count: list[int] | None = None,
) -> Iterator[TextBatch]:
    """The corpus documents of one file in batches, by the fastest route for its format.

    Yields exactly the documents of :func:`iter_records` (``role="corpus"``), with the same
    errors: JSONL (compressed or not) is parsed line by line straight to text; anything unusual
    on a line falls back to the full record reader for that line. `line_count`, when given,
    receives the number of lines read from a JSONL file (in byte-range mode: the lines starting
    inside the range, so that the counts of earlier ranges turn range lines into file lines).
    """
    src = _Source(str(path), "corpus", spec, Path(path).name)
    fmt = detect_format(path)
    if fmt == "jsonl":
        yield from _jsonl_text_batches(src, byte_range, chunk_bytes, line_count)
        return
    records: list[Record] = []
    size = ordinal = 0
    for rec in iter_records(path, role="corpus", spec=spec, byte_range=byte_range):
        records.append(rec)
        size += len(rec.text)
        if size >= chunk_bytes:
            yield _records_batch(records, ordinal)
            ordinal += len(records)
            records, size = [], 0
    if records:
        yield _records_batch(records, ordinal)


def _records_batch(records: list[Record], ordinal: int) -> TextBatch:
    return TextBatch(
        [r.text.encode("utf-8", "surrogatepass") for r in records],
        [r.locator.span[0] if r.locator.span else -1 for r in records],
        ordinal,
        records.__getitem__,
        [r.locator.line if r.locator.line is not None else -1 for r in records],
    )


def _jsonl_text_batches(
    src: _Source,
    byte_range: tuple[int, int] | None,
    chunk_bytes: int,
    line_count: list[int] | None,
) -> Iterator[TextBatch]:
    ranged = byte_range is not None
    if byte_range is not None:
        fh: BinaryIO = open(src.path, "rb")  # noqa: SIM115 - closed below
        start = _seek_line_start(fh, byte_range[0], src.path)
        limit = byte_range[1]
    else:
        fh, start, limit = open_binary(src.path), 0, sys.maxsize
    fast = not src.spec.fields and src.spec.id_field is None
    loads = orjson.loads
    count = 0
    try:
        batch = _LineBatch(src, ranged, 0)
        line_no = 0
        for offset, raw in _iter_lines(fh, start, src.path):
            line_no += 1
            if offset >= limit:
                line_no -= 1  # that line belongs to the next range
                break
            if not raw or raw.isspace():
                continue
            text: object = None
            if fast and offset:  # NOTE: offset 0 may start with a BOM: the full reader strips it
                try:
                    obj = loads(raw)
                except orjson.JSONDecodeError:
                    obj = None
                if type(obj) is dict:
                    text = obj.get("text")
            if type(text) is str:
                data = None if text.isascii() else _text_as_written(raw)
                batch.add(data or text.encode("utf-8"), offset, line_no, raw)
            else:  # the full reader: other shapes, --field, and the exact error for bad lines
                rec = batch.full_record(offset, line_no, raw, len(batch.texts))
                batch.add(rec.text.encode("utf-8", "surrogatepass"), offset, line_no, raw, rec)
            count += 1
            if batch.size >= chunk_bytes:
                yield batch.done()
                batch = _LineBatch(src, ranged, count)
        if batch.texts:
            yield batch.done()
        if line_count is not None:
            line_count.append(line_no)
    except OSError as exc:
        raise InputError(src.path, f"cannot read file: {exc.strerror or exc}") from None
    finally:
        fh.close()
    if count == 0 and not ranged:
        raise InputError(src.path, "no records")


def _text_as_written(line: bytes) -> bytes | None:
    """The UTF-8 of a JSONL line's top-level ``"text"`` string, sliced from the line itself, or
    None when that cannot be done safely (then the parsed string is encoded instead).

    NOTE: without a backslash in the line, no string holds an escape or a quote, so a string's
    bytes between its quotes are its UTF-8 text (orjson has already validated the line), and
    ``"text"`` appearing once can only be the top-level key the parser found. This saves
    re-encoding a non-ASCII text that was just decoded.
    """
    if b"\\" in line or line.count(b'"text"') != 1:
        return None
    at = line.find(b'"text":"')
    if at < 0:  # written with spaces around the colon
        return None
    start = at + 8
    return line[start : line.index(b'"', start)]


class _LineBatch:
    """A TextBatch being filled from the lines of a JSONL file."""

    def __init__(self, src: _Source, ranged: bool, first_ordinal: int) -> None:
        self.src, self.ranged, self.first = src, ranged, first_ordinal
        self.texts: list[bytes] = []
        self.offsets: list[int] = []
        self.lines: list[int] = []
        self.raws: list[bytes] = []
        self.built: dict[int, Record] = {}
        self.size = 0

    def add(
        self, text: bytes, offset: int, line: int, raw: bytes, rec: Record | None = None
    ) -> None:
        if rec is not None:
            self.built[len(self.texts)] = rec
            offset = rec.locator.span[0] if rec.locator.span else offset  # after a BOM
        self.texts.append(text)
        self.offsets.append(offset)
        self.lines.append(line)
        self.raws.append(raw)
        self.size += len(text)

    def full_record(self, offset: int, line_no: int, raw: bytes, d: int) -> Record:
        """Document `d` of this batch, read by the full record reader."""
        start, stop, content = _line_span(offset, raw)
        line = None if self.ranged else line_no
        where = (self.src.path, line)
        ordinal = None if self.ranged else self.first + d
        locator = Locator(self.src.path, line, ordinal, (start, stop))
        position = f"@{start}" if self.ranged else str(line_no)
        return self.src.make(_parse_line(content, where), where, position, locator)

    def record(self, d: int) -> Record:
        if d not in self.built:
            self.built[d] = self.full_record(self.offsets[d], self.lines[d], self.raws[d], d)
        return self.built[d]

    def done(self) -> TextBatch:
        first = -1 if self.ranged else self.first
        return TextBatch(self.texts, self.offsets, first, self.record, self.lines)


def _sources(
    paths: Sequence[StrPath],
    role: Role,
    spec: TextSpec,
    include: Sequence[str],
    exclude: Sequence[str],
) -> list[_Source]:
    sources = []
    for path in paths:
        is_dir = Path(path).is_dir()
        for file in iter_files(path, include, exclude):
            name = file.relative_to(path).as_posix() if is_dir else file.name
            sources.append(_Source(str(file), role, spec, name))
    return sources


def read_eval(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> list[Record]:
    """Every eval example from ``paths`` (files or directories), refusing duplicate ids.

    When more than one file is read, a record without an id gets ``"<file>:<line>"`` rather than
    the bare line number, so id-less files can be combined.
    """
    return list(iter_eval(paths, spec, include, exclude))


def iter_eval(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[Record]:
    """:func:`read_eval`, one record at a time (a duplicate id fails when it is reached)."""
    sources = _sources(paths, "eval", spec, include, exclude)
    qualify = len(sources) > 1
    seen: dict[str, Locator] = {}
    for src in sources:
        for record in _read_file(_Source(src.path, "eval", spec, src.name, qualify)):
            first = seen.setdefault(record.id, record.locator)
            if first is not record.locator:
                loc = record.locator
                raise InputError(
                    loc.path, f"duplicate id {record.id!r} (first seen at {first})", loc.line
                )
            yield record


def iter_corpus(
    paths: Sequence[StrPath],
    spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
) -> Iterator[Record]:
    """Stream every corpus document from ``paths`` (files or directories), in a stable order."""
    for src in _sources(paths, "corpus", spec, include, exclude):
        yield from _read_file(src)
