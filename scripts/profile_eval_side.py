"""Where a scan's time and memory go, phase by phase: the eval side, the corpus pass, the report.

    python scripts/profile_eval_side.py EVAL CORPUS [--jobs 1] [--eval-cache DIR]
        [--cprofile OUT.prof] [--tracemalloc] [--report OUT.json]

Runs the same library calls as ``contam scan EVAL --corpus CORPUS --report OUT`` (index the eval
set, stream the corpus past it, build the report, read the reviewed eval texts again, write the
JSON), timing each and printing, after each, the process's CPU seconds (and the kernel's share of
them), its resident memory and its peak resident memory so far (``ru_maxrss``).
``--tracemalloc`` adds the peak of Python-level allocations per phase (numpy's arrays included;
slower). ``--cprofile`` writes a profile of the whole run for ``python -m pstats``.

Run it in a fresh process per measurement: a phase's peak includes every phase before it.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from contam_cli.cli.common import tune_allocator  # noqa: E402
from contam_cli.engine.corpus_pass import run_corpus  # noqa: E402
from contam_cli.engine.executor import make_executor  # noqa: E402
from contam_cli.engine.options import ScanOptions  # noqa: E402
from contam_cli.engine.shards import plan_shards  # noqa: E402
from contam_cli.features.eval_side import index_eval_refs  # noqa: E402
from contam_cli.features.eval_texts import attach_eval_texts  # noqa: E402
from contam_cli.features.ngram_report import ngram_report  # noqa: E402
from contam_cli.features.scan import _trim_heap, _want_kernels  # noqa: E402
from contam_cli.features.sources import describe_sources, resolve_sources  # noqa: E402
from contam_cli.policy import FlagPolicy  # noqa: E402
from contam_cli.report import save_report  # noqa: E402
from contam_cli.text import Tokenizer  # noqa: E402


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 * 1.048576


def _cpu() -> tuple[float, float]:
    """CPU seconds in all, and in the kernel, of this process and its children."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    kernel = u.ru_stime + c.ru_stime
    return u.ru_utime + c.ru_utime + kernel, kernel


class Phases:
    """Times and memory after each phase, printed as one Markdown table at the end."""

    def __init__(self, trace: bool) -> None:
        self.rows: list[tuple[str, float, float, float, float, float, float | None]] = []
        self.trace = trace

    def run(self, name: str, fn: Callable[[], Any]) -> Any:
        if self.trace:
            tracemalloc.start()
        t0, (c0, k0) = time.perf_counter(), _cpu()
        out = fn()
        c1, k1 = _cpu()
        wall, cpu, kernel = time.perf_counter() - t0, c1 - c0, k1 - k0
        traced = None
        if self.trace:
            traced = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
        self.rows.append((name, wall, cpu, kernel, _rss_mb(), _peak_mb(), traced))
        print(f"profile_eval_side: {name} {wall:.2f} s", file=sys.stderr, flush=True)
        return out

    def table(self) -> str:
        out = [
            "| phase | wall s | CPU s | of which kernel s | RSS after MB | peak RSS so far MB |"
            " traced peak MB |",
            "|---|--:|--:|--:|--:|--:|--:|",
        ]
        for name, wall, cpu, kernel, rss, peak, traced in self.rows:
            t = "—" if traced is None else f"{traced:,.0f}"
            cells = [f"{wall:.2f}", f"{cpu:.2f}", f"{kernel:.2f}", f"{rss:,.0f}", f"{peak:,.0f}", t]
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(out)


def profile(args: argparse.Namespace) -> str:
    ph = Phases(args.tracemalloc)
    opts = ScanOptions(jobs=args.jobs, eval_cache=args.eval_cache)
    sources = resolve_sources(str(args.corpus), opts)
    opts = replace(opts, accel=_want_kernels(opts, sources, str(args.eval)))  # NOTE: as a scan
    tk = Tokenizer(opts.norm, accel=opts.accel)
    ev = str(args.eval)
    records, eval_inputs, index = ph.run(
        "eval side: read, index" + (" (--eval-cache)" if args.eval_cache else ""),
        lambda: index_eval_refs(ev, opts, tk),  # NOTE: as a scan: the records as columns
    )
    _trim_heap()
    n_shards = sum(len(plan_shards(s, src)) for s, src in enumerate(sources))
    executor = make_executor(opts.jobs, n_shards)
    acc = ph.run("corpus pass", lambda: run_corpus(index, sources, opts, executor))
    inputs = {
        "eval": eval_inputs,
        "corpus": describe_sources(sources, acc.documents.tolist(), acc.text_bytes.tolist(), {}),
    }
    config = {**opts.describe(), "runs": "exact"}
    policy = FlagPolicy()
    report = ph.run(
        "report: results and policy",
        lambda: ngram_report(records, index, acc, policy, opts, inputs, config),
    )
    report = ph.run("report: eval texts read again", lambda: attach_eval_texts(report, ev, opts))
    if args.report is not None:
        ph.run("report: JSON written", lambda: save_report(report, args.report))
    return ph.table()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("eval", type=Path)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--eval-cache", type=Path, default=None)
    ap.add_argument("--report", type=Path, default=None, help="also write the JSON report")
    ap.add_argument("--cprofile", type=Path, default=None, help="write a cProfile here")
    ap.add_argument("--tracemalloc", action="store_true", help="peak traced memory per phase")
    args = ap.parse_args(argv)
    tune_allocator()
    load = os.getloadavg()
    if args.cprofile is not None:
        prof = cProfile.Profile()
        table = prof.runcall(profile, args)
        prof.dump_stats(str(args.cprofile))
    else:
        table = profile(args)
    print(table)
    print(f"\nload average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
