"""Deterministic synthetic corpus and eval set, with planted leaks, for benchmarking scanners.

    python -m contam_cli.features.bench.generate --out DIR --mb 200 [--seed 1234] [--n-eval 1000]
        [--planted-frac F] [--shard-mb 32] [--reuse]

Writes, under ``DIR``:

- ``corpus/shard_00000.jsonl`` ...: ``{"id", "text"}``, one document (200-8000 characters,
  log-uniform) per line, about ``--mb`` MB of files in all;
- ``eval.jsonl``: ``{"id": "e00000", "text"}``, examples of 30-120 words;
- ``labels.jsonl``: ``{"id", "category", "planted", "expected_flag", "doc", "span_words"}``;
- ``meta.json``: parameters, sizes and counts, written last and free of timestamps, so the same
  parameters give byte-identical files.

Text (:mod:`contam_cli.features.bench.textmodel`, with the parameters in ``TEXT``) is
English-like: a Zipf-distributed vocabulary of English function words and syllable-built
words, of which about 2% of occurrences carry non-ASCII letters (accents, some in NFD form, Greek,
ligatures, full-width forms), with punctuation, curly quotes, em dashes and capitalised sentence
starts; about 0.5% of documents are Chinese or Japanese (no spaces). Corpus and eval text share a
pool of 3-8-word phrases, always separated by at least one random filler word, so short innocent
overlaps are common while chance 13-gram collisions are not.

Eval categories (default shares of the eval set; ``--planted-frac`` rescales the planted ones):

- ``full`` 8%: the whole example inserted verbatim into one corpus document;
- ``full_norm`` 2%: inserted lower-cased with punctuation stripped (a normalising scanner finds it);
- ``partial40`` 5%: one 40-word span inserted verbatim;
- ``near12`` 5%: one span of exactly 12 tokens inserted, a hard negative at n = 13;
- ``clean``: the rest, not planted.

Plants (:mod:`contam_cli.features.bench.plants`) go between two words of a document, with a
space on each side, where the neighbouring corpus tokens differ from the example's tokens around
the span, so no match can run past it. Tokens are always :func:`contam_cli.text.tokenize`'s.
``expected_flag`` follows the default flag rules (overlap >= 0.5 or a run >= 30 tokens at n = 13).
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import orjson

from contam_cli.features.bench.plants import (
    CATEGORIES,
    DEFAULT_PLANTED_FRAC,
    EXPECTED_FLAG,
    Example,
    Plant,
    category_counts,
    insert_plants,
    make_eval_set,
    make_plants,
    normalize_plain,
)
from contam_cli.features.bench.textmodel import TextModel, TextParams

__all__ = [
    "CATEGORIES",
    "EXPECTED_FLAG",
    "TEXT",
    "category_counts",
    "existing_meta",
    "generate",
    "normalize_plain",
]

FORMAT_VERSION = 1
"""Bumped whenever the same parameters would give different files."""

TEXT = TextParams(
    vocab_size=30_000,
    n_phrases=20_000,
    word_zipf=1.05,
    phrase_zipf=0.8,
    phrase_words=(3, 8),
    non_ascii_share=0.02,
    phrase_rate=0.5,
    filler_words=(1, 6),
    filler_after_phrase=True,
)
"""The throughput corpus's text: a 30,000-word vocabulary and 20,000 phrases of 3-8 words."""
CJK_DOC_EVERY = 200  # documents 3, 203, 403, ... (0.5%, and one in even a tiny corpus)
DOC_CHARS = (200, 8000)
CHUNK_DOCS = 256


# ---------------------------------------------------------------------------------------------
# Corpus


def iter_documents(model: TextModel, rng: np.random.Generator) -> Iterator[tuple[str, bool]]:
    """Endless (text, is_cjk) documents of 200-8000 characters, log-uniform."""
    lo, hi = math.log(DOC_CHARS[0]), math.log(DOC_CHARS[1])
    for first in range(0, sys.maxsize, CHUNK_DOCS):
        chars = np.exp(rng.uniform(lo, hi, size=CHUNK_DOCS))
        cjk = (first + np.arange(CHUNK_DOCS)) % CJK_DOC_EVERY == 3
        n_words = np.maximum(4, np.rint(chars / model.chars_per_token)).astype(np.int64)[~cjk]
        texts = iter(model.render(model.stream(rng, int(n_words.sum())), n_words, rng))
        for size, is_cjk in zip(chars.tolist(), cjk.tolist()):
            yield (model.cjk_text(rng, int(size)), True) if is_cjk else (next(texts), False)


