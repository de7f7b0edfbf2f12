"""Running the tools `scripts/bench_scan.py` measures: one child process each, timed with
``wait4`` (wall, CPU of the child and its waited descendants, peak RSS), and the row it gives.

``contam scan`` (per ``--jobs`` value, and with ``--eval-cache``), the reference scanner, the naive
baseline and the installed peers (venvs from ``../shared/tools/peers/setup_venvs.sh``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
SHARED_TOOLS = Path(__file__).resolve().parents[2] / "shared" / "tools"
NAIVE = SHARED_TOOLS / "peers" / "naive_baseline.py"


@dataclass(frozen=True)
class Run:
    """One finished child process: exit code, wall and CPU seconds, peak RSS, stderr."""

    returncode: int
    wall: float
    cpu: float
    max_rss_mb: float
    stderr: str

    def tail(self, lines: int = 4) -> str:
        return " | ".join(self.stderr.strip().splitlines()[-lines:])


def rss_mb(maxrss: int) -> float:
    return maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)  # bytes vs KiB


def measure(cmd: list[str], cwd: Path | None = None) -> Run:
    """Run ``cmd`` and take its own rusage with ``wait4`` (its waited descendants included)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        # NOTE: wait4 reaped the child, so tell Popen, or it warns that it is still running.
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", errors="replace")
    return Run(
        proc.returncode, wall, usage.ru_utime + usage.ru_stime, rss_mb(usage.ru_maxrss), stderr
    )


@dataclass
class Row:
    """One line of the results table; ``report`` is loaded after the last run."""

    tool: str
    run: Run
    report_path: Path | None = None
    report: dict | None = None
    agrees: str = "—"
    error: str | None = None

    def load_report(self) -> None:
        """Read the report, and mark the row failed on a bad exit code or a missing report."""
        if self.report_path is not None:
            self.report = _read_json(self.report_path)
        if self.run.returncode not in (0, 1) or (self.report_path and self.report is None):
            self.agrees = f"failed (exit {self.run.returncode})"
            self.error = f"{self.tool} failed, exit code {self.run.returncode}: {self.run.tail()}"


@dataclass(frozen=True)
class Bench:
    """The files every tool reads, and where reports go."""

    data: Path
    eval: Path
    corpus: Path
    shards: list[Path]
    corpus_bytes: int
    runs: Path


def _read_json(path: Path) -> dict | None:
    try:
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def run_tool(
    tool: str, cmd: list[str], report: Path | None, notes: list[str], cwd: Path | None = None
) -> Row | None:
    """Measure one tool; None (with a note) when it cannot even start."""
    if report is not None:
        report.unlink(missing_ok=True)  # never read a stale report
    print(f"bench_scan: running {tool} ...", file=sys.stderr, flush=True)
    try:
        return Row(tool, measure(cmd, cwd=cwd), report_path=report)
    except OSError as e:
        notes.append(f"{tool}: could not start ({e})")
        return None


def contam_command(
    bench: Bench, report: Path, jobs: int | None, cache: Path | None = None
) -> list[str]:
    cmd = [
        sys.executable,
        "-m",
        "contam_cli",
        "scan",
        str(bench.eval),
        "--corpus",
        str(bench.corpus),
        "--report",
        str(report),
        "--no-fail",
    ]
    if cache is not None:
        cmd += ["--eval-cache", str(cache)]
    return cmd if jobs is None else [*cmd, "--jobs", str(jobs)]


