"""Time a scan against a persisted index with positions: exact runs and evidence for its findings.

    python scripts/bench_index_evidence.py [--docs 5000000] [--findings 200] [--dir DIR]

Writes a corpus of ``--docs`` short JSONL documents (15 to 25 words of a 20,000-word vocabulary,
in 50 files), plants each of ``--findings`` eval examples (30 words) whole into one random
document, builds ``contam index build --positions`` over it (timed, once; kept in DIR for later
runs), then times ``scan(eval, index=DIR/index)`` in this process three times: matching the eval
n-grams against the memory-mapped index, the exact runs from the stored positions, and the
evidence (each finding's document read again from its file, at its byte offset, for the
character offsets and the leaked text). Prints the wall seconds of each scan, and checks that
every planted example is flagged with its evidence in the document it was planted in.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson

from contam_cli import scan

FILES = 50
VOCAB = 20_000


def _words(rng: np.random.Generator, count: int) -> list[str]:
    return [f"w{k}" for k in rng.integers(0, VOCAB, size=count)]


def write_data(root: Path, docs: int, findings: int, seed: int = 0) -> dict[str, tuple[int, int]]:
    """The corpus and eval set under `root`; returns each example's (file, line) of its plant."""
    rng = np.random.default_rng(seed)
    examples = {f"e{k}": " ".join(_words(rng, 30)) for k in range(findings)}
    hosts = rng.choice(docs, size=findings, replace=False)
    planted = {int(h): eid for h, eid in zip(hosts, examples)}
    where: dict[str, tuple[int, int]] = {}
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    per_file = -(-docs // FILES)
    vocab = np.array([f"w{k}" for k in range(VOCAB)])
    for f in range(FILES):
        start, stop = f * per_file, min(docs, (f + 1) * per_file)
        lengths = rng.integers(15, 26, size=stop - start)
        words = vocab[rng.integers(0, VOCAB, size=int(lengths.sum()))]
        cuts = np.cumsum(lengths)[:-1]
        with open(corpus / f"part-{f:03d}.jsonl", "wb") as fh:
            for k, doc in enumerate(np.split(words, cuts)):
                text = " ".join(doc)
                eid = planted.get(start + k)
                if eid is not None:
                    text = f"{text} {examples[eid]} {text}"
                    where[eid] = (f, k + 1)
                fh.write(orjson.dumps({"text": text}) + b"\n")
    with open(root / "eval.jsonl", "wb") as fh:
        for eid, text in examples.items():
            fh.write(orjson.dumps({"id": eid, "text": text}) + b"\n")
    return where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=5_000_000)
    ap.add_argument("--findings", type=int, default=200)
    ap.add_argument("--dir", type=Path, help="data directory (made and kept; reused if there)")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    root = a.dir or Path(tempfile.gettempdir()) / f"contam-index-evidence-{a.docs}-{a.findings}"
    index = root / "index"
    where_file = root / "where.json"
    if not index.exists():
        t0 = time.perf_counter()
        where = write_data(root, a.docs, a.findings)
        where_file.write_bytes(orjson.dumps(where))
        print(f"wrote {a.docs:,} documents in {FILES} files: {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "contam_cli", "index", "build", "--corpus", "corpus"]
        subprocess.run([*cmd, "-o", "index", "--positions"], cwd=root, check=True)
        print(f"index build --positions: {time.perf_counter() - t0:.1f} s")
    where = {k: tuple(v) for k, v in orjson.loads(where_file.read_bytes()).items()}
    times, report = [], None
    for _ in range(a.rounds):
        t0 = time.perf_counter()
        report = scan(str(root / "eval.jsonl"), index=str(index))
        times.append(time.perf_counter() - t0)
    assert report is not None
    wrong = []
    for e in report.examples:
        f, line = where[e.id]
        ev = e.evidence
        ok = e.flagged and ev is not None and ev.path is not None
        ok = ok and Path(ev.path).name == f"part-{f:03d}.jsonl" and ev.line == line
        if not ok:
            wrong.append(e.id)
    flagged = sum(e.flagged for e in report.examples)
    print(f"scan --index with positions, {len(report.examples)} examples, {flagged} flagged:")
    print("  wall seconds per scan: " + ", ".join(f"{t:.2f}" for t in times))
    print(
        f"  evidence in the planted document: {len(report.examples) - len(wrong)} of "
        f"{len(report.examples)}" + (f" (wrong: {wrong[:5]})" if wrong else "")
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
