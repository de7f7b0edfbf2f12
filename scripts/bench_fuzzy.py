"""Measure `contam scan --fuzzy` against `wc -w` and the exact scan, back to back, one core.

    python scripts/bench_fuzzy.py [--mb 200] [--data DIR] [--n-eval 1000] [--seed 1234]
        [--repeat 1] [--head DIR] [--exact-only]

Generates (or reuses) the throughput benchmark with ``python -m
contam_cli.features.bench.generate --reuse`` (the directory naming and parameters of
scripts/bench_scan.py, so the two share data), reads every file once, then times on the same
files, with ``--jobs 1``: ``wc -w``; ``contam scan`` (the exact detector alone); ``contam scan
--fuzzy``; and with ``--head DIR`` (a clean clone of the last commit, e.g. ``git clone -q
/work/main /tmp/fuzzy_head``) the exact scan of that clone too, run with ``PYTHONPATH=DIR``.
``--repeat K`` runs the timed commands K times, interleaved (exact, fuzzy, head, exact, ...),
and reports the median and the spread, so that a difference between the working tree and HEAD
can be told from noise; ``--exact-only`` leaves the fuzzy runs out (the A/B of the exact scan
alone, for more repeats in the same time).

It prints one Markdown table (wall s, MB/s, CPU s, peak RSS, ratio to ``wc -w`` and to the
exact scan) and checks:

* the exact scan's report is byte-identical to HEAD's (``--head``): the fuzzy code path, when
  off, changes nothing;
* the fuzzy scan's report equals the exact scan's with the fuzzy fields taken out (the method,
  its scores, ``details.fuzzy``, its reasons and the texts attached only for them, the fuzzy
  settings and counts): turning it on changes nothing of the exact detector's results;
* what each run flagged per labelled category.

If this contam's ``scan`` has no ``--fuzzy`` option yet, the fuzzy run is this script's own
child (``child`` below) making the same library call the command makes. Exit status: 0; 1 if
a check fails; 2 if a run failed.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scan import (  # noqa: E402 - the sibling script, for its measuring helpers
    Run,
    _rss_mb,
    machine_info,
    measure,
    warm_cache,
)

REPO = Path(__file__).resolve().parents[1]


@dataclass
class Timed:
    """One tool's runs (all with the same command)."""

    tool: str
    runs: list[Run]
    report: Path | None = None

    @property
    def wall(self) -> float:
        return statistics.median(r.wall for r in self.runs)

    @property
    def spread(self) -> str:
        if len(self.runs) < 2:
            return ""
        walls = [r.wall for r in self.runs]
        return f"{min(walls):.2f}–{max(walls):.2f}"

    @property
    def failed(self) -> Run | None:
        return next((r for r in self.runs if r.returncode not in (0, 1)), None)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200.0, help="corpus size in MB (default 200)")
    ap.add_argument("--data", type=Path, default=None, help="data directory")
    ap.add_argument("--n-eval", type=int, default=1000, help="eval examples (default 1000)")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--repeat", type=int, default=1, help="runs of each timed command")
    ap.add_argument("--head", type=Path, default=None, help="a clone of HEAD to time too")
    ap.add_argument("--exact-only", action="store_true", help="no fuzzy runs (the A/B alone)")
    a = ap.parse_args(argv)
    if a.data is None:
        a.data = Path(tempfile.gettempdir()) / f"contam-bench-{a.mb:g}mb-n{a.n_eval}-s{a.seed}"
    a.data = a.data.resolve()
    return a


def prepare(args: argparse.Namespace) -> tuple[Path, Path, list[Path]] | None:
    cmd = [sys.executable, "-m", "contam_cli.features.bench.generate", "--out", str(args.data)]
    cmd += ["--mb", str(args.mb), "--seed", str(args.seed), "--n-eval", str(args.n_eval)]
    print(f"bench_fuzzy: data in {args.data}", file=sys.stderr, flush=True)
    if subprocess.run([*cmd, "--reuse"], cwd=REPO, stdout=subprocess.DEVNULL).returncode:
        return None
    shards = sorted((args.data / "corpus").glob("shard_*.jsonl"))
    (args.data / "runs").mkdir(exist_ok=True)
    return args.data / "eval.jsonl", args.data / "corpus", shards


