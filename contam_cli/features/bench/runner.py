"""run_bench(): every detector on the labelled benchmark, over seeds, and what each setting costs.

Per seed ``0 .. seeds-1``: :func:`~contam_cli.features.bench.labelled.generate_labelled` (60
clean examples, 20 of each leak kind, 20 of each hard negative), control texts of the same text
model planted nowhere (:mod:`.controls`), then each detector of :data:`DETECTORS`, at every n
of ``ns`` for the n-gram ones and once for the others. Everything runs in memory through the
library (the scan engine, calibration, the probe): no files, no subprocesses.

Adding a detector is one :class:`Detector` entry: a name, and a function from (LabelledSet,
Settings) to ``{signal name: Signal}`` (a score and a flag per example, see
:mod:`.signals`). The arithmetic over seeds is :mod:`.summary`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from contam_cli._version import __version__
from contam_cli.detectors.providers.base import Provider
from contam_cli.errors import UsageError
from contam_cli.features.bench import model_signals as ms
from contam_cli.features.bench import signals as sg
from contam_cli.features.bench.controls import control_texts
from contam_cli.features.bench.labelled import LabelledParams, LabelledSet, generate_labelled
from contam_cli.features.bench.summary import Row, RowBuilder
from contam_cli.features.probe import DEFAULT_METHODS, open_provider, parse_methods

__all__ = ["DETECTORS", "BenchConfig", "BenchProgress", "BenchResult", "Detector", "run_bench"]

BenchProgress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` before the first step and after each one (a step: one
detector on one seed, at one n)."""
DetectorFn = Callable[[LabelledSet, sg.Settings], dict[str, sg.Signal]]


@dataclass(frozen=True)
class Detector:
    """One entry of the benchmark."""

    name: str
    run: DetectorFn
    per_n: bool = True
    """Run once per n-gram size (else once per seed, shown with no n)."""
    needs_model: bool = False
    """Runs only when a model is given."""
    missing: Callable[[], str | None] = lambda: None
    """Why it cannot run here (None: it can); then it is left out with that note."""


DETECTORS: tuple[Detector, ...] = (
    Detector("ngram", sg.ngram_signals),
    Detector("chained", sg.chained_signals),
    Detector("line-split", sg.line_split_signals),
    Detector("calibrated", sg.calibrated_signals),
    Detector("ignore-common", sg.suppressed_signals),
    Detector("fuzzy", ms.fuzzy_signals, per_n=False, missing=ms.fuzzy_missing),
    Detector("probe", ms.probe_signals, per_n=False, needs_model=True),
)


@dataclass(frozen=True)
class BenchConfig:
    """What a benchmark run was asked, in the order the JSON records it."""

    seeds: int
    prevalence: float
    documents: float
    ns: tuple[int, ...]
    detectors: tuple[str, ...]
    """The detectors that ran."""
    settings: sg.Settings
    model: dict[str, Any] | None
    """The probe's model, as its provider describes it (None: no model)."""
    generator: LabelledParams
    controls: int


@dataclass(frozen=True)
class BenchResult:
    """The benchmark's outcome: one :class:`~.summary.Row` per signal (and n), in run order."""

    config: BenchConfig
    rows: tuple[Row, ...]
    examples_per_seed: dict[str, int]
    """Examples of each kind in one seed's set (the same for every seed)."""
    corpus_documents: tuple[int, ...]
    """Each seed's corpus size, in documents."""
    notes: tuple[str, ...] = ()
    version: str = field(default=__version__)

    def row(self, signal: str, n: int | None = None) -> Row:
        """The row of `signal` at `n` (KeyError if it did not run)."""
        for r in self.rows:
            if r.signal == signal and r.n == n:
                return r
        raise KeyError(f"no row for {signal!r} at n={n}")


