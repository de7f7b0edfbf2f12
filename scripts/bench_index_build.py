"""Time `contam index build` in one process against `--jobs N`, on the benchmark corpus, in one run.

    python scripts/bench_index_build.py [--mb 200 --mb 1000] [--jobs 2] [--positions both|on|off]
        [--ray] [--old-rev REV] [--repeat 1]

For each size, generates (or reuses) the throughput benchmark with ``python -m
contam_cli.features.bench.generate --reuse`` (the directory bench_scan.py uses), then times, each
in its own child process and on the same files: ``wc -w``; ``contam index build --jobs 1`` (the
serial build); ``--jobs N``; with ``--ray`` also ``--engine ray --ray-cpus N`` (a local Ray
started and stopped inside the run); with ``--old-rev REV`` also the build module of commit REV
(``git show REV:contam_cli/engine/corpus_index/build.py``) run by today's CLI, i.e. the serial
build before it was parallel. Prints a Markdown table per size: wall seconds (best of
``--repeat``), MB/s, the speed-up over ``--jobs 1``, CPU seconds and peak RSS (``wait4``), the
index's size, and whether every file of the index directory is byte-identical to the serial
build's (for REV: every file, the ``docs.npz`` tables compared member by member, as that build
stamped the zip with the current time). A Ray row's CPU seconds are the driver's alone (Ray's
workers are not its children). Each table gives the load average before and after.

Exit status: 0 normally; 1 if an index differs from the serial build's; 2 if a run failed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD_MODULE = "contam_cli/engine/corpus_index/build.py"


def child_old(module: str, argv: list[str]) -> int:
    """``contam index build ARGV`` with the build module at path `module` (an older commit's)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("old_corpus_index_build", module)
    assert spec is not None and spec.loader is not None
    old = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(old)
    import contam_cli.cli.index as cli_index

    def build(*args: object, jobs: int = 0, executor: object = None, **kw: object) -> object:
        return old.build_corpus_index(*args, **kw)

    cli_index.build_corpus_index = build  # type: ignore[assignment]
    from contam_cli.entry import main

    sys.argv = ["contam", "index", "build", *argv]
    main()
    return 0


@dataclass
class Row:
    """One tool's runs: the best wall time, its CPU seconds and peak RSS, the index's digest."""

    tool: str
    cmd: list[str]
    out: Path | None = None
    walls: list[float] = field(default_factory=list)
    cpu: float = 0.0
    rss_mb: float = 0.0
    index_mb: float = 0.0
    digest: str | None = None
    content: bool = False
    """Also digest the index by content (the .npz members): the old build stamps its zip."""
    content_digest: str | None = None
    same: str = "—"
    error: str | None = None

    @property
    def wall(self) -> float:
        return min(self.walls) if self.walls else float("nan")


def measure(row: Row) -> None:
    """Run the row's command once; keep its time when it is the best so far."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(row.cmd, stdout=subprocess.DEVNULL, stderr=err, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read().decode("utf-8", errors="replace").strip().splitlines()[-3:]
    if proc.returncode != 0:
        row.error = f"{row.tool}: exit {proc.returncode}: {' | '.join(tail)}"
        return
    if not row.walls or wall < row.wall:
        row.cpu = usage.ru_utime + usage.ru_stime
        row.rss_mb = usage.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
    row.walls.append(wall)


def digest(root: Path, by_content: bool) -> tuple[str, float]:
    """A sha256 over every file of an index directory (name and bytes; with `by_content`, an
    .npz by its members' bytes instead of the zip's), and its size in MB."""
    h = hashlib.sha256()
    size = 0
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        size += path.stat().st_size
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        if by_content and path.suffix == ".npz":
            with zipfile.ZipFile(path) as zf:
                for name in sorted(zf.namelist()):
                    h.update(name.encode() + b"\0" + zf.read(name))
            continue
        with open(path, "rb") as fh:
            while block := fh.read(8 << 20):
                h.update(block)
    return h.hexdigest(), size / 1e6


def prepare(mb: float, args: argparse.Namespace) -> tuple[Path, list[str], int]:
    data = Path(tempfile.gettempdir()) / f"contam-bench-{mb:g}mb-n{args.n_eval}-s{args.seed}"
    cmd = [sys.executable, "-m", "contam_cli.features.bench.generate", "--out", str(data),
           "--mb", f"{mb:g}", "--seed", str(args.seed), "--n-eval", str(args.n_eval),
           "--reuse"]  # fmt: skip
    print(f"bench_index_build: data in {data}", file=sys.stderr, flush=True)
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    files = [str(p) for p in sorted((data / "corpus").glob("shard_*.jsonl"))]
    return data / "corpus", files, sum(os.path.getsize(f) for f in files)


def rows_for(
    corpus: Path, files: list[str], work: Path, positions: bool, args: argparse.Namespace,
    old: Path | None,
) -> list[Row]:  # fmt: skip
    """wc -w, the serial build, --jobs N, and as asked the Ray engine and the old build."""
    base = ["-c", str(corpus), "--positions" if positions else "--no-positions", "--force"]
    cli = [sys.executable, "-m", "contam_cli", "index", "build", *base]
    jobs = str(args.jobs)
    rows = [
        Row("`wc -w`", ["wc", "-w", *files]),
        Row("`contam index build --jobs 1` (serial)", [*cli, "-o", str(work / "serial"),
            "--jobs", "1"], work / "serial"),
        Row(f"`contam index build --jobs {jobs}`", [*cli, "-o", str(work / "jobs"), "--jobs",
            jobs], work / "jobs"),
    ]  # fmt: skip
    if args.ray:
        rows.append(Row(f"`contam index build --engine ray --ray-cpus {jobs}` (a local Ray)",
                        [*cli, "-o", str(work / "ray"), "--engine", "ray", "--ray-cpus", jobs],
                        work / "ray"))  # fmt: skip
    if old is not None:
        cmd = [sys.executable, __file__, "--child-old", str(old), "--", *base, "-o",
               str(work / "old")]  # fmt: skip
        rows.append(Row(f"the serial build of {args.old_rev}", cmd, work / "old", content=True))
    return rows


def run_size(
    mb: float, positions: bool, args: argparse.Namespace, old: Path | None
) -> tuple[bool, bool]:
    """Every row on one corpus size; (all indexes the serial one's, no run failed)."""
    corpus, files, size = prepare(mb, args)
    (corpus.parent / "runs").mkdir(exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="contam-bench-index-", dir=corpus.parent / "runs"))
    rows = rows_for(corpus, files, work, positions, args, old)
    if old is not None:
        rows[1].content = True  # NOTE: compared with the old build's by content too
    try:
        before = os.getloadavg()
        for k in range(args.repeat):
            for row in rows:
                print(f"bench_index_build: {row.tool} ({k + 1}/{args.repeat})", file=sys.stderr,
                      flush=True)  # fmt: skip
                measure(row)
                if row.out is not None and row.out.exists():
                    if row.digest is None:
                        row.digest, row.index_mb = digest(row.out, by_content=False)
                        if row.content:
                            row.content_digest, _ = digest(row.out, by_content=True)
                    shutil.rmtree(row.out)  # NOTE: disk: one index at a time
        after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    same = True
    serial = rows[1]
    for row in rows[2:]:
        mine, want = (
            (row.content_digest, serial.content_digest)
            if row.content
            else (row.digest, serial.digest)
        )
        if row.walls and serial.walls:
            row.same = "yes" if mine == want else "NO"
            same &= mine == want
    print(table(rows, size, positions, before, after))
    for row in rows:
        if row.error:
            print(f"\n{row.error}")
    return same, not any(row.error for row in rows)


def table(rows: list[Row], size: int, positions: bool, before: tuple[float, ...],
          after: tuple[float, ...]) -> str:  # fmt: skip
    mb = size / 1e6
    serial = rows[1].wall
    out = [
        f"\n{mb:,.0f} MB corpus, {'with' if positions else 'without'} `--positions` "
        f"(load average {before[0]:.2f} before, {after[0]:.2f} after):\n",
        "| tool | wall s | MB/s | speed-up over `--jobs 1` | CPU s | peak RSS MB | index MB "
        "| same index as `--jobs 1` |",
        "|---|--:|--:|--:|--:|--:|--:|---|",
    ]
    for row in rows:
        if not row.walls:
            out.append(f"| {row.tool} | failed | | | | | | |")
            continue
        index = f"{row.index_mb:,.0f}" if row.out is not None else ""
        out.append(f"| {row.tool} | {row.wall:.2f} | {mb / row.wall:.1f} | "
                   f"{serial / row.wall:.2f}× | {row.cpu:.1f} | {row.rss_mb:,.0f} | {index} | "
                   f"{row.same} |")  # fmt: skip
    return "\n".join(out)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, action="append", help="corpus MB (repeatable; 200, 1000)")
    ap.add_argument("--jobs", type=int, default=2, help="workers of the parallel build (2)")
    ap.add_argument("--positions", choices=["both", "on", "off"], default="both")
    ap.add_argument("--ray", action="store_true", help="also --engine ray (a local Ray)")
    ap.add_argument("--old-rev", help="also the serial build of this commit (e.g. 808a9bc)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per tool; the best is shown")
    ap.add_argument("--n-eval", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args(argv)
    a.mb = a.mb or [200.0, 1000.0]
    return a


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child-old"]:
        return child_old(argv[1], argv[3:])
    args = parse_args(argv)
    old = None
    with tempfile.TemporaryDirectory() as tmp:
        if args.old_rev:
            text = subprocess.run(["git", "show", f"{args.old_rev}:{BUILD_MODULE}"], cwd=REPO,
                                  check=True, capture_output=True).stdout  # fmt: skip
            old = Path(tmp) / "old_build.py"
            old.write_bytes(text)
        same = ran = True
        for mb in args.mb:
            for positions in {"both": (False, True), "on": (True,), "off": (False,)}[
                args.positions
            ]:
                s, r = run_size(mb, positions, args, old)
                same, ran = same and s, ran and r
    print(f"\npython {platform.python_version()}; {os.cpu_count()} cores; {platform.machine()}")
    return 2 if not ran else 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
