"""When each part of one `contam scan` runs: the serial start, the corpus pass, every shard.

    python scripts/timeline_scan.py EVAL CORPUS [--python-gc] [contam scan options, e.g. --jobs 2]

Runs ``contam scan EVAL --corpus CORPUS --report <temp> --no-fail [options]`` in this process
(the command line itself, worker processes included), with timers around the corpus pass and
around each shard (in whichever process runs it), and prints, in seconds from the start of
this script: when the scan reached its corpus pass, how long the pass took, what followed, and
per process the shards it ran and their summed time. The interpreter's own start (before this
script runs) is not included; ``/usr/bin/time`` gives the whole.

With ``--jobs 2`` against ``--jobs 1`` this separates what divides among workers (the pass) from
what one process does alone (before and after it). It also prints the time this process spent in
the cyclic garbage collector, under the command's thresholds (``contam_cli.entry.GC_THRESHOLDS``)
or, with ``--python-gc``, under Python's own.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

T0 = time.time()

from contam_cli.engine import corpus_pass  # noqa: E402
from contam_cli.features import scan as scan_module  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    eval_path, corpus, *rest = argv
    python_gc = "--python-gc" in rest
    rest = [a for a in rest if a != "--python-gc"]
    collected = {"s": 0.0, "n": 0, "at": 0.0}

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collected["at"] = time.perf_counter()
        else:
            collected["s"] += time.perf_counter() - collected["at"]
            collected["n"] += 1

    gc.callbacks.append(on_gc)
    read, write = os.pipe()
    marks: dict[str, float] = {}
    real_shard = corpus_pass.scan_shard
    real_run = scan_module.run_corpus

    def timed_shard(ctx: Any, shard: Any) -> Any:
        start = time.time()
        out = real_shard(ctx, shard)
        # NOTE: one short write per shard: atomic on a pipe, from any worker process.
        os.write(write, f"{os.getpid()} {start - T0:.4f} {time.time() - T0:.4f}\n".encode())
        return out

    def timed_run(*args: Any, **kwargs: Any) -> Any:
        marks["pass starts"] = time.time() - T0
        try:
            return real_run(*args, **kwargs)
        finally:
            marks["pass ends"] = time.time() - T0

    corpus_pass.scan_shard = timed_shard
    scan_module.run_corpus = timed_run
    from contam_cli import entry

    with tempfile.TemporaryDirectory() as tmp:
        report = str(Path(tmp) / "report.json")
        sys.argv = ["contam", "scan", eval_path, "--corpus", corpus, "--report", report]
        sys.argv += ["--no-fail", *rest]
        marks["command starts"] = time.time() - T0
        # NOTE: the command's table goes nowhere (its descriptor, for what writes to it directly).
        sys.stdout.flush()
        saved, quiet = os.dup(1), os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        try:
            code = entry.run(None if python_gc else entry.GC_THRESHOLDS)
            if code != 0:
                print(f"timeline_scan: contam exited with {code}", file=sys.stderr)
                return 2
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
            os.close(quiet)
    marks["command ends"] = time.time() - T0
    os.close(write)
    with os.fdopen(read) as fh:
        lines = fh.read().split()
    shards: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for k in range(0, len(lines), 3):
        shards[lines[k]].append((float(lines[k + 1]), float(lines[k + 2])))
    start, end = marks["pass starts"], marks["pass ends"]
    print(f"imports done:           {marks['command starts']:.2f} s")
    print(f"corpus pass starts:     {start:.2f} s")
    print(f"corpus pass:            {end - start:.2f} s")
    print(f"after the pass:         {marks['command ends'] - end:.2f} s (report, outputs)")
    total = 0.0
    for pid, spans in sorted(shards.items()):
        busy = sum(b - a for a, b in spans)
        total += busy
        first, last = min(a for a, _ in spans), max(b for _, b in spans)
        print(f"process {pid}: {len(spans)} shards, {busy:.2f} s in them, {first:.2f}-{last:.2f}")
    print(f"shard time, all processes: {total:.2f} s")
    which = "Python's" if python_gc else "the command's"
    print(f"garbage collector, this process: {collected['s']:.3f} s in {collected['n']} "
          f"collections ({which} thresholds)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
