"""Helpers of the parallel index build tests: a corpus that exercises every reading path, and
the index by its definition (every file read whole, in one process; each document's n-grams on
their own, by the plain numpy tokenizer; one sort), to hold every executor's build to."""

from __future__ import annotations

import gzip
import random
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli.engine.corpus_index import build_corpus_index
from contam_cli.engine.corpus_index.doctable import save_npz
from contam_cli.engine.corpus_index.header import IndexHeader, describe_spec, file_entry
from contam_cli.engine.shards import Source
from contam_cli.features.scan import ScanOptions, resolve_sources
from contam_cli.io.batches import iter_text_batches
from contam_cli.io.extract import TextSpec
from contam_cli.text import DEFAULT_NORM, HASH_NAME, Tokenizer

WORDS = "the cat sat on a mat with hat bat rat dog fox ran far and near über 猫 ﬁsh Straße".split()
REC = np.dtype([("gram", "<u8"), ("doc", "<u8"), ("pos", "<u8")])


def tree(root: Path) -> dict[str, bytes]:
    """Every file below `root` by its relative path: two builds compare byte for byte."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _line(rng: random.Random, i: int) -> bytes:
    text = " ".join(rng.choices(WORDS, k=rng.randint(0, 50)))
    if i % 29 == 3:
        return b"\n"  # a blank line: a line, not a document
    if i % 31 == 7:
        return b'{"text" : ' + orjson.dumps(text) + b"}\n"  # the full reader's path
    if i % 23 == 5:
        return orjson.dumps({"id": f"d{i}", "text": text}) + b"\n"
    return orjson.dumps({"text": text}) + b"\n"


def make_corpus(d: Path, seed: int = 1, docs: int = 300) -> dict[str, list[Path]]:
    """Two sources: JSONL files (one with a BOM, one with CRLF ends, blank lines, escapes),
    a .gz, a .txt and a JSON array; each JSONL file tens of kB (byte ranges with small shards)."""
    rng = random.Random(seed)
    d.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        data = b"".join(_line(rng, i) for i in range(docs))
        if name == "b.jsonl":
            data = b"\xef\xbb\xbf" + data
        if name == "c.jsonl":
            data = data.replace(b"\n", b"\r\n")
        files[name] = data
    for name, data in files.items():
        (d / name).write_bytes(data)
    half = b"".join(files["a.jsonl"].splitlines(keepends=True)[: docs // 2])
    (d / "z.jsonl.gz").write_bytes(gzip.compress(half))
    (d / "t.txt").write_text(" ".join(rng.choices(WORDS, k=400)), encoding="utf-8")
    arr = [{"text": " ".join(rng.choices(WORDS, k=rng.randint(5, 30)))} for _ in range(20)]
    (d / "arr.json").write_bytes(orjson.dumps(arr))
    return {
        "web": [d / "a.jsonl", d / "t.txt", d / "z.jsonl.gz"],
        "books": [d / "b.jsonl", d / "arr.json", d / "c.jsonl"],
    }


def oracle_index(sources: list[Source], out: Path, n: int, positions: bool) -> None:
    """The index of `sources` by its definition, written to directory `out`."""
    out.mkdir()
    described = []
    for k, src in enumerate(sources):
        recs, table, n_grams = _source_records(src, n)
        if positions:
            recs = np.sort(recs, order=("gram", "doc", "pos"))
            for column, name in (("gram", "grams"), ("doc", "doc"), ("pos", "pos")):
                np.ascontiguousarray(recs[column]).tofile(out / f"s{k}.{name}.u64")
            save_npz(out / f"s{k}.docs.npz", table)
            stored = len(recs)
        else:
            grams = np.unique(recs["gram"])
            grams.tofile(out / f"s{k}.grams.u64")
            stored = len(grams)
        described.append(
            {
                "name": src.name,
                "files": [file_entry(p, out) for p in src.paths],  # type: ignore[arg-type]
                "documents": len(table["file_ord"]),
                "ngrams": n_grams,
                "stored": stored,
            }
        )
    text = describe_spec(TextSpec())
    header = IndexHeader(n, DEFAULT_NORM.describe(), HASH_NAME, positions, described, text)
    (out / "header.json").write_bytes(orjson.dumps(header.to_dict(), option=orjson.OPT_INDENT_2))


def _source_records(src: Source, n: int) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    parts: list[np.ndarray] = []
    cols: dict[str, list[int]] = {"file_ord": [], "offset": [], "record": [], "line": []}
    tk = Tokenizer(DEFAULT_NORM, accel=False)
    doc = 0
    for f, path in enumerate(src.paths):
        for batch in iter_text_batches(path, spec=TextSpec()):
            for d, text in enumerate(batch.texts):
                g = tk.ngrams(tk.tokens([text]), n)[0]
                r = np.empty(len(g), dtype=REC)
                r["gram"], r["doc"], r["pos"] = g, doc, np.arange(len(g))
                parts.append(r)
                cols["file_ord"].append(f)
                cols["offset"].append(batch.offsets[d])
                cols["record"].append(batch.first_ordinal + d)
                cols["line"].append(batch.lines[d])
                doc += 1
    recs = np.concatenate(parts) if parts else np.zeros(0, dtype=REC)
    table = {k: np.array(v, dtype=np.int64) for k, v in cols.items()}
    return recs, table, len(recs)


def build(given: Any, out: Path, positions: bool, n: int = 5, **kw: Any) -> None:
    """Build an index of `given` (the input rule) into `out`, replacing it; `kw`: more
    arguments of build_corpus_index (jobs, executor, progress)."""
    opts = ScanOptions(n=n)
    build_corpus_index(
        resolve_sources(given, opts),
        out,
        n=n,
        norm=DEFAULT_NORM,
        positions=positions,
        corpus_spec=opts.corpus_spec,
        force=True,
        **kw,
    )


def small_sizes(monkeypatch: Any) -> None:
    """Shards of 4 kB, 2**12 buckets, spill segments of 3 kB, reduce tasks of 5 kB: many of
    each from a small corpus."""
    import contam_cli.engine.corpus_index.build as ci_build
    import contam_cli.engine.shards as shards

    monkeypatch.setattr(shards, "SHARD_BYTES", 4000)
    monkeypatch.setattr(shards, "MIN_SHARD_BYTES", 4000)
    monkeypatch.setattr(ci_build, "_BUCKET_TARGET", 16)
    monkeypatch.setattr(ci_build, "_SPILL_BYTES", 3000)
    monkeypatch.setattr(ci_build, "_REDUCE_BYTES", 5000)
