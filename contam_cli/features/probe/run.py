"""probe(): score every eval example with a model, resumably, and return the Report."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from contam_cli.detectors.providers.base import Provider, ProviderError
from contam_cli.detectors.providers.openai_answers import ServedModelChanged
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.probe.assemble import build_report
from contam_cli.features.probe.methods import DEFAULT_METHODS, Entry, Plan
from contam_cli.features.probe.provider import model_paths, open_provider
from contam_cli.features.probe.sidecar import Identity, Sidecar, records_digest, sidecar_path
from contam_cli.features.scan import check_input_roles, load_eval
from contam_cli.io.discover import iter_files
from contam_cli.io.extract import TextSpec
from contam_cli.io.inputs import classify
from contam_cli.io.model import Record, StrPath
from contam_cli.io.output import check_target
from contam_cli.report import Report, save_report
from contam_cli.text import DEFAULT_NORM

__all__ = ["ProbeProgress", "probe"]

ProbeProgress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` before the first batch and after each one; examples
already scored by an interrupted run count as done from the start."""


def probe(
    eval: Any,
    *,
    model: str | Provider,
    methods: str | Iterable[str] = DEFAULT_METHODS,
    k: float | Iterable[float] = (20,),
    controls: Any = None,
    eval_spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    batch_size: int = 16,
    output: StrPath | None = None,
    resume: bool = True,
    progress: ProbeProgress | None = None,
    provider_options: Mapping[str, Any] | None = None,
    max_tokens: int | None = None,
    redact: bool = False,
) -> Report:
    """Score every eval example with a model's view of it; return a Report (nothing printed).

    `eval` and `controls` follow the one input rule (:mod:`contam_cli.io.inputs`) and are read
    as scan reads an eval set (`eval_spec`, `include`, `exclude`). `model` is a spec for
    :func:`~contam_cli.detectors.providers.load_provider` (``hf:``, ``openai:``, ``ngram-lm:``;
    built with `provider_options`) or a Provider; it is built and checked before any work.
    `methods`: ``min-k``, ``min-k++``, ``ppl``, ``zlib``, ``guided`` (see
    :mod:`.methods`), Min-K% and Min-K%++ at each `k`; a text a method cannot score gets None.

    The scores are membership signals, not verdicts: nothing is flagged. Absolute values (a
    Min-K% of -4.2, a perplexity of 30) mean nothing across models, tokenizers or kinds of
    text; only their order among examples scored by one model does. `controls`, text known
    NOT to be in the training data, gives them a scale: each method ``X`` gains ``X:control_pct``
    (the share of control scores the example is more suspicious than) and
    ``stats["controls"]`` holds the controls' n, mean, sd and percentiles.

    With `output`, the report is written there (atomically) and every scored batch is first
    appended to ``OUTPUT.partial.jsonl``; a run stopped at any point and started again with the
    same output, examples and config skips what was scored and returns a report equal to an
    uninterrupted run's (`resume=False` starts over). The sidecar goes once the report is written.
    An ``openai:`` endpoint's answers must name the model and ``system_fingerprint`` its first
    answer (or the sidecar) named, else UsageError: scores of two deployments are never mixed.
    """
    plan = Plan.make(methods, k, max_tokens, redact)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ArgumentError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    opts = ScanOptions(eval_spec=eval_spec, include=tuple(include), exclude=tuple(exclude))
    sets, inputs, paths = _read_inputs(eval, controls, opts)
    paths += model_paths(model)
    if output is not None:
        for target in (output, sidecar_path(output)):
            check_target(target, paths)
    provider = open_provider(model, dict(provider_options or {}), batch_size)
    config = {
        "model": provider.describe(),
        **plan.describe(),
        "batch_size": batch_size,
        "normalization": DEFAULT_NORM.describe(),
    }
    store = None
    if output is not None:
        digests = {name: records_digest(recs) for name, recs in sets.items()}
        identity = Identity({**config, "redact": plan.redact}, digests)
        store = Sidecar(sidecar_path(output), identity, sets)
    try:
        done = store.open(resume) if store is not None else {}
        if store is not None and store.served is not None and hasattr(provider, "pin_served"):
            provider.pin_served(store.served)  # NOTE: the resumed run's answers name it too
        scored = _score_all(plan, provider, sets, done, store, batch_size, progress)
    finally:
        if store is not None:
            store.close()
    if served := _served(provider, store):
        config["model"] = {**config["model"], "served": served}
    report = build_report(
        plan, sets["eval"], scored["eval"], scored.get("controls"), config, inputs
    )
    if output is not None and store is not None:
        save_report(report, Path(output), inputs=paths)
        store.remove()  # NOTE: only once the report is safely written
    return report


