"""A persisted corpus index: the corpus' n-gram hashes, sorted, memory-mapped, with provenance.

Build once (``contam index build``), then check any number of eval sets against it in time that
grows with the eval set, not the corpus (``contam scan EVAL --index DIR``).

Layout of the index directory::

    header.json          format, tool version, n, normalization, hash, positions, sources + files
    s{k}.grams.u64       source k: sorted n-gram hashes (distinct, or one per occurrence with
                         positions), raw little-endian uint64, memory-mapped when read
    s{k}.doc.u64 / .pos.u64   with positions: document ordinal and token position of each entry
    s{k}.docs.npz        with positions: per document its file ordinal, byte offset, record ordinal

Building is an external sort: each chunk's hashes are appended to one of many bucket files by their
top bits; each bucket is then sorted on its own and appended to the output, so memory is bounded by
a bucket, never by the corpus.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.engine import Accumulator, best_runs, make_evidence
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.errors import IndexMismatchError, InputError, OutputError
from contam_cli.io import iter_records, iter_text_batches, sha256_file
from contam_cli.io.model import Record
from contam_cli.text import HASH_NAME, NormConfig, Tokenizer

__all__ = ["INDEX_FORMAT", "IndexHeader", "build_corpus_index", "load_header", "match_index"]

INDEX_FORMAT = "contam.index/1"
_BUCKET_TARGET = 32 << 20  # bytes of hashes per bucket, so that one bucket sorts in memory


@dataclass(frozen=True)
class IndexHeader:
    """What an index was built from and how; a scan refuses an index that does not match."""

    n: int
    normalization: dict[str, Any]
    hash: str
    positions: bool
    sources: list[dict[str, Any]]
    tool_version: str = __version__
    format: str = INDEX_FORMAT

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "tool_version": self.tool_version,
            "n": self.n,
            "normalization": self.normalization,
            "hash": self.hash,
            "positions": self.positions,
            "sources": self.sources,
        }

    def check(self, n: int, norm: NormConfig) -> None:
        """Raise IndexMismatchError unless this index answers for n-grams of size n under norm."""
        problems = []
        if self.format != INDEX_FORMAT:
            problems.append(f"format {self.format} (this contam reads {INDEX_FORMAT})")
        if self.hash != HASH_NAME:
            problems.append(f"hash {self.hash} (this contam uses {HASH_NAME})")
        if self.n != n:
            problems.append(f"n={self.n} (asked for n={n}; rebuild it or pass -n {self.n})")
        if self.normalization != norm.describe():
            problems.append(f"normalization {self.normalization} (asked for {norm.describe()})")
        if problems:
            raise IndexMismatchError("the index was built with " + "; ".join(problems))


def load_header(path: str | os.PathLike[str]) -> IndexHeader:
    """Read and validate an index directory's header."""
    head = Path(path) / "header.json"
    try:
        data = orjson.loads(head.read_bytes())
    except FileNotFoundError:
        raise InputError(
            path, "not a contam index (no header.json); build one with `contam index build`"
        ) from None
    except orjson.JSONDecodeError as e:
        raise InputError(head, f"invalid index header ({e})") from None
    try:
        return IndexHeader(
            n=int(data["n"]),
            normalization=data["normalization"],
            hash=data["hash"],
            positions=bool(data["positions"]),
            sources=data["sources"],
            tool_version=data["tool_version"],
            format=data["format"],
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(head, f"invalid index header (missing or bad {e})") from None


# -- building -----------------------------------------------------------------------------------


class _Buckets:
    """Append-only bucket files keyed by the top bits of each hash (with optional payloads)."""

    def __init__(self, root: Path, bits: int, positions: bool) -> None:
        self.root, self.bits, self.positions = root, bits, positions
        root.mkdir(parents=True)
        self.files = [open(root / f"b{i:05d}", "wb") for i in range(1 << bits)]  # noqa: SIM115

    def add(self, grams: np.ndarray, doc: np.ndarray, pos: np.ndarray) -> None:
        key = (grams >> np.uint64(64 - self.bits)).astype(np.int64)
        order = np.argsort(key, kind="stable")
        key = key[order]
        cuts = np.searchsorted(key, np.arange((1 << self.bits) + 1))
        recs = _records(grams[order], doc[order], pos[order]) if self.positions else grams[order]
        for b in np.flatnonzero(np.diff(cuts)).tolist():
            self.files[b].write(recs[cuts[b] : cuts[b + 1]].tobytes())

    def drain(self) -> Iterator[np.ndarray]:
        """Each bucket's contents, sorted (and distinct without positions), in hash order."""
        for f in self.files:
            f.close()
        for i in range(len(self.files)):
            path = self.root / f"b{i:05d}"
            dtype = _REC if self.positions else np.uint64
            data = np.fromfile(path, dtype=dtype)
            path.unlink()
            if self.positions:
                yield np.sort(data, order=("gram", "doc", "pos"))
            else:
                yield np.unique(data)


_REC = np.dtype([("gram", "<u8"), ("doc", "<u8"), ("pos", "<u8")])


def _records(grams: np.ndarray, doc: np.ndarray, pos: np.ndarray) -> np.ndarray:
    out = np.empty(len(grams), dtype=_REC)
    out["gram"], out["doc"], out["pos"] = grams, doc, pos
    return out


def build_corpus_index(
    sources: list[Any],
    out: str | os.PathLike[str],
    *,
    n: int,
    norm: NormConfig,
    positions: bool,
    corpus_spec: Any,
    chunk_bytes: int = 1 << 20,
    force: bool = False,
    progress: Any = None,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> IndexHeader:
    """Build an index of every n-gram of `sources` (pipeline.Source values) into directory `out`.

    `inputs`: the paths the user gave (directories too), which the output must stay out of.
    """
    out = Path(out)
    inputs = [Path(p) for p in inputs] + [p for src in sources for p in src.paths]
    _check_output(out, inputs, force)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        tk = Tokenizer(norm)
        described = [
            _build_source(k, src, tmp, n, positions, corpus_spec, chunk_bytes, tk, progress)
            for k, src in enumerate(sources)
        ]
        header = IndexHeader(n, norm.describe(), HASH_NAME, positions, described)
        (tmp / "header.json").write_bytes(
            orjson.dumps(header.to_dict(), option=orjson.OPT_INDENT_2)
        )
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return header


def _check_output(out: Path, inputs: list[Path], force: bool) -> None:
    resolved = out.resolve()
    for p in inputs:
        rp = Path(p).resolve()
        if resolved == rp or rp.is_relative_to(resolved) or resolved.is_relative_to(rp):
            raise OutputError(f"{out}: refusing to write the index over or inside an input ({p})")
    if out.exists():
        if not force:
            raise OutputError(f"{out}: already exists; pass --force to replace it")
        if not out.is_dir() or (any(out.iterdir()) and not (out / "header.json").exists()):
            raise OutputError(f"{out}: exists and is not a contam index; not replacing it")


def _build_source(
    k: int,
    src: Any,
    tmp: Path,
    n: int,
    positions: bool,
    spec: Any,
    chunk_bytes: int,
    tk: Tokenizer,
    progress: Any,
) -> dict[str, Any]:
    total = sum(p.stat().st_size for p in src.paths)
    bits = int(min(12, max(4, np.ceil(np.log2(max(1, total * 8 // _BUCKET_TARGET + 1))))))
    buckets = _Buckets(tmp / f"s{k}.buckets", bits, positions)
    docs: dict[str, list[int]] = {"file_ord": [], "offset": [], "record": []}
    n_docs = n_grams = 0
    for f_ord, path in enumerate(src.paths):
        for batch in iter_text_batches(path, spec=spec, chunk_bytes=chunk_bytes):
            stream = tk.tokens(batch.texts)
            grams, win = tk.ngrams(stream, n)
            counts = np.bincount(stream.doc, minlength=len(batch.texts))
            doc = stream.doc[win]
            pos = win - (np.cumsum(counts) - counts)[doc]
            buckets.add(grams, (doc + n_docs).astype(np.uint64), pos.astype(np.uint64))
            if positions:
                m = len(batch.texts)
                docs["file_ord"].extend([f_ord] * m)
                docs["offset"].extend(batch.offsets)
                docs["record"].extend(range(batch.first_ordinal, batch.first_ordinal + m))
            n_docs += len(batch.texts)
            n_grams += len(grams)
        if progress:
            progress(path.stat().st_size)
    stored = _write_sorted(buckets, tmp / f"s{k}", positions)
    shutil.rmtree(tmp / f"s{k}.buckets")
    if positions:
        np.savez(
            tmp / f"s{k}.docs.npz",
            file_ord=np.array(docs["file_ord"], dtype=np.int64),
            offset=np.array(docs["offset"], dtype=np.int64),
            record=np.array(docs["record"], dtype=np.int64),
        )
    return {
        "name": src.name,
        "files": [
            {"path": str(p), "sha256": sha256_file(p), "bytes": p.stat().st_size} for p in src.paths
        ],
        "documents": n_docs,
        "ngrams": n_grams,
        "stored": stored,
    }


def _write_sorted(buckets: _Buckets, stem: Path, positions: bool) -> int:
    count = 0
    with open(f"{stem}.grams.u64", "wb") as g:
        if not positions:
            for part in buckets.drain():
                g.write(part.tobytes())
                count += len(part)
            return count
        with open(f"{stem}.doc.u64", "wb") as d, open(f"{stem}.pos.u64", "wb") as p:
            for part in buckets.drain():
                g.write(np.ascontiguousarray(part["gram"]).tobytes())
                d.write(np.ascontiguousarray(part["doc"]).tobytes())
                p.write(np.ascontiguousarray(part["pos"]).tobytes())
                count += len(part)
    return count


# -- querying -----------------------------------------------------------------------------------


def _memmap(path: Path) -> np.ndarray:
    if path.stat().st_size == 0:
        return np.zeros(0, dtype=np.uint64)
    return np.memmap(path, dtype="<u8", mode="r")


def match_index(
    root: str | os.PathLike[str], header: IndexHeader, index: EvalIndex, acc: Accumulator
) -> None:
    """Fill `acc` from a persisted index: matched n-grams per source, and runs (exact runs with
    evidence when the index holds positions, else chained runs without a document)."""
    root = Path(root)
    for k, _src in enumerate(header.sources):
        grams = _memmap(root / f"s{k}.grams.u64")
        lo = np.searchsorted(grams, index.grams, side="left")
        hi = np.searchsorted(grams, index.grams, side="right") if header.positions else lo + 1
        hit = (lo < len(grams)) & (lo < hi)
        hit[hit] = grams[lo[hit]] == index.grams[hit]
        acc.matched[k] |= hit
        if header.positions:
            _exact_runs(root, k, header, index, acc, lo[hit], hi[hit], np.flatnonzero(hit))
        else:
            _chained_runs(index, acc, k, np.flatnonzero(hit))


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
) -> None:
    docs_all = _memmap(root / f"s{k}.doc.u64")
    pos_all = _memmap(root / f"s{k}.pos.u64")
    cnt = hi - lo
    j = np.repeat(lo - (np.cumsum(cnt) - cnt), cnt) + np.arange(int(cnt.sum()))
    uidx = np.repeat(found, cnt)
    doc = docs_all[j].astype(np.int64)
    pos = pos_all[j].astype(np.int64)
    if len(doc) == 0:
        return
    runs = best_runs(index, uidx, doc, pos)
    acc.best_len[k, runs.example] = runs.length
    acc.best_order[k, runs.example] = runs.doc
    acc.best_pos[k, runs.example] = runs.doc_pos
    table = np.load(root / f"s{k}.docs.npz")
    files = [f["path"] for f in header.sources[k]["files"]]
    wanted = {int(d) for d in runs.doc.tolist()}
    found_docs = _read_docs(files, table, wanted)
    for r in range(len(runs.example)):
        acc.evidence[(k, int(runs.example[r]))] = make_evidence(
            found_docs.get(int(runs.doc[r])),
            header.sources[k]["name"],
            int(runs.doc_pos[r]),
            int(runs.eval_pos[r]),
            int(runs.length[r]),
            acc.redact,
        )


def _read_docs(files: list[str], table: Any, wanted: set[int]) -> dict[int, Record]:
    """Re-read the documents holding evidence, each file once (a missing file gives none)."""
    by_file: dict[int, list[int]] = {}
    for d in sorted(wanted):
        by_file.setdefault(int(table["file_ord"][d]), []).append(d)
    out: dict[int, Record] = {}
    for f, docs in by_file.items():
        path = files[f]
        try:
            if path.endswith((".jsonl", ".ndjson")) and all(table["offset"][d] >= 0 for d in docs):
                for d in docs:  # uncompressed JSONL: jump straight to the record
                    off = int(table["offset"][d])
                    out[d] = next(iter_records(path, role="corpus", byte_range=(off, off + 1)))
                continue
            first = int(np.searchsorted(table["file_ord"], f))
            want = {
                int(table["record"][d]) if table["record"][d] >= 0 else d - first: d for d in docs
            }
            for i, rec in enumerate(iter_records(path, role="corpus")):
                if i in want:
                    out[want[i]] = rec
        except (OSError, InputError, StopIteration):
            continue
    return out
