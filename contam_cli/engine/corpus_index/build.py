"""Building a corpus index: an external sort, so memory is bounded by a bucket, never the corpus.

Each chunk's hashes go to one of many bucket files by their top bits; each bucket is then sorted
on its own and appended to the output.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli.engine.corpus_index.header import IndexHeader, file_entry
from contam_cli.engine.shards import Source
from contam_cli.errors import OutputError
from contam_cli.io.batches import iter_text_batches
from contam_cli.io.extract import TextSpec
from contam_cli.io.output import WRITE_ERRNOS, check_parents, sync_tree
from contam_cli.io.remote import RemoteFile, is_url
from contam_cli.text import HASH_NAME, NormConfig, Tokenizer

__all__ = ["build_corpus_index"]

_BUCKET_TARGET = 32 << 20  # bytes of hashes per bucket, so that one bucket sorts in memory


class _Buckets:
    """Append-only bucket files keyed by the top bits of each hash (with optional payloads).

    NOTE: up to 4,096 buckets, so they are never all open at once (a process may hold only 1,024
    or 256 files): records wait in memory, up to `buffer_bytes`, and each flush opens the bucket
    files one at a time to append to them.
    """

    def __init__(self, root: Path, bits: int, positions: bool, buffer_bytes: int = 64 << 20):
        self.root, self.bits, self.positions = root, bits, positions
        self.buffer_bytes = buffer_bytes
        self.pending: list[np.ndarray] = []
        self.pending_bytes = 0
        root.mkdir(parents=True)

    def add(self, grams: np.ndarray, doc: np.ndarray, pos: np.ndarray) -> None:
        recs = _records(grams, doc, pos) if self.positions else grams
        self.pending.append(recs)
        self.pending_bytes += recs.nbytes
        if self.pending_bytes >= self.buffer_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        recs = np.concatenate(self.pending)
        self.pending, self.pending_bytes = [], 0
        grams = recs["gram"] if self.positions else recs
        key = (grams >> np.uint64(64 - self.bits)).astype(np.int64)
        order = np.argsort(key, kind="stable")
        recs, key = recs[order], key[order]
        cuts = np.searchsorted(key, np.arange((1 << self.bits) + 1))
        for b in np.flatnonzero(np.diff(cuts)).tolist():
            with open(self.root / f"b{b:05d}", "ab") as fh:
                fh.write(recs[cuts[b] : cuts[b + 1]].tobytes())

    def drain(self) -> Iterator[np.ndarray]:
        """Each bucket's contents, sorted (and distinct without positions), in hash order."""
        self.flush()
        dtype = _REC if self.positions else np.uint64
        for i in range(1 << self.bits):
            path = self.root / f"b{i:05d}"
            if not path.exists():
                continue
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
    sources: list[Source],
    out: str | os.PathLike[str],
    *,
    n: int,
    norm: NormConfig,
    positions: bool,
    corpus_spec: TextSpec,
    chunk_bytes: int = 1 << 20,
    force: bool = False,
    progress: Any = None,
    inputs: Sequence[str | os.PathLike[str]] = (),
) -> IndexHeader:
    """Build an index of every n-gram of `sources` into directory `out` (atomically: built beside
    it and renamed into place).

    `inputs`: the paths the user gave (directories too), which the output must stay out of.
    """
    out = Path(out)
    # NOTE: a local index cannot be written over a remote input: only paths are checked.
    local = [p for src in sources for p in src.paths if isinstance(p, Path)]
    inputs = [Path(p) for p in inputs if not is_url(p)] + local
    _check_output(out, inputs, force)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # NOTE: mkdtemp's 0700 would surprise users.
        tk = Tokenizer(norm)
        described = [
            _build_source(k, src, tmp, out, n, positions, corpus_spec, chunk_bytes, tk, progress)
            for k, src in enumerate(sources)
        ]
        header = IndexHeader(n, norm.describe(), HASH_NAME, positions, described)
        (tmp / "header.json").write_bytes(
            orjson.dumps(header.to_dict(), option=orjson.OPT_INDENT_2)
        )
        sync_tree(tmp)
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(e, OSError) and e.errno in WRITE_ERRNOS:
            raise OutputError(
                f"{out}: cannot write the index ({e.strerror or e}); nothing was written"
            ) from None
        raise
    return header


def _check_output(out: Path, inputs: list[Path], force: bool) -> None:
    resolved = out.resolve()
    for p in inputs:
        rp = Path(p).resolve()
        if resolved == rp or rp.is_relative_to(resolved) or resolved.is_relative_to(rp):
            raise OutputError(f"{out}: refusing to write the index over or inside an input ({p})")
    check_parents(out)
    if out.exists():
        if not force:
            raise OutputError(f"{out}: already exists; pass --force to replace it")
        if not out.is_dir() or (any(out.iterdir()) and not (out / "header.json").exists()):
            raise OutputError(f"{out}: exists and is not a contam index; not replacing it")


def _build_source(
    k: int,
    src: Source,
    tmp: Path,
    out: Path,
    n: int,
    positions: bool,
    spec: TextSpec,
    chunk_bytes: int,
    tk: Tokenizer,
    progress: Any,
) -> dict[str, Any]:
    total = sum(p.stat().st_size for p in src.paths)
    bits = int(min(12, max(4, np.ceil(np.log2(max(1, total * 8 // _BUCKET_TARGET + 1))))))
    buckets = _Buckets(tmp / f"s{k}.buckets", bits, positions)
    docs: dict[str, list[int]] = {"file_ord": [], "offset": [], "record": [], "line": []}
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
                docs["line"].extend(batch.lines)
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
            line=np.array(docs["line"], dtype=np.int64),
        )
    return {
        "name": src.name,
        "files": [_file_entry(p, out) for p in src.paths],
        "documents": n_docs,
        "ngrams": n_grams,
        "stored": stored,
    }


def _file_entry(path: Path | RemoteFile, out: Path) -> dict[str, Any]:
    """A corpus file as the header records it; a remote object by its URL, size and ETag (no
    relpath, no sha256: hashing it would read it once more)."""
    if isinstance(path, Path):
        return file_entry(path, out)
    return {**path.describe(), "relpath": None}


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
