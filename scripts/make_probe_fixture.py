"""Write fixtures/probe/: a small training text and a labelled eval set for `contam probe`.

    python scripts/make_probe_fixture.py [--out fixtures/probe] [--seed 0]
    python scripts/make_probe_fixture.py --measure     # also: train, probe, AUC per method

Everything is generated here from a seed with contam's synthetic text model
(:mod:`contam_cli.features.bench.textmodel`: a Zipf vocabulary of made-up words and a shared
phrase pool), so the files carry no third-party text (MIT-compatible) and are byte-identical
on every run:

* ``train.txt``: 200 sentences, one per line: the "training data";
* ``eval.jsonl``: 40 examples ``{"id", "text", "label"}``, alternating 20 sentences of
  ``train.txt`` (label 1, seen in training) and 20 fresh sentences from the same model
  (label 0);
* ``labels.jsonl``: the same labels as ``{"id", "label"}`` (for ``contam report --labels``);
* ``controls.jsonl``: 20 more fresh sentences, a known-clean control set.

``--measure`` trains the built-in n-gram LM on ``train.txt`` (sentence per line), probes
``eval.jsonl`` with every method and prints each method's AUC (label 1 = in the training text).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contam_cli.features.bench.textmodel import TextModel, TextParams  # noqa: E402

N_TRAIN, N_EVAL_EACH, N_CONTROLS = 200, 20, 20
PARAMS = TextParams(
    vocab_size=2000,
    n_phrases=200,
    phrase_words=(3, 6),
    phrase_rate=0.75,
    filler_words=(1, 1),
    filler_after_phrase=False,
    non_ascii_share=0.0,
)


def sentences(seed: int) -> tuple[list[str], list[str], list[str]]:
    """Training sentences, fresh eval sentences and control sentences (15-29 words each)."""
    rng = np.random.default_rng(seed)
    model = TextModel.build(rng, PARAMS)
    n = N_TRAIN + N_EVAL_EACH + N_CONTROLS
    texts = model.prose(rng, rng.integers(15, 30, size=n))
    fresh_end = N_TRAIN + N_EVAL_EACH
    return texts[:N_TRAIN], texts[N_TRAIN:fresh_end], texts[fresh_end:]


def _jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def write(out: Path, seed: int) -> None:
    train, fresh, controls = sentences(seed)
    out.mkdir(parents=True, exist_ok=True)
    (out / "train.txt").write_text("".join(s + "\n" for s in train), encoding="utf-8")
    rng = np.random.default_rng(seed + 1)
    seen = rng.choice(N_TRAIN, size=N_EVAL_EACH, replace=False).tolist()
    rows = []
    for i in range(N_EVAL_EACH):
        rows.append({"id": f"e{2 * i:02d}", "text": train[seen[i]], "label": 1})
        rows.append({"id": f"e{2 * i + 1:02d}", "text": fresh[i], "label": 0})
    _jsonl(out / "eval.jsonl", rows)
    _jsonl(out / "labels.jsonl", [{"id": r["id"], "label": r["label"]} for r in rows])
    _jsonl(out / "controls.jsonl", [{"id": f"c{i:02d}", "text": t} for i, t in enumerate(controls)])
    print(
        f"wrote {out}: train.txt ({N_TRAIN} sentences), eval.jsonl ({len(rows)} examples), "
        f"labels.jsonl, controls.jsonl ({N_CONTROLS})"
    )


def measure(out: Path) -> None:
    from contam_cli.features.probe import probe, train_lm
    from contam_cli.stats import auc_from_labels

    labels = [
        orjson.loads(line)["label"] for line in (out / "eval.jsonl").read_bytes().splitlines()
    ]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CONTAM_CACHE_DIR"] = tmp
        lm = Path(tmp) / "model.npz"
        train_lm(out / "train.txt", lm, boundary="line")
        report = probe(
            out / "eval.jsonl",
            model=f"ngram-lm:{lm}",
            methods="min-k,min-k++,ppl,zlib,guided",
            controls=out / "controls.jsonl",
        )
    print("| method | direction | AUC (label 1 = in train.txt, oriented) |\n|---|---|--:|")
    for m in report.methods:
        scores = report.examples.scores[m.name]
        oriented = scores if m.direction == "higher" else -scores
        print(f"| {m.name} | {m.direction} | {auc_from_labels(oriented, labels):.3f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures" / "probe")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--measure", action="store_true", help="train, probe, print AUCs")
    args = ap.parse_args()
    write(args.out, args.seed)
    if args.measure:
        measure(args.out)


if __name__ == "__main__":
    main()
