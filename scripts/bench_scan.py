"""Measure `contam scan` against `wc -w`, the reference scanner and peers, in one run.

    python scripts/bench_scan.py [--mb 200] [--data DIR] [--n-eval 1000] [--planted-frac F]
        [--jobs 1 --jobs 0 ...] [--ref PATH] [--peers] [--skip-ref] [--eval-cache]

Generates the synthetic benchmark with ``python -m contam_cli.features.bench.generate --reuse``
(a DIR whose meta.json matches the parameters is kept), then runs every tool on the same files and
prints one Markdown table: wall time, MB/s, CPU time (user + sys of the child and its waited
descendants, from ``wait4``), MB per CPU-second, peak RSS, speed relative to ``wc -w`` (by wall
time, and per core: by CPU time), and
whether contam's findings equal the reference scanner's (flagged ids, overlap_fraction within
1e-9, longest_run). Below it: the first mismatches, what each tool flagged per labelled
category, and the machine. ``--eval-cache`` adds two ``--jobs 1`` rows with a fresh
``--eval-cache`` directory: the run that builds it and a warm run from it.

The 1,000,000-example setting: ``--n-eval 1000000 --planted-frac 0.05`` (about 415 MB of eval
examples; generating it with the 1 GB corpus takes about a minute).

This script stays small on purpose: on Linux a child's peak RSS starts at its parent's peak
(fork/exec inherit it), so generating data or loading reports in this process would inflate
every figure. Reports are read only after the last run.

Exit status: 0 normally; 1 if a contam run disagrees with the reference; 2 if a contam run
failed or the data could not be generated.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))  # NOTE: also when loaded by file (tests)
from bench_tools import (  # noqa: E402
    REPO,
    SHARED_TOOLS,
    Bench,
    Row,
    naive_note,
    peer_note,
    rss_mb,
    run_cached,
    run_contam,
    run_naive,
    run_peers,
    run_reference,
    run_tool,
)

DEFAULT_REF = SHARED_TOOLS / "reference" / "ref_scan.py"
OVERLAP_TOL = 1e-9
SHOW_MISMATCHES = 8


# ---------------------------------------------------------------------------------------------
# Comparing reports


def _by_id(report: dict) -> dict[str, dict]:
    return {str(e["id"]): _flat(e) for e in report.get("examples", [])}


def _flat(example: dict) -> dict:
    """An example with its n-gram scores at the top level, as in the reference's report (a
    ``contam.report/2`` example holds them under ``scores``)."""
    scores = example.get("scores")
    if not isinstance(scores, dict):
        return example
    return {**example, **{k: scores.get(k) for k in ("overlap_fraction", "longest_run")}}


def _example_diffs(eid: str, mine: dict, ref: dict, tol: float) -> list[str]:
    diffs = []
    if bool(mine.get("flagged")) != bool(ref.get("flagged")):
        diffs.append(f"{eid}: flagged={mine.get('flagged')} (reference {ref.get('flagged')})")
    a, b = mine.get("overlap_fraction"), ref.get("overlap_fraction")
    if (a is None) != (b is None) or (a is not None and b is not None and abs(a - b) >= tol):
        diffs.append(f"{eid}: overlap_fraction={a} (reference {b})")
    if mine.get("longest_run") != ref.get("longest_run"):
        diffs.append(
            f"{eid}: longest_run={mine.get('longest_run')} (reference {ref.get('longest_run')})"
        )
    return diffs


def compare_reports(contam: dict, ref: dict, tol: float = OVERLAP_TOL) -> list[str]:
    """Differences between a contam report and a reference report; empty when they agree.

    Both hold ``examples``: objects with ``id``, ``flagged``, ``overlap_fraction`` (float or
    null) and ``longest_run`` (int or null). An example on one side only is a difference.
    """
    mine, theirs = _by_id(contam), _by_id(ref)
    diffs = [f"{i}: missing from the contam report" for i in theirs if i not in mine]
    diffs += [f"{i}: not in the reference report" for i in mine if i not in theirs]
    for eid, ref_example in theirs.items():
        if eid in mine:
            diffs.extend(_example_diffs(eid, mine[eid], ref_example, tol))
    return diffs


def flagged_ids(report: dict) -> set[str]:
    return {str(e["id"]) for e in report.get("examples", []) if e.get("flagged")}


# ---------------------------------------------------------------------------------------------
# Data


def generator_command(args: argparse.Namespace) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "contam_cli.features.bench.generate",
        "--out",
        str(args.data),
        "--mb",
        str(args.mb),
        "--seed",
        str(args.seed),
        "--n-eval",
        str(args.n_eval),
        "--shard-mb",
        str(args.shard_mb),
        "--reuse",
    ]
    return cmd if args.planted_frac is None else [*cmd, "--planted-frac", str(args.planted_frac)]


def prepare_data(args: argparse.Namespace) -> tuple[Bench, dict] | None:
    """Generate (or reuse) the data in a child process; None if that fails."""
    print(f"bench_scan: data in {args.data}", file=sys.stderr, flush=True)
    proc = subprocess.run(generator_command(args), cwd=REPO, stdout=subprocess.PIPE, check=False)
    if proc.returncode != 0:
        return None
    meta = orjson.loads(proc.stdout)
    data: Path = args.data
    shards = sorted((data / "corpus").glob("shard_*.jsonl"))
    runs = data / "runs"
    runs.mkdir(exist_ok=True)
    size = sum(p.stat().st_size for p in shards)
    return Bench(data, data / "eval.jsonl", data / "corpus", shards, size, runs), meta


def warm_cache(paths: Iterable[Path]) -> None:
    """Read every file once, so the first tool measured does not pay for the disk."""
    buf = bytearray(1 << 20)  # NOTE: small, to keep this process's peak RSS low
    for p in paths:
        with p.open("rb", buffering=0) as f:
            while f.readinto(buf):
                pass


_WARM_KERNELS = """
import sys
from pathlib import Path
from contam_cli.features.scan import scan
d = Path(sys.argv[1])
lines = ['{"text": "the numba cache is warmed once caf\\u00e9 \\u6771\\u4eac"}'] * 3
(d / "c.jsonl").write_text("\\n".join(lines) + "\\n", encoding="utf-8")
scan(["the numba cache is warmed once"], d / "c.jsonl", n=3, accel=True)
"""


def warm_kernels() -> None:
    """Compile contam's numba kernels into their on-disk cache (a one-time cost per install and
    source change, several seconds), in a child process, so that no measured run pays it."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-c", _WARM_KERNELS, tmp]
        subprocess.run(cmd, check=False, cwd=REPO, capture_output=True)