class ShardWriter:
    """Writes JSONL lines into ``shard_00000.jsonl``, ... of about ``shard_bytes`` each."""

    def __init__(self, directory: Path, shard_bytes: int) -> None:
        self.directory = directory
        self.shard_bytes = shard_bytes
        self.lines: list[bytes] = []
        self.pending = 0
        self.shards = 0
        self.bytes = 0

    def add(self, line: bytes) -> None:
        self.lines.append(line)
        self.pending += len(line)
        if self.pending >= self.shard_bytes:
            self.flush()

    def flush(self) -> None:
        if not self.lines:
            return
        (self.directory / f"shard_{self.shards:05d}.jsonl").write_bytes(b"".join(self.lines))
        self.shards += 1
        self.bytes += self.pending
        self.lines, self.pending = [], 0


def _line(doc_id: str, text: str) -> bytes:
    return orjson.dumps({"id": doc_id, "text": text}, option=orjson.OPT_APPEND_NEWLINE)


def write_corpus(
    model: TextModel,
    rng: np.random.Generator,
    place_rng: np.random.Generator,
    writer: ShardWriter,
    target_bytes: int,
    plants: list[Plant],
) -> dict:
    """Stream documents into shards until ``target_bytes`` (before plants) and every plant
    has a home."""
    queue = iter(plants)
    nxt = next(queue, None)
    pending: list[Plant] = []
    home: dict[int, str] = {}
    offset = docs = cjk_docs = 0
    for text, is_cjk in iter_documents(model, rng):
        doc_id = f"c{docs:09d}"
        line = _line(doc_id, text)
        offset += len(line)  # NOTE: plant offsets count bytes before insertion
        while nxt is not None and nxt.offset < offset:
            pending.append(nxt)
            nxt = next(queue, None)
        if pending and not is_cjk:
            text, placed, pending = insert_plants(text, pending, place_rng)
            home.update((p.example, doc_id) for p in placed)
            line = _line(doc_id, text) if placed else line
        writer.add(line)
        docs += 1
        cjk_docs += is_cjk
        if offset >= target_bytes and not pending and nxt is None:
            break
    writer.flush()
    return {"home": home, "documents": docs, "cjk_documents": cjk_docs}


# ---------------------------------------------------------------------------------------------
# Outputs


def _write_jsonl(path: Path, rows: Iterable[dict]) -> int:
    """Write `rows` as JSONL, a few thousand at a time (a million rows are never held as one
    text); the bytes written."""
    size = 0
    with path.open("wb") as fh:
        for block in _blocks(rows):
            data = b"".join(orjson.dumps(r, option=orjson.OPT_APPEND_NEWLINE) for r in block)
            fh.write(data)
            size += len(data)
    return size


def _blocks(rows: Iterable[dict]) -> Iterator[list[dict]]:
    it = iter(rows)
    while block := list(itertools.islice(it, 4096)):
        yield block


def _labels(examples: list[Example], plants: list[Plant], home: dict[int, str]) -> Iterator[dict]:
    spans = {p.example: list(p.span_words) for p in plants if p.span_words is not None}
    return (
        {
            "id": ex.id,
            "category": ex.category,
            "planted": ex.category != "clean",
            "expected_flag": EXPECTED_FLAG[ex.category],
            "doc": home.get(i),
            "span_words": spans.get(i),
        }
        for i, ex in enumerate(examples)
    )


def _prepare(out: Path) -> Path:
    """Create ``out/corpus`` and remove what an earlier run left (stale shards, meta.json)."""
    corpus = out / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").unlink(missing_ok=True)
    for old in corpus.glob("shard_*.jsonl"):
        old.unlink()
    return corpus


def _check_params(mb: float, n_eval: int, planted_frac: float | None, shard_mb: float) -> None:
    if not mb > 0 or not shard_mb > 0:
        raise ValueError("mb and shard_mb must be positive")
    if n_eval < 1:
        raise ValueError("n_eval must be at least 1")
    if planted_frac is not None and not 0 <= planted_frac <= 1:
        raise ValueError("planted_frac must be between 0 and 1")


