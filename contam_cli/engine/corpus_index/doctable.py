"""The per-document table of an index (``s{k}.docs.npz``), from the map tasks' pieces.

A map task counts the records and lines of a byte range from the range's start (it cannot know
how many came before); here, once every task is done, each range's counts are shifted by those of
the earlier ranges of its file, as a scan turns range lines and records into file ones
(:func:`~contam_cli.engine.corpus_pass.fill_ranged_evidence`), so the table is the serial
build's. The file is written with fixed zip timestamps: the same table gives the same bytes.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from contam_cli.engine.corpus_index.mapper import DOC_COLUMNS, MapResult
from contam_cli.errors import InputError

__all__ = ["check_ranged_files", "doc_table", "save_npz"]

_EPOCH = (1980, 1, 1, 0, 0, 0)
"""The zip format's earliest time, for every member (np.savez stamps the current time)."""


def doc_table(results: Sequence[MapResult]) -> dict[str, np.ndarray]:
    """One source's table: its map tasks' pieces in order, record ordinals and lines of byte
    ranges counted from their file's start."""
    parts = [r.docs for r in results if r.docs is not None]
    table = {
        k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
        for k in DOC_COLUMNS
    }
    docs_before: dict[str, int] = {}
    lines_before: dict[str, int] = {}
    at = 0
    for r in results:
        for item in r.items:
            if item.range_start is not None:
                piece = slice(at, at + item.documents)
                table["record"][piece] += docs_before.get(item.path, 0)
                table["line"][piece] += lines_before.get(item.path, 0)
                docs_before[item.path] = docs_before.get(item.path, 0) + item.documents
                lines_before[item.path] = lines_before.get(item.path, 0) + item.lines
            at += item.documents
    return table


def check_ranged_files(results: Sequence[MapResult]) -> None:
    """A file read in byte ranges must hold a record, as a file read whole must (the reader
    says so of a whole file; a range may be empty).

    >>> from contam_cli.engine.corpus_index.mapper import ItemInfo
    >>> r = MapResult(0, 0, np.zeros(1), (ItemInfo("a.jsonl", 0, 0, 3),), None)
    >>> check_ranged_files([r])
    Traceback (most recent call last):
    ...
    contam_cli.errors.InputError: a.jsonl: no records
    """
    found: dict[str, int] = {}
    for r in results:
        for item in r.items:
            if item.range_start is not None:
                found[item.path] = found.get(item.path, 0) + item.documents
    for path, documents in found.items():
        if documents == 0:
            raise InputError(path, "no records")


def save_npz(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """`arrays` as an uncompressed .npz (what np.savez writes, read by np.load), the same bytes
    for the same arrays."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_STORED
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(value), allow_pickle=False)