# ---------------------------------------------------------------------------------------------
# Output


def _fmt(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def results_table(rows: list[Row], corpus_bytes: int) -> str:
    """The Markdown table; speed ratios are against the ``wc -w`` row when there is one."""
    mb = corpus_bytes / 1e6
    floor = next((r for r in rows if r.tool == "`wc -w`" and not r.error), None)
    floor_speed = mb / floor.run.wall if floor else None
    floor_cpu = floor.run.cpu if floor and floor.run.cpu > 0 else None
    out = [
        "| tool | wall s | MB/s | CPU s | MB per CPU-s | peak RSS MB | vs `wc -w` "
        "| per CPU-s vs `wc -w` | agrees with reference |",
        "|---|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        speed = mb / r.run.wall
        per_cpu = _fmt(mb / r.run.cpu) if r.run.cpu > 0 else "—"
        ratio = f"{speed / floor_speed:.3f}×" if floor_speed else "—"
        # NOTE: per core: wc -w's CPU time over this tool's (every process it ran, all cores).
        core_ratio = f"{floor_cpu / r.run.cpu:.3f}×" if floor_cpu and r.run.cpu > 0 else "—"
        out.append(
            f"| {r.tool} | {_fmt(r.run.wall, 2)} | {_fmt(speed)} | {_fmt(r.run.cpu, 2)} "
            f"| {per_cpu} | {_fmt(r.run.max_rss_mb)} | {ratio} | {core_ratio} | {r.agrees} |"
        )
    return "\n".join(out)


def detection_table(labels: list[dict], reports: dict[str, dict]) -> str:
    """Flagged/total per labelled category for each report, beside what the labels expect."""
    cats: dict[str, list[dict]] = {}
    for lab in labels:
        cats.setdefault(lab["category"], []).append(lab)
    flagged = [flagged_ids(rep) for rep in reports.values()]
    out = [
        "| category | examples | expected | " + " | ".join(reports) + " |",
        "|---|--:|---|" + "--:|" * len(reports),
    ]
    for cat, labs in cats.items():
        expected = {bool(lab["expected_flag"]) for lab in labs}
        exp = "mixed" if len(expected) > 1 else ("flag" if True in expected else "not flagged")
        cells = [f"{sum(lab['id'] in ids for lab in labs)}/{len(labs)}" for ids in flagged]
        out.append(f"| {cat} | {len(labs)} | {exp} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def machine_info() -> str:
    try:
        numpy_version = metadata.version("numpy")  # NOTE: not imported: see the module doc
    except metadata.PackageNotFoundError:
        numpy_version = "not installed"
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Machine: nproc {os.cpu_count()} (usable {usable}), {_cpu_model()}; "
        f"Python {platform.python_version()}, numpy {numpy_version}; {date}."
    )


def _load_labels(path: Path) -> list[dict]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def print_results(
    bench: Bench, meta: dict, rows: list[Row], notes: list[str], mismatches: dict[str, list[str]]
) -> None:
    c = meta["corpus"]
    print(
        f"### `contam scan` on {bench.corpus_bytes / 1e6:,.1f} MB of corpus "
        f"({c['documents']:,} documents, {c['shards']} shards), "
        f"{meta['eval']['examples']:,} eval examples\n"
    )
    print(results_table(rows, bench.corpus_bytes) + "\n")
    for note in notes + [r.error for r in rows if r.error]:
        print(f"- {note}")
    for tool, diffs in mismatches.items():
        print(f"\n{tool}: {len(diffs)} differences from the reference; the first ones:")
        for d in diffs[:SHOW_MISMATCHES]:
            print(f"    {d}")
    reports = {
        r.tool: r.report for r in rows if r.report is not None and not r.error and r.agrees != "n/a"
    }
    if reports:
        print("\nFlagged per category of labels.jsonl:\n")
        print(detection_table(_load_labels(bench.data / "labels.jsonl"), reports))
    print(f"\n{machine_info()}")


# ---------------------------------------------------------------------------------------------
# Main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200.0, help="corpus size in MB (default 200)")
    ap.add_argument(
        "--data",
        type=Path,
        default=None,
        help="data directory (default: one per parameter set in the temp directory)",
    )
    ap.add_argument("--n-eval", type=int, default=1000, help="eval examples (default 1000)")
    ap.add_argument(
        "--planted-frac",
        type=float,
        default=None,
        help="share of planted eval examples (default 0.2)",
    )
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--shard-mb", type=float, default=32.0)
    ap.add_argument(
        "--jobs",
        type=int,
        action="append",
        default=None,
        help="a `contam scan --jobs` value, one row each (default: 1 and 0)",
    )
    ap.add_argument("--ref", type=Path, default=DEFAULT_REF, help="reference scanner script")
    ap.add_argument("--skip-ref", action="store_true", help="do not run the reference scanner")
    ap.add_argument(
        "--eval-cache",
        action="store_true",
        help="also run --jobs 1 with a fresh --eval-cache: building it, then warm",
    )
    ap.add_argument(
        "--peers",
        action="store_true",
        help="also run the naive baseline and the installed peers ($VENVS)",
    )
    a = ap.parse_args(argv)
    a.jobs = a.jobs or [1, 0]
    if a.data is None:
        frac = "" if a.planted_frac is None else f"-p{a.planted_frac:g}"
        name = f"contam-bench-{a.mb:g}mb-n{a.n_eval}-s{a.seed}{frac}"
        a.data = Path(tempfile.gettempdir()) / name
    a.data, a.ref = a.data.resolve(), a.ref.resolve()  # tools run from the repository root
    return a


def judge(contam_rows: list[Row], ref: Row | None) -> dict[str, list[str]]:
    """Fill each contam row's "agrees" cell; return the differences per disagreeing row."""
    mismatches: dict[str, list[str]] = {}
    for row in contam_rows:
        if row.error:
            continue
        if ref is None or ref.report is None:
            row.agrees = "no reference"
            continue
        diffs = compare_reports(row.report or {}, ref.report)
        row.agrees = "no" if diffs else "yes"
        if diffs:
            mismatches[row.tool] = diffs
    return mismatches


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    prepared = prepare_data(args)
    if prepared is None:
        print("bench_scan: error: data generation failed", file=sys.stderr)
        return 2
    bench, meta = prepared
    warm_cache([bench.eval, *bench.shards])
    warm_kernels()
    notes: list[str] = []
    wc = run_tool("`wc -w`", ["wc", "-w", *map(str, bench.shards)], None, notes)
    contam_rows = run_contam(bench, args.jobs, notes)
    if args.eval_cache:
        contam_rows += run_cached(bench, notes)
    ref = run_reference(bench, args.ref, args.skip_ref, notes)
    naive = run_naive(bench, notes) if args.peers else None
    peers = run_peers(bench, notes) if args.peers else []
    own_rss = rss_mb(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    rows = [r for r in [wc, *contam_rows, ref, naive, *(p for p, _ in peers)] if r is not None]
    for row, flagged in peers:
        notes.append(peer_note(row, flagged, bench.eval.parent / "labels.jsonl"))
    for r in rows:
        r.load_report()
    if ref is not None and not ref.error:
        ref.agrees = "(reference)"
    if naive is not None and not naive.error:
        naive.agrees = "n/a"
        notes.append(naive_note(naive))
    notes.append(
        f"peak RSS includes the {own_rss:.0f} MB this script held when it started each "
        f"tool (Linux children inherit it): no figure can be lower"
    )
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        notes.append(
            "PYTHONDONTWRITEBYTECODE is set: every contam start compiled the Python sources "
            "that have no bytecode yet (an editable install's own modules), which an installed "
            "contam does not do; unset it and rerun for the figures a user sees"
        )
    mismatches = judge(contam_rows, ref)
    print_results(bench, meta, rows, notes, mismatches)
    if mismatches:
        return 1
    return 2 if not contam_rows or any(r.error for r in contam_rows) else 0


if __name__ == "__main__":
    sys.exit(main())