def _params(mb: float, seed: int, n_eval: int, planted_frac: float | None, shard_mb: float) -> dict:
    frac = DEFAULT_PLANTED_FRAC if planted_frac is None else planted_frac
    return {
        "mb": float(mb),
        "seed": seed,
        "n_eval": n_eval,
        "shard_mb": float(shard_mb),
        "planted_frac": float(frac),
    }


def existing_meta(
    out: Path,
    mb: float,
    seed: int = 1234,
    n_eval: int = 1000,
    planted_frac: float | None = None,
    shard_mb: float = 32,
) -> dict | None:
    """The meta.json of a complete earlier run into ``out`` with these parameters, else None."""
    try:
        meta = orjson.loads((Path(out) / "meta.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    shards = len(list((Path(out) / "corpus").glob("shard_*.jsonl")))
    same = (
        meta.get("format_version") == FORMAT_VERSION
        and meta.get("params") == _params(mb, seed, n_eval, planted_frac, shard_mb)
        and meta.get("corpus", {}).get("shards") == shards
    )
    return meta if same else None


def generate(
    out: Path,
    mb: float,
    seed: int = 1234,
    n_eval: int = 1000,
    planted_frac: float | None = None,
    shard_mb: float = 32,
) -> dict:
    """Write corpus shards, eval set, labels and meta.json under ``out``; return the meta dict.

    The eval set depends only on ``seed``, ``n_eval`` and ``planted_frac`` (not on ``mb``).
    meta.json is written last, so a directory that has one holds a complete run.
    """
    _check_params(mb, n_eval, planted_frac, shard_mb)
    out = Path(out)
    vocab_ss, eval_ss, corpus_ss, place_ss = np.random.SeedSequence(seed).spawn(4)
    model = TextModel.build(np.random.default_rng(vocab_ss), TEXT)
    eval_rng = np.random.default_rng(eval_ss)
    counts = category_counts(n_eval, planted_frac)
    examples = make_eval_set(model, eval_rng, counts)
    plants, stream_bytes = make_plants(examples, eval_rng, int(mb * 1e6))
    writer = ShardWriter(_prepare(out), int(shard_mb * 1e6))
    corpus = write_corpus(
        model,
        np.random.default_rng(corpus_ss),
        np.random.default_rng(place_ss),
        writer,
        stream_bytes,
        plants,
    )
    eval_bytes = _write_jsonl(out / "eval.jsonl", ({"id": e.id, "text": e.text} for e in examples))
    _write_jsonl(out / "labels.jsonl", _labels(examples, plants, corpus["home"]))
    meta = {
        "generator": "contam_cli.features.bench.generate",
        "format_version": FORMAT_VERSION,
        "params": _params(mb, seed, n_eval, planted_frac, shard_mb),
        "counts": counts,
        "corpus": {
            "bytes": writer.bytes,
            "documents": corpus["documents"],
            "cjk_documents": corpus["cjk_documents"],
            "shards": writer.shards,
        },
        "eval": {"bytes": eval_bytes, "examples": len(examples)},
    }
    (out / "meta.json").write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m contam_cli.features.bench.generate", description=__doc__.split("\n\n")[0]
    )
    ap.add_argument("--out", type=Path, required=True, help="output directory")
    ap.add_argument("--mb", type=float, required=True, help="corpus size in MB (1e6 bytes)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--n-eval", type=int, default=1000, help="eval examples (default 1000)")
    ap.add_argument(
        "--planted-frac",
        type=float,
        default=None,
        help=f"share of planted examples (default {DEFAULT_PLANTED_FRAC:g})",
    )
    ap.add_argument("--shard-mb", type=float, default=32.0, help="shard size in MB (default 32)")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="keep OUT as it is if it already holds a run with these parameters",
    )
    a = ap.parse_args(argv)
    params = (a.out, a.mb, a.seed, a.n_eval, a.planted_frac, a.shard_mb)
    t0 = time.perf_counter()
    meta = existing_meta(*params) if a.reuse else None
    if meta is not None:
        sys.stdout.write(orjson.dumps(meta).decode() + "\n")
        print(f"generate: reusing {a.out} (same parameters)", file=sys.stderr)
        return 0
    try:
        meta = generate(*params)
    except ValueError as e:
        ap.error(str(e))
    seconds = time.perf_counter() - t0
    sys.stdout.write(orjson.dumps(meta).decode() + "\n")
    mb_written = meta["corpus"]["bytes"] / 1e6
    print(
        f"generate: {mb_written:.1f} MB in {seconds:.1f} s ({mb_written / seconds:.1f} MB/s)",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