def run_bench(
    *,
    seeds: int = 10,
    prevalence: float = 0.01,
    documents: float = 10000,
    ns: Sequence[int] = (5, 8, 13, 20),
    methods: str | Iterable[str] | None = None,
    model: str | Provider | None = None,
    progress: BenchProgress | None = None,
    detectors: Iterable[str] | None = None,
    ignore_common: int = 20,
    zscore: float = 2.0,
    controls: int = 200,
) -> BenchResult:
    """Run the labelled benchmark (module docstring); nothing is printed or written.

    `methods` are the probe's (default: min-k, min-k++, ppl, zlib) and need `model`: a spec
    (:data:`~.model_signals.BENCH_LM` ``"ngram-lm"``: the built-in n-gram LM trained on each
    seed's corpus; ``hf:...``, ``openai:...``: a model opened once) or a Provider. `detectors`
    picks entries of :data:`DETECTORS` by name (default: every one that can run).

    >>> r = run_bench(seeds=1, ns=(13,), detectors=["ngram"])
    >>> r.row("overlap_fraction", 13).views["all"].auc["verbatim"].mean
    1.0
    """
    ns = _check(seeds, prevalence, documents, ns, ignore_common, controls)
    chosen, notes = _choose(detectors, model is not None)
    if methods is not None and model is None:
        raise UsageError("--methods are the probe's: give --model too (e.g. --model ngram-lm)")
    settings = sg.Settings(ignore_common=ignore_common, zscore=float(zscore))
    described = None
    if model is not None and any(d.needs_model for d in chosen):
        settings, described = _with_model(settings, model, methods)
    steps = [(d, n) for d in chosen for n in (ns if d.per_n else (None,))]
    builders: dict[tuple[int | None, str], RowBuilder] = {}
    sizes: list[int] = []
    per_kind: dict[str, int] = {}
    total = seeds * len(steps)
    if progress is not None:
        progress(0, total)
    for seed in range(seeds):
        data = generate_labelled(seed)
        sizes.append(len(data.corpus))
        kinds = np.array([e.kind for e in data.examples])
        per_kind = per_kind or {k: int((kinds == k).sum()) for k in dict.fromkeys(kinds.tolist())}
        base = replace(settings, controls=tuple(control_texts(data, controls)))
        for k, (det, n) in enumerate(steps, start=1):
            got = det.run(data, base if n is None else replace(base, n=n))
            for name, signal in got.items():
                builder = builders.setdefault((n, name), RowBuilder(n, det.name, name, signal.rule))
                builder.add(kinds, signal)
            if progress is not None:
                progress(seed * len(steps) + k, total)
    rows = tuple(_ordered([b.row(documents, prevalence) for b in builders.values()]))
    config = BenchConfig(
        seeds=seeds,
        prevalence=float(prevalence),
        documents=float(documents),
        ns=ns,
        detectors=tuple(d.name for d in chosen),
        settings=replace(settings, model=None),
        model=described,
        generator=LabelledParams(),
        controls=controls,
    )
    return BenchResult(config, rows, per_kind, tuple(sizes), tuple(notes))


def _check(
    seeds: int, prevalence: float, documents: float, ns: Sequence[int], k: int, controls: int
) -> tuple[int, ...]:
    for name, value, least in (("--seeds", seeds, 1), ("--controls", controls, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise UsageError(f"{name} must be an integer >= {least}, got {value!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise UsageError(f"--ignore-common must be an integer >= 0, got {k!r}")
    if not (isinstance(prevalence, (int, float)) and 0.0 < prevalence <= 1.0):
        raise UsageError(f"--prevalence must be a rate in (0, 1], got {prevalence!r}")
    if not (isinstance(documents, (int, float)) and 0.0 < documents < float("inf")):
        raise UsageError(f"--documents must be a positive number, got {documents!r}")
    out = tuple(ns)
    low = LabelledParams().example_words[0]
    bad = [n for n in out if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= low]
    if not out or bad or len(set(out)) != len(out):
        raise UsageError(
            f"--n must list distinct n-gram sizes from 1 to {low} (the shortest example), "
            f"got {','.join(map(str, out)) or 'nothing'}"
        )
    return out


def _choose(names: Iterable[str] | None, have_model: bool) -> tuple[list[Detector], list[str]]:
    """The detectors to run, and a note for each one left out."""
    known = {d.name: d for d in DETECTORS}
    wanted = list(known) if names is None else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise UsageError(f"unknown detector {unknown[0]!r}: expected {', '.join(known)}")
    chosen, notes = [], []
    for name in wanted:
        det = known[name]
        why = det.missing()
        if why is not None:
            notes.append(why)
        elif det.needs_model and not have_model:
            if names is not None:
                raise UsageError(f"the {name} detector needs --model (e.g. --model ngram-lm)")
        else:
            chosen.append(det)
    return chosen, notes


def _with_model(
    settings: sg.Settings, model: str | Provider, methods: str | Iterable[str] | None
) -> tuple[sg.Settings, dict[str, Any]]:
    """Settings with the probe's model and methods, and the model's description."""
    chosen = parse_methods(DEFAULT_METHODS if methods is None else methods)
    if isinstance(model, str) and model.rstrip(":") == ms.BENCH_LM:
        described = {"spec": ms.BENCH_LM, "source": "each seed's labelled corpus"}
        return replace(settings, model=ms.BENCH_LM, methods=chosen), described
    provider = open_provider(model, None, 16)
    return replace(settings, model=provider, methods=chosen), {
        "spec": provider.spec,
        **provider.describe(),
    }


def _ordered(rows: list[Row]) -> list[Row]:
    """n-gram rows by n (in the order of the detectors), then the rows without n."""
    return sorted(rows, key=lambda r: (r.n is None, r.n or 0))
