"""Where the compiled kernels start to pay: `contam scan` with and without them, by corpus size.

    python scripts/bench_kernel_choice.py [--rounds 3] [--data DIR]

Generates (or reuses) a 128 MB benchmark corpus (``contam_cli.features.bench.generate``), and
scans its first 16, 32, 64, 96 and 128 MB (whole shard files; 16 MB is half of one) with
``--jobs 1``, once with the kernels forced on and once forced off (``io.accel.MIN_BYTES`` set to
0 or out of reach, in the scanning process), alternating, each in a fresh process. Prints the
mean and the least CPU seconds (user + sys) of each: the size where the two cross is where
``MIN_BYTES`` belongs. numba's cache is filled by one unmeasured run first.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from bench_corpus_pass import linked_shards  # NOTE: scripts/ is on the path as the script runs

_SCAN = """
import sys
import contam_cli.io.accel as accel
accel.MIN_BYTES = int(sys.argv[1])
from contam_cli.entry import main
sys.argv = ["contam", "scan", sys.argv[2], "--corpus", sys.argv[3], "--report", sys.argv[4],
            "--no-fail", "--jobs", "1"]
main()
"""
_NEVER = 1 << 60


def _cpu(cmd: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _corpora(data: Path, work: Path, stack: ExitStack) -> dict[int, Path]:
    """Corpus directories of the first 1 to 4 shards (32 to 128 MB), and one of half a shard."""
    out = {32 * k: stack.enter_context(linked_shards(data, k))[0] for k in range(1, 5)}
    half = work / "c_half"
    half.mkdir()
    with sorted((data / "corpus").glob("*.jsonl"))[0].open("rb") as fh:
        lines = fh.read(16_000_000).split(b"\n")[:-1]
    (half / "half.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return {16: half, **out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "contam-bench-128")
    args = ap.parse_args(argv)
    gen = [sys.executable, "-m", "contam_cli.features.bench.generate", "--out", str(args.data)]
    subprocess.run([*gen, "--mb", "128", "--reuse"], check=True, stdout=subprocess.DEVNULL)
    eval_path = str(args.data / "eval.jsonl")
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        work = Path(tmp)
        corpora = _corpora(args.data, work, stack)
        report = str(work / "r.json")

        def scan(minimum: int, corpus: Path) -> float:
            return _cpu([sys.executable, "-c", _SCAN, str(minimum), eval_path, str(corpus), report])

        scan(0, corpora[16])  # numba's cache, the page cache
        times: dict[tuple[int, bool], list[float]] = {}
        for _ in range(args.rounds):
            for mb, corpus in corpora.items():
                for kernels in (True, False):
                    t = scan(0 if kernels else _NEVER, corpus)
                    times.setdefault((mb, kernels), []).append(t)
    print(f"`contam scan --jobs 1`, CPU s (user + sys), {args.rounds} runs each: mean (least)\n")
    print("| corpus | kernels | numpy only | faster |")
    print("|--:|--:|--:|---|")
    for mb in corpora:
        k, n = times[(mb, True)], times[(mb, False)]
        faster = "kernels" if sum(k) < sum(n) else "numpy"
        cell = [f"{sum(t) / len(t):.2f} ({min(t):.2f})" for t in (k, n)]
        print(f"| {mb} MB | {cell[0]} | {cell[1]} | {faster} |")
    print(f"\nMachine: nproc {os.cpu_count()}; Python {sys.version.split()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