def run_cached(bench: Bench, notes: list[str]) -> list[Row]:
    """``--jobs 1`` with a fresh ``--eval-cache``: the run that builds it, then a warm run."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="contam-eval-cache-") as cache:
        for what in ("building", "warm"):
            label = f"`contam scan --jobs 1 --eval-cache` ({what})"
            report = bench.runs / f"contam-cache-{what}.json"
            cmd = contam_command(bench, report, 1, Path(cache))
            row = run_tool(label, cmd, report, notes, cwd=REPO)
            if row is not None:
                rows.append(row)
    return rows


def _no_jobs_option(row: Row | None) -> bool:
    return row is not None and row.run.returncode == 2 and "No such option" in row.run.stderr


def run_contam(bench: Bench, jobs_values: Iterable[int], notes: list[str]) -> list[Row]:
    """One row per ``--jobs`` value; without that option, one default run in place of jobs=1."""
    rows: list[Row] = []
    has_jobs = True
    cores = os.cpu_count() or 1
    for jobs in dict.fromkeys(jobs_values):
        label = f"`contam scan --jobs {jobs}`" + (f" ({cores} cores)" if jobs == 0 else "")
        report = bench.runs / f"contam-jobs{jobs}.json"
        row = None
        if has_jobs:
            row = run_tool(label, contam_command(bench, report, jobs), report, notes, cwd=REPO)
            has_jobs = not _no_jobs_option(row)
        if not has_jobs:
            if jobs != 1:
                notes.append(f"{label}: skipped, this contam has no `--jobs` option")
                continue
            row = run_tool(
                "`contam scan` (no `--jobs` option)",
                contam_command(bench, report, None),
                report,
                notes,
                cwd=REPO,
            )
        if row is not None:
            rows.append(row)
    return rows


def _python_scan(script: Path, bench: Bench, report: Path) -> list[str]:
    """A Python scanner's command line: the eval set, the corpus, the report it writes."""
    cmd = [sys.executable, str(script), "--eval", str(bench.eval), "--corpus", str(bench.corpus)]
    return [*cmd, "--report", str(report)]


def run_reference(bench: Bench, ref: Path, skip: bool, notes: list[str]) -> Row | None:
    if skip:
        notes.append("reference scanner: skipped (--skip-ref)")
        return None
    if not ref.is_file():
        notes.append(f"reference scanner: skipped, {ref} not found")
        return None
    report = bench.runs / "ref.json"
    cmd = _python_scan(ref, bench, report)
    return run_tool(f"reference (`{ref.name}`)", cmd, report, notes)


def run_naive(bench: Bench, notes: list[str]) -> Row | None:
    if not NAIVE.is_file():
        notes.append(f"naive baseline: skipped, {NAIVE} not found")
        return None
    report = bench.runs / "naive.json"
    cmd = _python_scan(NAIVE, bench, report)
    return run_tool("naive Python 13-gram baseline", cmd, report, notes)


# (venv name under $VENVS, adapter file in ../shared/tools/peers/adapters, extra args, label)
PEERS = [
    (
        "decontaminate",
        "decon_adapter.py",
        ["--tokenizer", "uniseg", "-n", "25"],
        "decontaminate (decon, uniseg n=25)",
    ),
    ("lm-eval", "lmeval_adapter.py", [], "lm-eval 13-gram overlap"),
    ("datacruxai", "datacrux_adapter.py", [], "datacruxai"),
]


def run_peers(bench: Bench, notes: list[str]) -> list[tuple[Row, Path]]:
    """Installed peers (venvs from ../shared/tools/peers/setup_venvs.sh) on the same data."""
    venvs = Path(os.environ.get("VENVS", "/tmp/peers"))
    out: list[tuple[Row, Path]] = []
    for venv, adapter, extra, label in PEERS:
        python = venvs / venv / "bin" / "python"
        script = SHARED_TOOLS / "peers" / "adapters" / adapter
        if not (python.is_file() and script.is_file()):
            notes.append(f"{label}: skipped, not installed ({python})")
            continue
        outdir = bench.runs / f"peer-{venv}"
        cmd = [
            str(python),
            str(script),
            "--eval",
            str(bench.eval),
            "--corpus",
            str(bench.corpus),
            "--out",
            str(outdir),
            *extra,
        ]
        row = run_tool(label, cmd, None, notes)
        if row is not None:
            row.agrees = "n/a"
            out.append((row, outdir / "flagged.txt"))
    return out


def peer_note(row: Row, flagged_file: Path, labels: Path) -> str:
    try:
        flagged = set(flagged_file.read_text().split())
    except OSError:
        return f"{row.tool}: no flagged list written"
    planted = expected = 0
    for line in labels.read_bytes().splitlines():
        lab = orjson.loads(line)
        if lab.get("expected_flag"):
            expected += 1
            planted += str(lab["id"]) in flagged
    return f"{row.tool}: flagged {len(flagged)}, of which {planted}/{expected} expected leaks"


def naive_note(row: Row) -> str:
    hits = sum(1 for e in (row.report or {}).get("examples", []) if e.get("matched"))
    return (
        f"naive baseline: other rules (ASCII `[a-z0-9]+` tokens; any shared 13-gram "
        f"flags): {hits} examples matched"
    )