def _read_inputs(
    eval: Any, controls: Any, opts: ScanOptions
) -> tuple[dict[str, list[Record]], dict[str, Any], list[Path]]:
    """The records of each set, the report's ``inputs``, and the paths given (never written)."""
    paths = list(classify(eval, what="eval").paths)
    more = [] if controls is None else classify(controls, what="controls").paths
    # NOTE: --roles naming no turn of a file reads all its texts as empty: refused, as scan does.
    check_input_roles(eval, [f for p in more for f in iter_files(p, opts.include, opts.exclude)],
                      opts)  # fmt: skip
    records, described = load_eval(eval, opts)
    sets, inputs = {"eval": records}, {"eval": described}
    if controls is not None:
        paths += more
        try:
            sets["controls"], inputs["controls"] = load_eval(controls, opts)
        except UsageError as e:  # NOTE: its messages speak of "the eval set"
            raise type(e)(f"controls: {e}") from None
    return sets, inputs, paths


def _score_all(
    plan: Plan,
    provider: Provider,
    sets: Mapping[str, Sequence[Record]],
    done: Mapping[tuple[str, int], Entry],
    store: Sidecar | None,
    batch_size: int,
    progress: ProbeProgress | None,
) -> dict[str, list[Entry]]:
    """Every record of every set scored, in order: from ``done``, else a batch at a time."""
    results: dict[str, list[Entry | None]] = {
        name: [done.get((name, i)) for i in range(len(recs))] for name, recs in sets.items()
    }
    total = sum(len(recs) for recs in sets.values())
    count = sum(e is not None for got in results.values() for e in got)
    if progress is not None:
        progress(count, total)
    for name, recs in sets.items():
        todo = [i for i, e in enumerate(results[name]) if e is None]
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            # NOTE: the values a resumed run reads back from the sidecar, so both runs agree.
            try:
                entries = orjson.loads(
                    orjson.dumps(plan.score(provider, [recs[i].text for i in batch]))
                )
            except ServedModelChanged as e:
                raise UsageError(f"{e}; {_afresh(e, store)}") from None
            except ProviderError as e:
                raise ProviderError(
                    f"{_batch_name(name, recs, batch)}: {e}{_kept(store)}"
                ) from None
            if store is not None:
                if served := _served(provider, store):  # NOTE: one naming neither: as before
                    store.record_served(served)
                store.append(name, batch, entries)
            for i, entry in zip(batch, entries):
                results[name][i] = entry
            count += len(batch)
            if progress is not None:
                progress(count, total)
    return {name: [e for e in got if e is not None] for name, got in results.items()}


def _batch_name(name: str, recs: Sequence[Record], batch: Sequence[int]) -> str:
    """The examples of a failed batch, for its one-line error."""
    first, last = recs[batch[0]], recs[batch[-1]]
    what = f"{name} example {first.id} ({first.locator})"
    return what if len(batch) == 1 else f"{what} to {last.id} ({last.locator}), a batch"


def _served(provider: Provider, store: Sidecar | None) -> dict[str, str] | None:
    """Who answered (an ``openai:`` endpoint's model and fingerprint), from the provider or,
    when this run asked nothing, the partial results; None for other providers."""
    served = getattr(provider, "served", None)
    now = served() if callable(served) else None
    return now if now is not None or store is None else store.served


def _afresh(e: ServedModelChanged, store: Sidecar | None) -> str:
    """How to start afresh once answers of two models would be mixed."""
    cache = (
        f"the answer cache {e.cache} removed (or CONTAM_CACHE_DIR set to an empty directory)"
        if e.cache is not None
        else ""
    )
    if e.pinned_by == "answer":
        return "the endpoint changed during the run: run again once it serves one model"
    restart = "--restart (resume=False)" if store is not None else ""
    how = " with ".join(part for part in (restart, cache) if part)
    return f"to start afresh: {how}" if how else "run again"


def _kept(store: Sidecar | None) -> str:
    return "" if store is None else f"; the examples scored are kept in {store.path}: run again"
