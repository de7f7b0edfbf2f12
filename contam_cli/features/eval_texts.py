"""The eval texts of the examples a reviewer will look at, put back into a report.

A scan drops every eval text once it is hashed (so 100,000 examples are never in memory at
once); the examples that matched something are then read again, by their place in the input, and
their texts attached to the report, where renderers show the leaked span in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from io import FileIO
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.engine.options import ScanOptions
from contam_cli.errors import InputError
from contam_cli.io.formats import format_of
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.lines import decode_line, line_span, parse_line
from contam_cli.io.model import Locator
from contam_cli.io.output import split_compression
from contam_cli.io.readers import eval_sources, iter_eval
from contam_cli.io.source import FileSource
from contam_cli.report import Report

__all__ = ["attach_eval_texts", "review_rows"]


def review_rows(report: Report) -> np.ndarray:
    """The examples worth a reviewer's look: flagged, or with a match in some source."""
    rows = set(np.flatnonzero(report.flagged_mask()).tolist())
    ngram = report.examples.ngram
    if ngram is not None:
        rows.update(ngram.detailed())
    return np.array(sorted(rows), dtype=np.int64)


def attach_eval_texts(report: Report, eval: Any, opts: ScanOptions) -> Report:
    """`report` with the texts of its :func:`review_rows` examples, read again from `eval` (the
    same input the report was made from). A redacted report keeps none; an eval set streamed
    from a generator cannot be read again and keeps none either."""
    wanted = review_rows(report)
    if report.redact or not len(wanted):
        return report
    given = classify(eval, what="eval")
    if given.paths:
        texts = pick_by_line(list(given.paths), wanted.tolist(), report, opts)
        if texts is not None:
            return replace(report, examples=report.examples.with_texts(texts))
        records: Any = iter_eval(list(given.paths), opts.eval_spec, opts.include, opts.exclude)
    elif isinstance(given.memory, Sequence):
        records = (
            as_record(x, i, "<memory>", opts.eval_spec, role="eval")
            for i, x in enumerate(given.memory)
        )
    else:
        return report
    texts = _pick(records, wanted.tolist(), report)
    return replace(report, examples=report.examples.with_texts(texts))


def _pick(records: Any, wanted: list[int], report: Report) -> dict[int, str]:
    out: dict[int, str] = {}
    want = iter(wanted)
    target = next(want, None)
    ids = report.examples.ids
    for k, rec in enumerate(records):
        if target is None:
            break
        if k == target:
            if rec.id != ids[k]:
                raise InputError(
                    rec.locator.path, "the eval set changed while it was being scanned"
                )
            out[k] = rec.text
            target = next(want, None)
    return out


# -- the texts of a few lines of line files, without parsing the others --------------------------

#: Bytes of a file searched for newlines at a time.
_BLOCK = 1 << 24


def pick_by_line(
    paths: list[Path], wanted: list[int], report: Report, opts: ScanOptions
) -> dict[int, str] | None:
    """The texts of examples `wanted`, each read at its line of its file, parsed as the eval
    reader parses a line; None (read everything again) unless every file holding one is an
    uncompressed JSONL or TXT file and every example read back has its id.

    NOTE: a million-example eval set is read again in a fraction of the time: the other lines
    are counted, not parsed.
    """
    table = report.examples
    sources = _line_sources(paths, opts)
    by_file: dict[str, list[tuple[int, int]]] = {}
    for k in wanted:
        path, line = table.eval_paths[k], table.eval_lines[k]
        if path not in sources or line is None:
            return None
        by_file.setdefault(path, []).append((line, k))
    out: dict[int, str] = {}
    for path, rows in by_file.items():
        src, fmt = sources[path]
        lines = _read_lines(path, sorted(rows))
        if lines is None:
            return None
        for (line, k), (offset, raw) in zip(sorted(rows), lines):
            if not raw or raw.isspace():  # NOTE: the reader never yields a blank line
                return None
            _, _, content = line_span(offset, raw)
            where = (path, line)
            obj = decode_line(content, where) if fmt == "txt" else parse_line(content, where)
            rec = src.make(obj, where, str(line), Locator(path, line))
            if rec.id != table.ids[k]:
                return None
            out[k] = rec.text
    return out


def _line_sources(paths: list[Path], opts: ScanOptions) -> dict[str, tuple[FileSource, str]]:
    """The eval files read line by line, as the eval reader names them (see iter_eval)."""
    out: dict[str, tuple[FileSource, str]] = {}
    for src in eval_sources(paths, opts.eval_spec, opts.include, opts.exclude):
        name = Path(src.path).name
        fmt = format_of(name)
        if fmt in ("jsonl", "txt") and not split_compression(name)[1]:
            out[src.path] = (src, fmt)
    return out


def _read_lines(path: str, rows: list[tuple[int, int]]) -> list[tuple[int, bytes]] | None:
    """(offset, bytes without the newline) of each line number of `rows`, in order; None if the
    file has fewer lines.

    NOTE: read into one buffer, never mapped: a mapped file's pages would count in this
    process's resident memory, a whole eval set of them.
    """
    with FileIO(path, "rb") as fh:
        starts = _line_starts(fh, [line for line, _ in rows])
        if starts is None:
            return None
        return [(start, _line_at(fh, start)) for start in starts]


def _line_starts(fh: FileIO, lines: list[int]) -> list[int] | None:
    """The byte offset where each of `lines` (1-based, ascending) starts in file `fh`."""
    out: list[int] = []
    want = iter(lines)
    target = next(want, None)
    while target == 1:
        out.append(0)
        target = next(want, None)
    buf = bytearray(_BLOCK)
    base = seen = 0  # bytes read, newlines among them
    while target is not None:
        got = fh.readinto(buf)
        if not got:
            return None
        newlines = np.flatnonzero(np.frombuffer(buf, dtype=np.uint8, count=got) == 10)
        # NOTE: line L starts after the (L-1)-th newline of the file.
        while target is not None and target - 1 - seen <= len(newlines):
            out.append(base + int(newlines[target - 2 - seen]) + 1)
            target = next(want, None)
        seen += len(newlines)
        base += got
    return out


def _line_at(fh: FileIO, start: int) -> bytes:
    """The line starting at byte `start`, without its newline."""
    fh.seek(start)
    parts = []
    size = 1 << 12  # NOTE: most lines are short: 4 KiB first, more only for a long one
    while piece := fh.read(size):
        cut = piece.find(b"\n")
        if cut >= 0:
            parts.append(piece[:cut])
            break
        parts.append(piece)
        size = min(size * 4, 1 << 20)
    return b"".join(parts)
