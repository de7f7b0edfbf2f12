"""Where one process's scan spends its time: each stage of the pipeline, timed inside a real scan.

    python scripts/profile_scan.py DATA [--shards 8]
    CONTAM_ACCEL=0 python scripts/profile_scan.py DATA      # the numpy-only path

DATA is a data directory of ``scripts/bench_scan.py`` (its ``eval.jsonl`` and ``corpus/``). The
scan runs once to warm up (numba's cache, the page cache), then again with every stage wrapped
by a timer: the eval side, reading the corpus, each tokenizer kernel, the n-gram hashes, the
index probe, run finding, evidence, and the report. Times are inclusive (tokenizing includes its
kernels); the wrappers add a little overhead of their own, so the stages' sum is a little above
an unwrapped scan. No corpus hashing, one process.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench_corpus_pass import linked_shards  # NOTE: scripts/ is on the path as the script runs

from contam_cli.engine import accumulator, corpus_pass, eval_index, match
from contam_cli.features import scan as scan_module
from contam_cli.text import accel as text_accel
from contam_cli.text import tokenizer

TIMES: dict[str, float] = defaultdict(float)


def _timed(label: str, f: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return f(*args, **kwargs)
        finally:
            TIMES[label] += time.perf_counter() - t

    return wrapper


def _timed_iter(label: str, f: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        it = f(*args, **kwargs)
        while True:
            t = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                return
            finally:
                TIMES[label] += time.perf_counter() - t
            yield item

    return wrapper


STAGES = [
    ("eval side (read, index)", scan_module, "index_eval_refs"),
    ("tokenize (all)", tokenizer.Tokenizer, "_tokens"),
    ("  non-ASCII words", tokenizer.Tokenizer, "_normalize_words"),
    ("n-gram hashes", tokenizer.Tokenizer, "ngrams"),
    ("index probe", eval_index.EvalIndex, "lookup"),
    ("exact runs", match, "best_runs"),
    ("evidence", accumulator.Accumulator, "_offer"),
    ("merge shard results", accumulator.Accumulator, "merge"),
    ("report", scan_module, "ngram_report"),
    ("eval texts read back", scan_module, "attach_eval_texts"),
]
KERNELS = ["translate_edges", "word_tokens", "expand"]


def _wrap() -> None:
    for label, owner, name in STAGES:
        setattr(owner, name, _timed(label, getattr(owner, name)))
    corpus_pass.shard_batches = _timed_iter("read corpus", corpus_pass.shard_batches)
    k = text_accel.kernels()
    if k is not None:
        for name in KERNELS:
            setattr(k, name, _timed(f"  kernel {name}", getattr(k, name)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--shards", type=int, default=8)
    args = ap.parse_args(argv)
    eval_path = str(args.data / "eval.jsonl")
    with linked_shards(args.data, args.shards) as (corpus, mb):
        scan_module.scan(eval_path, str(corpus), hash_corpus=False)
        corpus_pass.tokenizer.cache_clear()
        _wrap()
        t = time.perf_counter()
        scan_module.scan(eval_path, str(corpus), hash_corpus=False)
        total = time.perf_counter() - t
    # NOTE: installed is not used: a corpus under MIN_BYTES (24 MiB) is scanned without them.
    used = any(label.startswith("  kernel") for label in TIMES)
    kernels = "compiled kernels" if used else "numpy only"
    print(f"{mb:.0f} MB of corpus, {kernels}: {total:.3f} s ({mb / total:.0f} MB/s)\n")
    print("| stage | s | share | ns per corpus byte |")
    print("|---|--:|--:|--:|")
    order = [label for label, _, _ in STAGES[:1]] + ["read corpus"]
    order += [label for label, _, _ in STAGES[1:3]] + [f"  kernel {k}" for k in KERNELS]
    order += [label for label, _, _ in STAGES[3:]]
    for label in order:
        if label in TIMES:
            s = TIMES[label]
            print(f"| {label} | {s:.3f} | {s / total:.0%} | {s / (mb * 1e6) * 1e9:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
