"""Time one process's scan of a few corpus shards, with the compiled kernels and without.

    python scripts/bench_corpus_pass.py DATA [--shards 8] [--repeat 4]

DATA is a data directory of ``scripts/bench_scan.py`` (its ``eval.jsonl`` and ``corpus/``).
Each variant runs in a fresh child process (``CONTAM_ACCEL`` decides), which scans once to warm
up (numba's cache, the page cache) and then ``--repeat`` more times; the best and every time are
printed, with the MB scanned. Start-up is left out, so this isolates the corpus pass (plus the
small eval side of the data).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CHILD = """
import sys, time
from contam_cli.features.scan import scan
eval_path, corpus, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
scan(eval_path, corpus, hash_corpus=False)
times = []
for _ in range(repeat):
    t = time.perf_counter()
    scan(eval_path, corpus, hash_corpus=False)
    times.append(time.perf_counter() - t)
print(" ".join(f"{x:.3f}" for x in times))
"""


@contextmanager
def linked_shards(data: Path, count: int) -> Iterator[tuple[Path, float]]:
    """A temporary corpus directory linking the first `count` corpus shards of `data` (a
    ``bench_scan.py`` data directory), and their MB; SystemExit(2) when there are none."""
    shards = sorted((data / "corpus").glob("*.jsonl"))[:count]
    if not shards:
        print(f"{Path(sys.argv[0]).name}: no corpus shards under {data}", file=sys.stderr)
        raise SystemExit(2)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        for p in shards:
            (corpus / p.name).symlink_to(p.resolve())
        yield corpus, sum(p.stat().st_size for p in shards) / 1e6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=4)
    args = ap.parse_args(argv)
    with linked_shards(args.data, args.shards) as (corpus, mb):
        for name, accel in (("compiled kernels", "1"), ("numpy only (CONTAM_ACCEL=0)", "0")):
            env = {**os.environ, "CONTAM_ACCEL": accel}
            cmd = [sys.executable, "-c", _CHILD, str(args.data / "eval.jsonl"), str(corpus),
                   str(args.repeat)]  # fmt: skip
            out = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"bench_corpus_pass: {name} failed:\n{out.stderr}", file=sys.stderr)
                return 2
            times = [float(x) for x in out.stdout.split()]
            print(f"{name}: {mb:.0f} MB, best {min(times):.3f} s ({mb / min(times):.0f} MB/s); "
                  f"all {' '.join(f'{t:.3f}' for t in times)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
