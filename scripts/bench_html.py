"""Measure the HTML and SARIF renderers on a synthetic scan report of many examples.

    python scripts/bench_html.py [--examples 100000] [--flagged 0.02] [--rounds 3]

Builds a scan report by hand (no corpus is read): `--examples` examples, a `--flagged` share of
them leaked whole or in part (with evidence and eval texts), as many again matching a little
(with evidence, not flagged), 1% unscorable. Prints, per renderer, the report's size, the
fastest and the median wall seconds of `--rounds` renders, and the output's size in bytes.
The machine is shared: compare numbers within one run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from contam_cli.engine.evidence import Evidence
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report
from contam_cli.report.values import SourceResult
from contam_cli.text.normalize import DEFAULT_NORM

WORDS = (
    "the of and a to in is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there been one all we their has would when if so "
    "no will more can said what some about into than them only other new time could these two "
    "may first then do any like my now over such our man me even most made after also did many"
).split()


def synthetic_report(n: int = 100_000, flagged: float = 0.02, seed: int = 0) -> Report:
    """A scan report of `n` examples: a `flagged` share leaked (flagged, with evidence and
    texts), as many matching a little (evidence, not flagged), 1% unscorable, the rest clean."""
    rng = np.random.default_rng(seed)
    n_tokens = rng.integers(20, 120, n)
    unscorable = rng.random(n) < 0.01
    n_tokens[unscorable] = rng.integers(1, 13, int(unscorable.sum()))
    total = np.where(unscorable, 0, np.maximum(n_tokens - 12, 0))
    order = rng.permutation(np.flatnonzero(~unscorable))
    k = int(n * flagged)
    leaked, touched = np.sort(order[:k]), np.sort(order[k : 2 * k])
    run = np.zeros(n)
    run[leaked] = np.minimum(n_tokens[leaked], rng.integers(30, 120, k))
    run[touched] = rng.integers(13, 20, k)
    matched = np.zeros(n, dtype=np.int64)
    matched[leaked] = np.maximum(1, (total[leaked] * rng.uniform(0.3, 1.0, k)).astype(np.int64))
    matched[touched] = 1
    matched = np.minimum(matched, total)
    overlap = np.where(total > 0, matched / np.maximum(total, 1), 0.0)
    run[unscorable], overlap[unscorable] = np.nan, np.nan
    scorable = ~unscorable
    mean, std = overlap[scorable].mean(), overlap[scorable].std() or 1.0
    zscore = np.where(scorable, np.round((np.nan_to_num(overlap) - mean) / std, 6), 0.0)
    texts, evidence, per_source, reasons = {}, {}, {}, {}
    for e in np.concatenate([leaked, touched]).tolist():
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), int(n_tokens[e]))]
        texts[e] = " ".join(words).capitalize() + "."
        length, start = int(run[e]), int(rng.integers(0, int(n_tokens[e]) - int(run[e]) + 1))
        leak = " ".join(words[start : start + length])
        evidence[e] = Evidence(
            "corpus", f"corpus/shard-{e % 97:03d}.jsonl", int(e % 5000) + 1, int(e % 5000),
            f"doc-{e}", None, 40, 40 + len(leak), 7, start, length, leak,
        )  # fmt: skip
        per_source[e] = {"corpus": SourceResult(int(matched[e]), float(overlap[e]), length)}
    for e in leaked.tolist():
        why = [Reason("min-run", float(run[e]), 30)]
        if overlap[e] >= 0.5:
            why.insert(0, Reason("min-overlap", float(overlap[e]), 0.5))
        reasons[e] = why
    table = ExampleTable(
        ids=[f"ex-{e:06d}" for e in range(n)],
        eval_paths=["bench/eval.jsonl"] * n,
        eval_lines=list(range(1, n + 1)),
        fingerprints=[f"{e:032x}" for e in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": run, "overlap_fraction": overlap},
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=scorable,
            n_tokens=n_tokens,
            total_ngrams=total,
            matched_ngrams=matched,
            zscore=zscore,
            best_source=dict.fromkeys(evidence, "corpus"),
            per_source=per_source,
            evidence=evidence,
        ),  # fmt: skip
        texts=texts,
    )
    config = {
        "n": 13,
        "normalization": DEFAULT_NORM.describe(),
        "runs": "exact",
        "policy": {"min_overlap": 0.5, "min_run": 30, "zscore": None, "source_thresholds": {}},
    }
    inputs = {"eval": [{"path": "bench/eval.jsonl", "sha256": "0" * 64, "records": n}]}
    return Report(examples=table, config=config, inputs=inputs)


def _time(fn: object, rounds: int) -> tuple[float, float, int]:
    times, size = [], 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
        size = len(out.encode())
    return min(times), statistics.median(times), size


def main(argv: list[str] | None = None) -> int:
    from contam_cli.render.html import render_html
    from contam_cli.render.sarif import render_sarif

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples", type=int, default=100_000)
    ap.add_argument("--flagged", type=float, default=0.02, help="share of examples leaked")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    report = synthetic_report(a.examples, a.flagged)
    built = time.perf_counter() - t0
    s = report.summary()
    print(
        f"report: {s['examples']:,} examples, {s['flagged']:,} flagged, "
        f"{s['unscorable']:,} unscorable (built in {built:.2f} s)"
    )
    print(f"{'renderer':<12} {'best s':>8} {'median s':>9} {'output bytes':>13}")
    for name, fn in (
        ("html", lambda: render_html(report)),
        ("sarif", lambda: render_sarif(report)),
    ):
        best, median, size = _time(fn, a.rounds)
        print(f"{name:<12} {best:>8.3f} {median:>9.3f} {size:>13,}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
