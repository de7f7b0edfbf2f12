"""Time the compiled tokenizer's first kernel, ``translate_edges``, on real corpus chunks.

    python scripts/bench_translate.py DATA [--shards 8] [--chunk-mb 1] [--repeat 8]

DATA is a data directory of ``scripts/bench_scan.py`` (its ``corpus/``). The first ``--shards``
shard files are cut into chunks of ``--chunk-mb`` and translated ``--repeat`` times (after one
unmeasured round, which loads numba's cache); prints the least and the median nanoseconds per
byte. To compare two versions of the kernel, run this at each commit on the same machine, one
right after the other.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from contam_cli.text.accel import kernels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--chunk-mb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=8)
    args = ap.parse_args(argv)
    k = kernels()
    if k is None:
        print("bench_translate: numba is not installed (extra fast)", file=sys.stderr)
        return 2
    size = int(args.chunk_mb * (1 << 20))
    chunks = []
    for path in sorted((args.data / "corpus").glob("*"))[: args.shards]:
        data = path.read_bytes()
        chunks += [np.frombuffer(data, np.uint8, min(size, len(data) - i), i)
                   for i in range(0, len(data), size)]  # fmt: skip
    total = sum(c.size for c in chunks)
    if not total:
        print(f"bench_translate: no corpus bytes under {args.data / 'corpus'}", file=sys.stderr)
        return 2
    times = []
    for r in range(args.repeat + 1):
        start = time.perf_counter()
        for c in chunks:
            k.translate_edges(c, True)
        if r:
            times.append((time.perf_counter() - start) / total * 1e9)
    print(
        f"translate_edges: {total / 1e6:.1f} MB in {len(chunks)} chunks, "
        f"least {min(times):.3f} ns/B, median {statistics.median(times):.3f} ns/B "
        f"({args.repeat} rounds)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
