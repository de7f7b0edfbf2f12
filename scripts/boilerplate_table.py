"""Boilerplate suppression on the labelled boilerplate benchmark: what each setting flags.

    python scripts/boilerplate_table.py [--seeds 5] [--n-clean 60] [--per-kind 20]

Per seed, :func:`contam_cli.features.bench.boilerplate_set.boilerplate_set` writes eval.jsonl,
corpus.jsonl and boilerplate.jsonl (the shared sentences) into a temporary directory: licence-like
and quote-like sentences of 20-30 words each in 50-200 documents, one inside each boilerplate
example, and real leaks (whole examples, 40-word spans) each in 1-3 documents; examples have
80-200 words. Each setting is one ``scan()`` of those files (the CLI flags shown are the same
options), n = 13 and ``--min-run 20`` throughout. Prints one Markdown table, counts summed over
the seeds: flagged, true (real leaks flagged), false (clean or boilerplate examples flagged),
missed (real leaks not flagged), and the boilerplate examples flagged.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from contam_cli import FlagPolicy, ScanOptions, scan
from contam_cli.features.bench.boilerplate_set import boilerplate_set

#: (the flags, ignore_common, whether --ignore-from gets the set's boilerplate sentences)
SETTINGS: list[tuple[str, int | None, bool]] = [
    ("`--min-run 20` (no suppression)", None, False),
    ("`--min-run 20 --ignore-common 2`", 2, False),
    ("`--min-run 20 --ignore-common 20`", 20, False),
    ("`--min-run 20 --ignore-common 100`", 100, False),
    ("`--min-run 20 --ignore-from boilerplate.jsonl`", None, True),
]


def counts(seed: int, n_clean: int, per_kind: int, work: Path) -> list[list[int]]:
    """Per setting: [flagged, true, false, missed, boilerplate flagged, examples]."""
    data = boilerplate_set(seed, n_clean=n_clean, n_per_kind=per_kind)
    files = data.write(work / f"seed{seed}")
    labels = [e.label for e in data.examples]
    kinds = [e.kind for e in data.examples]
    out = []
    for _, common, collection in SETTINGS:
        opts = ScanOptions(
            ignore_common=common, ignore_from=(files["boilerplate"],) if collection else ()
        )
        report = scan(files["eval"], files["corpus"], policy=FlagPolicy(min_run=20), options=opts)
        flagged = report.flagged_mask().tolist()
        true = sum(f and y == 1 for f, y in zip(flagged, labels))
        false = sum(f and y == 0 for f, y in zip(flagged, labels))
        missed = sum(not f and y == 1 for f, y in zip(flagged, labels))
        boiler = sum(f and k == "boilerplate" for f, k in zip(flagged, kinds))
        out.append([sum(flagged), true, false, missed, boiler, len(labels)])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0 .. SEEDS-1 (default 5)")
    ap.add_argument("--n-clean", type=int, default=60, help="clean examples per seed")
    ap.add_argument("--per-kind", type=int, default=20, help="examples per kind per seed")
    args = ap.parse_args(argv)
    totals = [[0] * 6 for _ in SETTINGS]
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(args.seeds):
            for total, got in zip(totals, counts(seed, args.n_clean, args.per_kind, Path(tmp))):
                total[:] = [a + b for a, b in zip(total, got)]
    examples = totals[0][5]
    leaks = totals[0][1] + totals[0][3]
    print(
        f"{args.seeds} seeds, {examples} examples: {leaks} real leaks, "
        f"{args.per_kind * args.seeds} boilerplate examples, n = 13\n"
    )
    print("| setting | flagged | true | false | missed | boilerplate flagged |")
    print("|---|--:|--:|--:|--:|--:|")
    for (name, _, _), (flagged, true, false, missed, boiler, _) in zip(SETTINGS, totals):
        print(f"| {name} | {flagged} | {true} | {false} | {missed} | {boiler} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
