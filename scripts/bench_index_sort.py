"""Build the eval index with the compiled kernels and with numpy, for eval sets of a few sizes,
each in a fresh process (so loading the kernels from their cache counts, as in a scan).

    python scripts/bench_index_sort.py EVAL [--sizes 1000,3000,10000,30000] [--rounds 2]

EVAL is an eval set (JSONL with "text"), e.g. the ``eval.jsonl`` of a ``scripts/bench_scan.py``
data directory of 100,000 examples; each size takes its first examples. The two ways alternate;
each child warms the tokenizer's kernels first (a scan has them loaded by then), then times
``build_eval_index`` alone. ``engine.eval_index.COMPILED_SORT_MIN`` is where the choice between
them is made: the printed n-gram counts say on which side of it each size falls.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

_CHILD = """
import sys, time, itertools, orjson
from contam_cli.engine import eval_index
from contam_cli.text import Tokenizer
way, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(path, "rb") as fh:
    texts = [orjson.loads(line)["text"] for line in itertools.islice(fh, size)]
tk = Tokenizer(accel=True)
tk.ngrams(tk.tokens([b"the tokenizer's kernels, loaded first as in a scan"]), 3)
eval_index.COMPILED_SORT_MIN = 0 if way == "kernels" else 1 << 62
start = time.perf_counter()
index = eval_index.build_eval_index(texts, 13, tokenizer=tk)
print(f"{(time.perf_counter() - start) * 1000:.1f} {len(index.grams)}")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("eval", type=Path)
    ap.add_argument("--sizes", default="1000,3000,10000,30000", help="eval examples, each")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each way per size")
    args = ap.parse_args()
    print("| examples | distinct n-grams | compiled kernels, ms | numpy, ms |")
    print("|--:|--:|--:|--:|")
    for size in [int(s) for s in args.sizes.split(",")]:
        times: dict[str, list[float]] = {"kernels": [], "numpy": []}
        grams = 0
        for _ in range(args.rounds):
            for way in times:
                out = subprocess.run(
                    [sys.executable, "-c", _CHILD, way, str(args.eval), str(size)],
                    capture_output=True, text=True, check=True,
                ).stdout.split()  # fmt: skip
                times[way].append(float(out[0]))
                grams = int(out[1])
        cells = [", ".join(f"{t:.1f}" for t in times[w]) for w in times]
        print(f"| {size:,} | {grams:,} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
