"""Measure `contam report`'s pieces on a synthetic scan report of many examples.

    python scripts/bench_report.py [--examples 100000] [--flagged 0.02] [--rounds 3]

Builds a scan report by hand (no corpus is read): `--examples` examples, a `--flagged` share
leaked (flagged, with evidence and texts), 1% unscorable, the rest clean. Then, with the fastest
and median wall seconds of `--rounds` runs:

* ``render_markdown`` with the defaults (top 20, 1,000,000 bytes) and with every example asked
  for (``top`` = all: the byte cap must hold), and the output's size in bytes;
* ``render_html`` (default options), when ``contam_cli.render.html`` exists;
* ``build_report`` of the scan and a JSONL file of one more score per example (written to a
  temporary directory), with every example labelled and 1,000 bootstrap resamples, and the
  Markdown and JSON of that.

The machine is shared: compare numbers within one run.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from contam_cli.engine.evidence import Evidence
from contam_cli.features.combine import build_report
from contam_cli.render.json import render_json
from contam_cli.render.markdown import render_markdown
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report
from contam_cli.report.values import SourceResult


def scan_like(n: int, flagged: float, seed: int) -> Report:
    """A scan report of `n` examples; see the module docstring."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(15, 150, n)
    unscorable = rng.random(n) < 0.01
    tokens[unscorable] = rng.integers(1, 13, int(unscorable.sum()))
    leaked = np.sort(rng.choice(np.flatnonzero(~unscorable), int(n * flagged), replace=False))
    total = np.where(unscorable, 0, tokens - 12)
    matched = np.zeros(n, dtype=np.int64)
    matched[leaked] = total[leaked]
    run = np.where(unscorable, np.nan, 0.0)
    run[leaked] = tokens[leaked]
    overlap = np.where(unscorable, np.nan, matched / np.maximum(total, 1))
    known = overlap[~unscorable]
    z = np.where(
        unscorable, 0.0, np.round((np.nan_to_num(overlap) - known.mean()) / known.std(), 6)
    )
    texts, evidence, per_source, reasons = {}, {}, {}, {}
    for e in leaked.tolist():
        text = " ".join(f"w{int(w)}" for w in rng.integers(0, 5000, int(tokens[e])))
        texts[e] = text
        evidence[e] = Evidence(
            "corpus", f"corpus/part-{e % 64:02d}.jsonl", e + 1, e, None, None,
            0, len(text), 0, 0, int(tokens[e]), text,
        )  # fmt: skip
        per_source[e] = {"corpus": SourceResult(int(matched[e]), 1.0, int(tokens[e]))}
        reasons[e] = [Reason("min-overlap", 1.0, 0.5), Reason("min-run", float(tokens[e]), 30)]
    table = ExampleTable(
        ids=[f"ex-{e:06d}" for e in range(n)],
        eval_paths=["bench/eval.jsonl"] * n,
        eval_lines=list(range(1, n + 1)),
        fingerprints=[f"{e:032x}" for e in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": run, "overlap_fraction": overlap},
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=~unscorable,
            n_tokens=tokens,
            total_ngrams=total,
            matched_ngrams=matched,
            zscore=z,
            best_source=dict.fromkeys(leaked.tolist(), "corpus"),
            per_source=per_source,
            evidence=evidence,
        ),
        texts=texts,
    )
    return Report(examples=table, config={"n": 13})


def timed(fn: Callable[[], Any], rounds: int) -> tuple[float, float, Any]:
    """Fastest and median wall seconds of `rounds` calls, and the last result."""
    times, out = [], None
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def scores_and_labels(report: Report, directory: Path, seed: int) -> tuple[Path, Path]:
    """A JSONL score per example (higher on the flagged ones, plus noise) and every label."""
    rng = np.random.default_rng(seed + 1)
    leaked = report.flagged_mask()
    score = rng.normal(size=len(leaked)) + 1.5 * leaked
    ids = report.examples.ids
    scores, labels = directory / "scores.jsonl", directory / "labels.jsonl"
    scores.write_bytes(
        b"".join(orjson.dumps({"id": i, "model": float(s)}) + b"\n" for i, s in zip(ids, score))
    )
    labels.write_bytes(
        b"".join(orjson.dumps({"id": i, "label": int(v)}) + b"\n" for i, v in zip(ids, leaked))
    )
    return scores, labels


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=100_000)
    ap.add_argument("--flagged", type=float, default=0.02)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    report = scan_like(a.examples, a.flagged, a.seed)
    print(f"scan report: {a.examples} examples, {int(report.flagged_mask().sum())} flagged "
          f"(built in {time.perf_counter() - t0:.2f} s)")  # fmt: skip
    rows: list[tuple[str, float, float, int | None]] = []
    cases: list[tuple[str, Callable[[], str]]] = [
        ("markdown (top 20)", lambda: render_markdown(report)),
        ("markdown (top = all)", lambda: render_markdown(report, top=a.examples)),
    ]
    if importlib.util.find_spec("contam_cli.render.html") is not None:
        from contam_cli.render.html import render_html

        cases.append(("html (defaults)", lambda: render_html(report)))
    with tempfile.TemporaryDirectory() as tmp:
        scores, labels = scores_and_labels(report, Path(tmp), a.seed)

        def combine() -> Report:
            return build_report([report, scores], labels=labels)

        fast, median, combined = timed(combine, a.rounds)
        rows.append(("build_report (scan + scores, labels)", fast, median, None))
        cases.append(("markdown of the combined report", lambda: render_markdown(combined)))
        cases.append(("JSON of the combined report", lambda: render_json(combined)))
        for name, fn in cases:
            fast, median, text = timed(fn, a.rounds)
            rows.append((name, fast, median, len(text.encode("utf-8"))))
    print(f"{'step':<40} {'fastest s':>10} {'median s':>10} {'bytes':>11}")
    for name, fast, median, size in rows:
        print(f"{name:<40} {fast:>10.3f} {median:>10.3f} {'' if size is None else size:>11}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
