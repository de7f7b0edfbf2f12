"""Time ``contam_cli.features.impact.impact`` on synthetic reports of several sizes.

    python scripts/bench_impact.py                          # 1,000 / 14,042 / 100,000 examples
    python scripts/bench_impact.py --sizes 14042 --bootstrap 2000

Each report: 10% of the examples flagged (overlap 0.5-1.0, by ``min-overlap``, in one of two
sources), 30% with some overlap below that, the rest none; outcomes 0/1, more often 1 when
flagged. The default levels (``overlap>=0.2,0.5,0.8``) each give a different split, so every
statistic is computed four times, plus once per rule and per source. One process; wall seconds
of the whole call (reading in-memory records, matching, every bootstrap and permutation test).
14,042 is the size of MMLU's test split.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from contam_cli.features.impact import impact
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Reason, Report


def synthetic(n: int, seed: int = 0) -> tuple[Report, list[dict[str, object]]]:
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, size=n, p=[0.6, 0.3, 0.1])  # none, some overlap, flagged
    overlap = np.where(
        kind == 2, rng.uniform(0.5, 1.0, n), np.where(kind == 1, rng.uniform(0.05, 0.5, n), 0.0)
    )
    flagged = np.flatnonzero(kind == 2)
    reasons = {int(e): (Reason("min-overlap", float(overlap[e]), 0.5),) for e in flagged}
    best = {int(e): ("web" if e % 3 else "books") for e in np.flatnonzero(kind > 0)}
    table = ExampleTable(
        ids=[str(e) for e in range(n)],
        eval_paths=["eval.jsonl"] * n,
        eval_lines=[None] * n,
        fingerprints=[f"{e:032x}" for e in range(n)],
        methods=NGRAM_METHODS,
        scores={"longest_run": np.round(overlap * 40), "overlap_fraction": overlap},
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=np.ones(n, bool),
            n_tokens=np.full(n, 52),
            total_ngrams=np.full(n, 40),
            matched_ngrams=np.round(overlap * 40).astype(int),
            zscore=np.zeros(n),
            best_source=best,
        ),
    )
    correct = rng.random(n) < np.where(kind == 2, 0.8, 0.55)
    rows = [{"id": str(e), "correct": float(c)} for e, c in enumerate(correct.tolist())]
    return Report(table), rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 14042, 100_000])
    parser.add_argument("--bootstrap", type=int, default=10_000)
    args = parser.parse_args()
    print(f"{'examples':>9}  {'bootstrap':>9}  {'seconds':>8}  full - clean")
    for n in args.sizes:
        report, rows = synthetic(n)
        start = time.perf_counter()
        result = impact(report, rows, bootstrap=args.bootstrap)
        seconds = time.perf_counter() - start
        d = result.overall.full_minus_clean
        print(f"{n:>9,}  {args.bootstrap:>9,}  {seconds:>8.2f}  {d.value:+.4f} {d.interval}")


if __name__ == "__main__":
    main()
