"""Peak memory of a scan whose corpus is one very long document (one JSONL line), windowed and
whole, with the two reports compared byte for byte.

    python scripts/bench_long_doc.py --mb 221          # the size the hardening catalogue used
    python scripts/bench_long_doc.py --what index      # `contam index build --positions`
    python scripts/bench_long_doc.py --what ignore-common   # `contam scan --ignore-common 5`
    python scripts/bench_long_doc.py --what clean      # `contam clean --target corpus`

Each run is a child process (`contam scan ... --json`, one job); its peak RSS is its own
(``os.wait4``). "whole" sets the windowing thresholds above the document
(the code before windows, apart from the reading fixes); "baseline" is the same command on a
one-line corpus, for the process's fixed cost (numpy, numba and the kernels). For ``--what
index`` the two indexes' files (the header included) are compared; for ``--what clean`` the
cleaned files (not the manifest).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

LEAK = (
    "the quick brown fox jumps over the lazy dog while seven wizards quietly judge boxing "
    "matches near the river bank today"
)
CHILD = """
import sys
import contam_cli.engine.accumulator as acc
import contam_cli.engine.corpus_index.mapper as mapper
import contam_cli.engine.doc_frequency as doc_frequency
import contam_cli.engine.windows as windows
if sys.argv[1] == "whole":
    acc.LONG_DOC_BYTES = mapper.LONG_DOC_BYTES = doc_frequency.LONG_DOC_BYTES = 1 << 62
    windows.LONG_DOC_BYTES = 1 << 62
from contam_cli.entry import main
sys.argv = ["contam", *sys.argv[2:]]
main()
"""
WHAT = ("scan", "ignore-common", "index", "clean")


def command(what: str, evals: Path, corpus: Path, out: Path) -> list[str]:
    """The contam command line that `what` measures."""
    if what == "index":
        return ["index", "build", "-c", str(corpus), "-o", str(out), "--positions", "--force"]
    if what == "clean":
        return ["clean", str(evals), "-c", str(corpus), "--target", "corpus", "-o", str(out)]
    extra = ["--ignore-common", "5"] if what == "ignore-common" else []
    return ["scan", str(evals), "-c", str(corpus), "--json", "-j", "1", *extra]


def output_files(out: Path) -> bytes:
    """An index's or a cleaned corpus's files, one after the other (what two runs must share;
    not a clean's hidden manifest)."""
    return b"".join(p.read_bytes() for p in sorted(out.iterdir()) if not p.name.startswith("."))


def make_data(directory: Path, mb: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)])
    words = vocab[rng.integers(0, len(vocab), size=mb * 1_000_000 // 7)].tolist()
    cut = len(words) // 3
    text = " ".join([*words[:cut], LEAK, *words[cut:]])
    corpus = directory / "long.jsonl"
    corpus.write_bytes(orjson.dumps({"text": text}) + b"\n")
    small = directory / "small.jsonl"
    small.write_bytes(orjson.dumps({"text": "a few words " + LEAK}) + b"\n")
    evals = directory / "eval.jsonl"
    evals.write_bytes(
        orjson.dumps({"id": "leak", "text": LEAK})
        + b"\n"
        + orjson.dumps({"id": "clean", "text": "nothing in this example is in the corpus at all"})
        + b"\n"
    )


def run(mode: str, args: list[str]) -> tuple[bytes, float, float]:
    """(output, peak RSS in MB, seconds) of one child command (its own rusage, from wait4)."""
    t = time.perf_counter()
    cmd = [sys.executable, "-c", CHILD, mode, *args]
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout is not None and child.stderr is not None
    out, err = child.stdout.read(), child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    took = time.perf_counter() - t
    if child.returncode not in (0, 1):
        sys.exit(f"{mode}: exit {child.returncode}: {err.decode()}")
    return out, usage.ru_maxrss / 1024, took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--mb", type=int, default=221, help="size of the document (MB)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--what", choices=WHAT, default="scan", help="the command measured")
    ap.add_argument("--make", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make is not None:
        make_data(args.make, args.mb, args.seed)
        return
    with tempfile.TemporaryDirectory() as tmp:
        # NOTE: made by a child: a child's peak RSS counts the pages of the process it was
        # forked from, so this one must never hold the document.
        made = [sys.executable, __file__, "--mb", str(args.mb), "--seed", str(args.seed)]
        subprocess.run([*made, "--make", tmp], check=True)
        evals, corpus, small = (Path(tmp) / f for f in ("eval.jsonl", "long.jsonl", "small.jsonl"))
        size = os.path.getsize(corpus) / 1e6
        out = Path(tmp) / "out"
        _, base, _ = run("windowed", command(args.what, evals, small, out))
        outputs = []
        for mode in ("windowed", "whole"):
            shutil.rmtree(out, ignore_errors=True)
            got, peak, took = run(mode, command(args.what, evals, corpus, out))
            outputs.append(
                (got if args.what in ("scan", "ignore-common") else output_files(out), peak, took)
            )
        (windowed, peak_w, t_w), (whole, peak_h, t_h) = outputs
    same = "identical" if windowed == whole else "DIFFERENT"
    print(f"`{' '.join(command(args.what, Path('EVAL'), Path('CORPUS'), Path('OUT')))}`")
    print(f"document: one JSONL line of {size:.1f} MB; fixed cost (baseline run): {base:.0f} MB")
    print("| run | peak RSS | over baseline | × document | seconds |")
    print("|---|--:|--:|--:|--:|")
    for name, peak, took in (("windowed", peak_w, t_w), ("whole", peak_h, t_h)):
        over = peak - base
        print(f"| {name} | {peak:.0f} MB | {over:.0f} MB | {over / size:.1f} | {took:.1f} |")
    compared = {"index": "index files", "clean": "cleaned files"}.get(args.what, "reports")
    print(f"{compared}: {same}")


if __name__ == "__main__":
    main()
