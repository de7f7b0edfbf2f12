"""The benchmark's detectors that do not depend on n: the fuzzy detector and the probe.

- :func:`fuzzy_signals`: the paraphrase-tolerant detector of :mod:`contam_cli.engine.fuzzy`
  (seeds, then a banded alignment), streamed over the set's corpus in memory; score = its
  alignment score, flag at ``FuzzyConfig.min_fuzzy``. Used only when that engine exposes
  ``build_fuzzy_index`` and ``FuzzyAccumulator`` (:func:`fuzzy_missing` says why not).
- :func:`probe_signals`: the probe's methods (Min-K%, Min-K%++, perplexity, zlib, guided)
  through :func:`contam_cli.features.probe.probe`, with the set's controls: score = the method's
  score oriented (perplexity negated), flag = more suspicious than ``percentile`` % of the
  controls (``X:control_pct >= 99``). With :data:`BENCH_LM` the model is the built-in n-gram
  LM trained on each set's own corpus (which holds the leaks), so it is a real membership
  signal; any other model never saw the benchmark's corpus.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from contam_cli.detectors.providers.base import TextScores
from contam_cli.detectors.providers.ngram_lm import NgramLM, train
from contam_cli.engine.match import iter_batches
from contam_cli.features.bench.labelled import LabelledSet
from contam_cli.features.bench.signals import Settings, Signal
from contam_cli.features.probe import CONTROL_SUFFIX, probe
from contam_cli.io.model import Locator, Record
from contam_cli.report import Report
from contam_cli.stats import orient
from contam_cli.text import Tokenizer

__all__ = ["BENCH_LM", "BenchLM", "fuzzy_missing", "fuzzy_signals", "probe_signals"]

BENCH_LM = "ngram-lm"
"""The model spec that means: the built-in n-gram LM, trained on each labelled set's corpus."""
_FUZZY = "contam_cli.engine.fuzzy"
_FUZZY_NAMES = ("build_fuzzy_index", "FuzzyAccumulator", "FuzzyConfig")


class BenchLM:
    """A Provider over an n-gram LM trained in memory on one labelled set's corpus."""

    def __init__(self, data: LabelledSet) -> None:
        self.spec = f"{BENCH_LM}:<labelled seed={data.params.seed} corpus>"
        self.model: NgramLM = train(data.corpus_texts())

    def describe(self) -> dict[str, Any]:
        return {"provider": BENCH_LM, "source": "the labelled corpus", **self.model.describe()}

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        return [self.model.score(text) for text in texts]

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        return [self.model.complete(prefix, max_tokens) for prefix in prefixes]


def fuzzy_missing() -> str | None:
    """None when the fuzzy engine can run here, else why it is left out."""
    try:
        module = importlib.import_module(_FUZZY)
    except ImportError as e:
        return f"fuzzy: left out, {_FUZZY} cannot be imported ({e})"
    absent = [name for name in _FUZZY_NAMES if not hasattr(module, name)]
    if absent:
        return f"fuzzy: left out, {_FUZZY} does not expose {', '.join(absent)} yet"
    return None


def fuzzy_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """The fuzzy detector over the set's corpus (one source), in memory."""
    fz = importlib.import_module(_FUZZY)
    cfg = fz.FuzzyConfig()
    tk = Tokenizer()
    index = fz.build_fuzzy_index([e.text for e in data.examples], config=cfg, tokenizer=tk)
    acc = fz.FuzzyAccumulator(len(data.examples), ["corpus"], cfg)
    where = "<labelled corpus>"
    docs = (
        (Record(str(d), text, Locator(where, record=d)), d)
        for d, text in enumerate(data.corpus_texts())
    )
    for batch in iter_batches(docs, 0, 1 << 20):
        acc.add_batch(index, tk, batch)
    results = acc.results(index)
    score = np.asarray(results.score, dtype=np.float64)
    flags = np.asarray(results.flagged(cfg.min_fuzzy), dtype=bool)
    return {"fuzzy": Signal(f"fuzzy score >= {cfg.min_fuzzy:g}", score, flags)}


def probe_signals(data: LabelledSet, s: Settings) -> dict[str, Signal]:
    """Every probe method's score and its flag against the controls."""
    model = BenchLM(data) if s.model == BENCH_LM else s.model
    report = probe(data.records(), model=model, methods=s.methods, controls=list(s.controls))
    rule = f"above p{s.percentile:g} of {len(s.controls)} controls"
    out = {}
    for m in report.methods:
        if m.name.endswith(CONTROL_SUFFIX):
            continue
        pct = _column(report, m.name + CONTROL_SUFFIX)
        flags = np.nan_to_num(pct, nan=-1.0) >= s.percentile
        out[m.name] = Signal(rule, orient(_column(report, m.name), m.direction), flags)
    return out


def _column(report: Report, name: str) -> np.ndarray:
    values = [e.scores.get(name) for e in report.examples]
    return np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
