"""Querying a corpus index: eval n-grams searched in the memory-mapped arrays, runs, evidence."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.corpus_index.header import IndexHeader, resolve_file
from contam_cli.engine.corpus_index.reread import evidence_records
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.evidence import make_evidence
from contam_cli.engine.match import best_runs
from contam_cli.errors import InputError
from contam_cli.io.extract import TextSpec

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
    root: str | Path,
    header: IndexHeader,
    index: EvalIndex,
    acc: Accumulator,
    spec: TextSpec,
) -> list[str]:
    """Fill `acc` from a persisted index: matched n-grams per source, and runs (exact runs with
    evidence when the index holds positions, else chained runs without a document). `spec`:
    the text rules the index read its corpus with (:meth:`IndexHeader.corpus_spec`), which the
    evidence documents are read again with. Returns warnings (corpus files gone or changed
    since the index was built, so some evidence has no text)."""
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
            hits = (lo[hit], hi[hit], found)
            warnings += _exact_runs(root, k, header, index, acc, hits, spec)
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
    hits: tuple[np.ndarray, np.ndarray, np.ndarray],
    spec: TextSpec,
) -> list[str]:
    """Exact runs of source `k` from its index entries `hits` (lo, hi: the range of each
    matched eval gram among the source's sorted grams; found: those grams), with evidence."""
    lo, hi, found = hits
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
    entries = header.sources[k]["files"]
    files = [resolve_file(root, f) for f in entries]
    records, warnings = evidence_records(files, entries, table, runs, index, spec)
    for r, rec in enumerate(records):
        acc.evidence[(k, int(runs.example[r]))] = make_evidence(
            rec,
            header.sources[k]["name"],
            int(runs.doc_pos[r]),
            int(runs.eval_pos[r]),
            int(runs.length[r]),
            acc.redact,
            norm=index.norm,
        )
    return warnings


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
