"""Measure the eval side of a scan: building the eval index, and probing it with corpus n-grams.

    python scripts/bench_index.py DATA [--corpus-mb 100] [--rounds 3] [--ahead 0,32,64,128,256]
                                       [--splits 10/26,20/20]

DATA is a directory written by ``scripts/bench_scan.py`` (``eval.jsonl`` and ``corpus/``; the
script prints where it put it, e.g. ``/tmp/contam-bench-1000mb-n100000-s1234``). Prints:

* the index: examples, distinct n-grams, build time, the bytes of its arrays, and this process's
  peak RSS over the build (after loading the kernels, which is reported apart);
* the prefilter: the share of corpus n-grams that pass it;
* the probe (``EvalIndex.lookup`` with the compiled kernels) over the first ``--corpus-mb`` of
  the corpus, with each prefetch distance of ``--ahead`` (0: none; the one scans use is always
  among them, marked), alternating per chunk, each probe right after the chunk is tokenized (as
  in a scan, so the caches hold the tokenizer's data, not the filter's);
* with ``--splits``: the index's sort alone, the index built again with each pair of bucket
  bits (its first scatter's, and both splits' together), alternating.

Needs the ``fast`` extra (numba). Times are wall seconds of this process; compare the two probe
rows of one run, not numbers across runs (the machine is shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from contam_cli.engine import eval_index, occurrence_sort
from contam_cli.engine.accel import index_kernels as kernels
from contam_cli.engine.bloom import bloom_test
from contam_cli.features.eval_side import index_eval_refs
from contam_cli.features.scan import ScanOptions
from contam_cli.io import iter_files, iter_text_batches
from contam_cli.text import Tokenizer


def _rss_mb() -> dict[str, float]:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS", "VmHWM")):
                key, value = line.split(":")
                out[key] = int(value.split()[0]) / 1024
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path, help="a bench_scan.py data directory")
    ap.add_argument("--corpus-mb", type=float, default=100.0, help="corpus MB to probe with")
    ap.add_argument("--rounds", type=int, default=3, help="passes over that corpus")
    ap.add_argument("--ahead", default="0,32,64,128,256", help="prefetch distances to time")
    ap.add_argument(
        "--splits",
        default="",
        help="also build the index again with each FIRST/ALL pair of its sort's bucket bits "
        "(occurrence_sort.COARSE_BITS/SPLIT_BITS; 20/20: one scatter into 2**20 buckets, the sort "
        "before 10/26), --rounds times each, alternating, and time the sort alone",
    )
    a = ap.parse_args(argv)
    bare = _rss_mb()["VmRSS"]
    t0 = time.perf_counter()
    k = kernels()
    if k is None:
        print("bench_index: needs numba (pip install '.[fast]')", file=sys.stderr)
        return 2
    opts = ScanOptions()
    tk = Tokenizer(opts.norm, accel=True)
    tk.ngrams(tk.tokens(["load the kernels"]), 2)
    loaded = time.perf_counter() - t0
    before = _rss_mb()["VmRSS"]
    t0 = time.perf_counter()
    _, _, index = index_eval_refs(a.data / "eval.jsonl", opts, tk)
    built = time.perf_counter() - t0
    arrays = [index.grams, index.occ_multi, index.occ_extra, index.occ_ex, index.occ_pos]
    arrays += [index.occ_first_bits]
    arrays += [index.total_ngrams, index.n_tokens, index.words, index.directory]
    size = sum(x.nbytes for x in arrays) / 1e6
    print(f"numba and the kernels loaded: {loaded:.2f} s, RSS {bare:.0f} -> {before:.0f} MB")
    print(
        f"index: {index.n_examples:,} examples, {len(index.grams):,} distinct n-grams, "
        f"built in {built:.2f} s (reading included); arrays {size:.0f} MB; "
        f"peak RSS {_rss_mb()['VmHWM']:.0f} MB"
    )

    chunks: list[list[bytes]] = []
    budget = a.corpus_mb * 1e6
    for path in iter_files(a.data / "corpus"):
        for batch in iter_text_batches(path):
            chunks.append(batch.texts)
            budget -= sum(map(len, batch.texts))
            if budget <= 0:
                break
        if budget <= 0:
            break
    mb = sum(len(t) for c in chunks for t in c) / 1e6
    probe = (index.words, 64 - index.words_log2, index.grams, index.directory, 64 - index.dir_log2)
    aheads = sorted({int(x) for x in a.ahead.split(",")} | {k.PREFETCH_AHEAD})
    timing = dict.fromkeys(aheads, 0.0)
    passed = total = 0
    for _ in range(a.rounds):
        for chunk in chunks:
            for ahead in timing:
                grams, _ = tk.ngrams(tk.tokens(chunk), index.n)
                t0 = time.perf_counter()
                k.lookup(grams, *probe, ahead)
                timing[ahead] += time.perf_counter() - t0
            passed += int(bloom_test(index.words, index.words_log2, grams).sum())
            total += len(grams)
    print(
        f"prefilter: {index.words.nbytes / 1e6:.1f} MB, {passed / max(total, 1):.2%} of "
        f"{total:,} corpus n-grams pass"
    )
    for ahead, seconds in timing.items():
        mark = "  (the scan's)" if ahead == k.PREFETCH_AHEAD else ""
        print(
            f"probe, prefetch {ahead:>3}: {seconds:.2f} s for {a.rounds} x {mb:.0f} MB, "
            f"{seconds / max(total, 1) * 1e9:.1f} ns per n-gram{mark}"
        )
    if a.splits:
        del index
        _time_splits(a.data / "eval.jsonl", opts, tk, a.splits, a.rounds)
    return 0


def _time_splits(
    eval_path: Path, opts: ScanOptions, tk: Tokenizer, splits: str, rounds: int
) -> None:
    pairs = [tuple(int(b) for b in x.split("/")) for x in splits.split(",")]
    spent: dict[tuple[int, ...], list[float]] = {p: [] for p in pairs}
    real = occurrence_sort.sort_compiled
    saved = occurrence_sort.COARSE_BITS, occurrence_sort.SPLIT_BITS
    least = eval_index.COMPILED_SORT_MIN
    eval_index.COMPILED_SORT_MIN = 0  # NOTE: the compiled sort is what is timed, at any size
    try:
        for _ in range(rounds):
            for pair in pairs:
                occurrence_sort.COARSE_BITS, occurrence_sort.SPLIT_BITS = pair

                def timed(*args: object, pair: tuple[int, ...] = pair) -> object:
                    t0 = time.perf_counter()
                    try:
                        return real(*args)  # type: ignore[arg-type]
                    finally:
                        spent[pair].append(time.perf_counter() - t0)

                occurrence_sort.sort_compiled = timed  # type: ignore[assignment]
                index_eval_refs(eval_path, opts, tk)
    finally:
        occurrence_sort.sort_compiled = real
        occurrence_sort.COARSE_BITS, occurrence_sort.SPLIT_BITS = saved
        eval_index.COMPILED_SORT_MIN = least
    for (first, split), times in spent.items():
        shown = ", ".join(f"{t:.2f}" for t in times)
        print(f"sort, buckets of {first} then {split} bits: {min(times):.2f} s best ({shown})")


if __name__ == "__main__":
    raise SystemExit(main())