def has_fuzzy_option() -> bool:
    out = subprocess.run(
        [sys.executable, "-m", "contam_cli", "scan", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    return "--fuzzy" in out.stdout


def scan_command(eval: Path, corpus: Path, report: Path, fuzzy: bool, cli: bool) -> list[str]:
    if fuzzy and not cli:
        me = str(Path(__file__).resolve())
        return [sys.executable, me, "child", str(eval), str(corpus), str(report)]
    cmd = [sys.executable, "-m", "contam_cli", "scan", str(eval), "--corpus", str(corpus)]
    cmd += ["--report", str(report), "--no-fail", "--jobs", "1"]
    return [*cmd, "--fuzzy"] if fuzzy else cmd


def child(argv: list[str]) -> int:
    """``child EVAL CORPUS REPORT``: the library call ``contam scan --fuzzy --jobs 1`` makes."""
    from contam_cli.cli.common import tune_allocator
    from contam_cli.engine.fuzzy import FuzzyConfig
    from contam_cli.features.scan import scan
    from contam_cli.report import save_report

    tune_allocator()  # NOTE: as the command line does
    eval, corpus, report = argv
    save_report(scan([Path(eval)], {"corpus": [Path(corpus)]}, jobs=1, fuzzy=FuzzyConfig()), report)
    return 0


# -- comparing reports ---------------------------------------------------------------------------


def without_fuzzy(doc: dict) -> dict:
    """A report's JSON with everything of the fuzzy detector taken out (see the module doc)."""
    out = dict(doc)
    out["methods"] = [m for m in doc["methods"] if m["detector"] != "fuzzy"]
    config = dict(doc["config"])
    config.pop("fuzzy", None)
    config["policy"] = {k: v for k, v in config["policy"].items() if k != "min_fuzzy"}
    config["policy"]["source_thresholds"] = {
        k: {f: x for f, x in v.items() if f != "fuzzy"}
        for k, v in config["policy"]["source_thresholds"].items()
    }
    out["config"] = config
    examples = []
    for e in doc["examples"]:
        e = dict(e)
        fuzzy_only = bool(e["reasons"]) and all(r["detector"] == "fuzzy" for r in e["reasons"])
        e["reasons"] = [r for r in e["reasons"] if r["detector"] != "fuzzy"]
        e["flagged"] = bool(e["reasons"])
        e["scores"] = {k: v for k, v in e["scores"].items() if k != "fuzzy"}
        e["details"] = {k: v for k, v in e["details"].items() if k != "fuzzy"}
        if fuzzy_only and not e["details"]["ngram"]["matched_sources"]:
            e["text"] = None  # NOTE: attached for the fuzzy reasons alone
        examples.append(e)
    out["examples"] = examples
    summary = {k: v for k, v in doc["summary"].items() if k != "fuzzy_unscorable"}
    flagged = sum(e["flagged"] for e in examples)
    summary["clean"] += summary["flagged"] - flagged
    summary["flagged"] = flagged
    out["summary"] = summary
    return out


def flagged_by_category(labels: Path, reports: dict[str, dict]) -> str:
    labs = [orjson.loads(line) for line in labels.read_bytes().splitlines() if line.strip()]
    cats: dict[str, list[str]] = {}
    for lab in labs:
        cats.setdefault(lab["category"], []).append(str(lab["id"]))
    flagged = {k: {str(e["id"]) for e in r["examples"] if e["flagged"]} for k, r in reports.items()}
    out = ["| category | examples | " + " | ".join(reports) + " |"]
    out.append("|---|--:|" + "--:|" * len(reports))
    for cat, ids in cats.items():
        cells = [f"{sum(i in f for i in ids)}/{len(ids)}" for f in flagged.values()]
        out.append(f"| {cat} | {len(ids)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


# -- main ----------------------------------------------------------------------------------------


def table(rows: list[Timed], mb: float) -> str:
    wc = next(r for r in rows if r.tool == "`wc -w`")
    exact = next((r for r in rows if r.tool.startswith("`contam scan` (exact")), None)
    out = [
        "| tool | wall s (median) | spread | MB/s | CPU s | peak RSS MB | vs `wc -w` "
        "| vs exact scan |",
        "|---|--:|---|--:|--:|--:|--:|--:|",
    ]
    for r in rows:
        cpu = statistics.median(x.cpu for x in r.runs)
        rss = max(x.max_rss_mb for x in r.runs)
        vs_exact = f"{exact.wall / r.wall:.3f}×" if exact else "—"
        out.append(
            f"| {r.tool} | {r.wall:.2f} | {r.spread} | {mb / r.wall:,.1f} | {cpu:.2f} "
            f"| {rss:,.1f} | {wc.wall / r.wall:.3f}× | {vs_exact} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["child"]:
        return child(argv[1:])
    args = parse_args(argv)
    found = prepare(args)
    if found is None:
        print("bench_fuzzy: error: data generation failed", file=sys.stderr)
        return 2
    eval, corpus, shards = found
    mb = sum(p.stat().st_size for p in shards) / 1e6
    runs = args.data / "runs"
    warm_cache([eval, *shards])
    cli = has_fuzzy_option()
    exact = Timed("`contam scan` (exact, `--jobs 1`)", [], runs / "fuzzybench-exact.json")
    fuzzy = None
    if not args.exact_only:
        fuzzy = Timed("`contam scan --fuzzy --jobs 1`", [], runs / "fuzzybench-fuzzy.json")
    head = None
    if args.head is not None:
        head = Timed(f"HEAD `contam scan` (exact), {args.head}", [], runs / "fuzzybench-head.json")
    wc = Timed("`wc -w`", [measure(["wc", "-w", *map(str, shards)])])
    env = {**os.environ, "PYTHONPATH": str(args.head)} if args.head else None
    for k in range(args.repeat):
        for t, is_fuzzy in ((exact, False), (fuzzy, True), (head, False)):
            if t is None:
                continue
            print(f"bench_fuzzy: {t.tool}, run {k + 1}", file=sys.stderr, flush=True)
            cmd = scan_command(eval, corpus, t.report, is_fuzzy, cli)  # type: ignore[arg-type]
            t.runs.append(_measure(cmd, head=t is head, env=env, cwd=args.head))
    rows = [x for x in (wc, exact, fuzzy, head) if x is not None]
    return report(rows, mb, args, cli, eval.parent / "labels.jsonl")


def _measure(cmd: list[str], *, head: bool, env: dict | None, cwd: Path | None) -> Run:
    if not head:
        return measure(cmd, cwd=REPO)
    # NOTE: measure() passes no environment; the clone is found through PYTHONPATH.
    old = dict(os.environ)
    os.environ.update(env or {})
    try:
        return measure(cmd, cwd=cwd)
    finally:
        os.environ.clear()
        os.environ.update(old)


def report(rows: list[Timed], mb: float, args: argparse.Namespace, cli: bool, labels: Path) -> int:
    failed = [(r.tool, r.failed) for r in rows if r.failed is not None]
    print(f"### `contam scan --fuzzy` on {mb:,.1f} MB of corpus, {args.n_eval:,} eval examples\n")
    print(table(rows, mb) + "\n")
    if not cli and not args.exact_only:
        print("- this contam's `scan` has no `--fuzzy` yet: the fuzzy row is the same library")
        print("  call made by `python scripts/bench_fuzzy.py child` (allocator tuned as the CLI)")
    own = _rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    print(f"- peak RSS includes the {own:.0f} MB this script held (children inherit it)")
    for tool, run in failed:
        print(f"- {tool} failed (exit {run.returncode}): {run.tail()}")
    if failed:
        return 2
    docs = {r.tool: orjson.loads(r.report.read_bytes()) for r in rows if r.report is not None}
    exact = rows[1]
    fuzzy = None if args.exact_only else rows[2]
    ok = True
    if fuzzy is not None:
        ok = without_fuzzy(docs[fuzzy.tool]) == docs[exact.tool]
        print(f"- the fuzzy scan's report minus the fuzzy fields equals the exact scan's: {ok}")
    if args.head is not None:
        head = rows[-1].report.read_bytes()  # type: ignore[union-attr]
        identical = head == exact.report.read_bytes()  # type: ignore[union-attr]
        print(f"- the exact scan's report is byte-identical to HEAD's: {identical}")
        ok &= identical
    print("\nFlagged per category of labels.jsonl:\n")
    shown = [r for r in (exact, fuzzy) if r is not None]
    print(flagged_by_category(labels, {r.tool: docs[r.tool] for r in shown}))
    print(f"\n{machine_info()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
