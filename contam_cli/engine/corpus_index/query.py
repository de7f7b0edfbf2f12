"""Querying a corpus index: eval n-grams searched in the memory-mapped arrays, runs, evidence."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.corpus_index.header import IndexHeader, resolve_file
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.evidence import make_evidence
from contam_cli.engine.match import best_runs
from contam_cli.errors import InputError
from contam_cli.io.model import Record
from contam_cli.io.readers import iter_records

__all__ = ["match_index"]


def _memmap(path: Path, expected: int) -> np.ndarray:
    """The uint64 array in `path`, which must hold exactly `expected` values (the header's
    count): a truncated or damaged index is an InputError, never a shorter answer."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise InputError(path, f"cannot read index file: {e.strerror or e}") from None
    if size != 8 * expected:
        raise InputError(
            path, f"truncated or damaged index file ({size} bytes, expected {8 * expected})"
        )
    if size == 0:
        return np.zeros(0, dtype=np.uint64)
    return np.memmap(path, dtype="<u8", mode="r")


def match_index(
    root: str | Path, header: IndexHeader, index: EvalIndex, acc: Accumulator
) -> list[str]:
    """Fill `acc` from a persisted index: matched n-grams per source, and runs (exact runs with
    evidence when the index holds positions, else chained runs without a document). Returns
    warnings (corpus files no longer where the index says, so some evidence has no text)."""
    root = Path(root)
    warnings: list[str] = []
    for k, _src in enumerate(header.sources):
        grams = _memmap(root / f"s{k}.grams.u64", int(_src["stored"]))
        lo = np.searchsorted(grams, index.grams, side="left")
        hi = np.searchsorted(grams, index.grams, side="right") if header.positions else lo + 1
        hit = (lo < len(grams)) & (lo < hi)
        hit[hit] = grams[lo[hit]] == index.grams[hit]
        acc.matched[k] |= hit
        if header.positions:
            found = np.flatnonzero(hit)
            warnings += _exact_runs(root, k, header, index, acc, lo[hit], hi[hit], found)
        else:
            _chained_runs(index, acc, k, np.flatnonzero(hit))
    return warnings


def _chained_runs(index: EvalIndex, acc: Accumulator, k: int, found: np.ndarray) -> None:
    """Longest streak of consecutive matched n-grams per example (may span documents)."""
    j = index.occurrences(found)
    e, i = index.occ_ex[j].astype(np.int64), index.occ_pos[j].astype(np.int64)
    if len(e) == 0:
        return
    o = np.lexsort((i, e))
    e, i = e[o], i[o]
    brk = np.ones(len(e), dtype=bool)
    brk[1:] = (e[1:] != e[:-1]) | (i[1:] != i[:-1] + 1)
    start = np.flatnonzero(brk)
    length = np.diff(np.append(start, len(e))) + index.n - 1
    np.maximum.at(acc.best_len[k], e[start], length)


def _exact_runs(
    root: Path,
    k: int,
    header: IndexHeader,
    index: EvalIndex,
    acc: Accumulator,
    lo: np.ndarray,
    hi: np.ndarray,
    found: np.ndarray,
) -> list[str]:
    stored = int(header.sources[k]["stored"])
    docs_all = _memmap(root / f"s{k}.doc.u64", stored)
    pos_all = _memmap(root / f"s{k}.pos.u64", stored)
    cnt = hi - lo
    j = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))
    uidx = np.repeat(found, cnt)
    doc = docs_all[j].astype(np.int64)
    pos = pos_all[j].astype(np.int64)
    if len(doc) == 0:
        return []
    runs = best_runs(index, uidx, doc, pos)
    acc.best_len[k, runs.example] = runs.length
    acc.best_order[k, runs.example] = runs.doc
    acc.best_pos[k, runs.example] = runs.doc_pos
    table = _doc_table(root / f"s{k}.docs.npz", int(header.sources[k]["documents"]))
    files = [resolve_file(root, f) for f in header.sources[k]["files"]]
    wanted = sorted({int(d) for d in runs.doc.tolist()})
    found_docs, warnings = _read_docs(files, header.sources[k]["files"], table, wanted)
    for r in range(len(runs.example)):
        acc.evidence[(k, int(runs.example[r]))] = make_evidence(
            found_docs.get(int(runs.doc[r])),
            header.sources[k]["name"],
            int(runs.doc_pos[r]),
            int(runs.eval_pos[r]),
            int(runs.length[r]),
            acc.redact,
        )
    return warnings


def _read_docs(
    files: list[Path | None],
    entries: list[dict[str, Any]],
    table: dict[str, np.ndarray],
    wanted: list[int],
) -> tuple[dict[int, Record], list[str]]:
    """Re-read the documents holding evidence, each file once; a file that is gone gives a
    warning (its evidence keeps positions but has no text or offsets)."""
    file_ord, offsets, records = table["file_ord"], table["offset"], table["record"]
    by_file: dict[int, list[int]] = {}
    for d in wanted:
        by_file.setdefault(int(file_ord[d]), []).append(d)
    out: dict[int, Record] = {}
    warnings = []
    for f, docs in by_file.items():
        path = files[f]
        if path is None:
            warnings.append(
                f"{entries[f]['path']}: corpus file of the index not found; "
                f"{len(docs)} evidence document(s) without text"
            )
            continue
        if path.stat().st_size != entries[f]["bytes"]:
            warnings.append(
                f"{path}: changed since the index was built (size differs); its evidence may "
                "point at the wrong text (scan with --verify to refuse a changed corpus)"
            )
        if path.suffix in (".jsonl", ".ndjson") and all(offsets[d] >= 0 for d in docs):
            for d in docs:  # uncompressed JSONL: jump straight to the record
                off = int(offsets[d])
                rec = next(iter_records(path, role="corpus", byte_range=(off, off + 1)))
                out[d] = _placed(rec, int(table["line"][d]), int(records[d]), off)
            continue
        first = int(np.searchsorted(file_ord, f))
        want = {int(records[d]) if records[d] >= 0 else d - first: d for d in docs}
        for i, rec in enumerate(iter_records(path, role="corpus")):
            if i in want:
                out[want[i]] = rec
    return out, warnings


def _placed(rec: Record, line: int, ordinal: int, offset: int) -> Record:
    """A record read at its byte offset, with the line and ordinal it has in its file (the
    index holds them; a read from an offset knows neither), and the id a whole-file read gives
    it when the record has none."""
    if line < 0:
        return rec
    loc = replace(rec.locator, line=line, record=ordinal if ordinal >= 0 else rec.locator.record)
    doc_id = str(line) if rec.id == f"@{offset}" else rec.id
    return replace(rec, id=doc_id, locator=loc)


def _doc_table(path: Path, documents: int) -> dict[str, np.ndarray]:
    """The per-document table of an index with positions, loaded once and checked (an index
    built before lines were stored has none: its evidence from offsets has no line)."""
    try:
        with np.load(path) as npz:
            table = {name: npz[name] for name in ("file_ord", "offset", "record")}
            table["line"] = npz["line"] if "line" in npz.files else np.full(documents, -1)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
        raise InputError(path, f"truncated or damaged index file ({e})") from None
    if any(len(v) != documents for v in table.values()):
        raise InputError(path, f"damaged index file (expected {documents} documents)")
    return table
