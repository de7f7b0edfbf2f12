"""A labelled boilerplate benchmark: shared sentences in many documents, real leaks in a few.

Built on :mod:`~contam_cli.features.bench.labelled` with its ``verbatim``, ``partial`` and
``boilerplate`` kinds and examples of 80-200 words: 8 licence-like and quote-like sentences of
20-30 words, each in 50-200 short corpus documents, one inside each ``boilerplate`` example; real
leaks are whole examples (``verbatim``) and 40-word spans (``partial``). Then every document that
holds a leak is copied so that it appears 1-3 times in all, so each real leak sits in 1-3
documents. ``clean`` examples are planted nowhere.

Label 1 (``verbatim``, ``partial``) should be flagged; label 0 (``clean``, ``boilerplate``) not.
``scripts/boilerplate_table.py`` scores the settings of boilerplate suppression on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from contam_cli.features.bench.labelled import LabelledExample, LabelledParams, build_labelled

__all__ = ["BoilerplateSet", "boilerplate_set"]

KINDS = ("verbatim", "partial", "boilerplate")


@dataclass(frozen=True)
class BoilerplateSet:
    """Examples (with kinds and labels), corpus texts, and the boilerplate sentences."""

    examples: list[LabelledExample]
    corpus: list[str]
    sentences: list[str]
    """The distinct boilerplate sentences (what a collection for ``--ignore-from`` would hold)."""
    holders: dict[str, int]
    """Per non-clean example, the corpus documents holding its plant."""

    def write(self, directory: Path) -> dict[str, Path]:
        """``eval.jsonl``, ``corpus.jsonl`` and ``boilerplate.jsonl`` (one sentence a line)."""
        directory.mkdir(parents=True, exist_ok=True)
        files = {
            "eval": (
                directory / "eval.jsonl",
                [{"id": e.id, "text": e.text} for e in self.examples],
            ),
            "corpus": (directory / "corpus.jsonl", [{"text": t} for t in self.corpus]),
            "boilerplate": (directory / "boilerplate.jsonl", [{"text": t} for t in self.sentences]),
        }
        for path, rows in files.values():
            path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
        return {k: v[0] for k, v in files.items()}


def boilerplate_set(
    seed: int = 0,
    *,
    n_clean: int = 60,
    n_per_kind: int = 20,
    leak_copies: tuple[int, int] = (1, 3),
) -> BoilerplateSet:
    """The set for `seed` (deterministic); `leak_copies`: documents holding each real leak.

    >>> s = boilerplate_set(1, n_clean=2, n_per_kind=2)
    >>> sorted({e.kind for e in s.examples}), len(s.sentences) >= 1
    (['boilerplate', 'clean', 'partial', 'verbatim'], True)
    """
    params = LabelledParams(
        seed=seed,
        n_clean=n_clean,
        n_per_kind=n_per_kind,
        kinds=KINDS,
        example_words=(80, 200),
        partial_words=40,
    )
    base = build_labelled(params)
    corpus = base.corpus_texts()
    rng = np.random.default_rng([seed, 0xB01])
    leak_docs = sorted(
        {d for eid, p in base.plants.items() if base.labels[eid] == 1 for d in p.docs}
    )
    copies = rng.integers(leak_copies[0], leak_copies[1] + 1, size=len(leak_docs)).tolist()
    extra = [corpus[d] for d, k in zip(leak_docs, copies) for _ in range(k - 1)]
    times = dict(zip(leak_docs, copies))
    holders = {eid: sum(times.get(d, 1) for d in p.docs) for eid, p in sorted(base.plants.items())}
    sentences = sorted(
        {p.text for eid, p in base.plants.items() if base.kinds[eid] == "boilerplate"}
    )
    return BoilerplateSet(base.examples, corpus + extra, sentences, holders)
