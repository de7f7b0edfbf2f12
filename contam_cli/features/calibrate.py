"""calibrate(): per-source thresholds from control texts known to be outside every source.

Innocent overlap differs between sources: templated math, licence text and scraped boilerplate
share n-grams with unrelated text that prose does not. So each source gets its own null
distribution: the controls (text written after the source's cutoff, or held out) are scanned
once against all sources, which gives per control and source its overlap fraction and longest
exact run (0 where nothing matches), and per source:

* ``overlap_fraction`` = the `percentile` of the controls' overlaps (NaN ignored), at most 1.0;
* ``longest_run`` = ceil(the `percentile` of the controls' runs) + 1, strictly above the innocent
  overlap, and at least `min_run` when given;
* ``controls`` = the scorable controls (at least n tokens), and ``well_estimated`` = controls >=
  ceil(1 / tail fraction): a 99th percentile needs at least 100 controls (a 100th never is).

With the fuzzy detector on (``ScanOptions.fuzzy``) each source also gets ``fuzzy`` = the
`percentile` of the controls' fuzzy scores in that source (their best alignment there, 0 where
nothing aligned; controls shorter than its ``min_tokens`` left out), at most 1.0 -- the rule of
``overlap_fraction``; ``controls`` then counts the controls both detectors scored, and the file
records the fuzzy settings. Each source read from paths records them (``calibrated_on``), so
that a scan giving a source another one's paths refuses the file.

The result saves to, and loads from, a thresholds file (``contam.thresholds/1``), which a scan
takes with ``FlagPolicy(thresholds=...)`` (``contam scan --thresholds``). ``common_out`` also
writes the `common_k` control n-grams found in the most corpus documents, as JSONL that
``ignore_from`` reads (see :func:`common_ngrams`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.executor import Executor
from contam_cli.engine.fuzzy.shared import WithFuzzy
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.eval_side import eval_warnings, load_eval
from contam_cli.features.scan import CorpusScan, check_input_roles, resolve_sources, scan_corpus
from contam_cli.io.formats import format_of
from contam_cli.io.inputs import classify, name_paths
from contam_cli.io.model import Record, unread_turn_entry
from contam_cli.io.output import atomic_writer, output_group
from contam_cli.policy.rules import FlagPolicy, SourceThreshold
from contam_cli.policy.thresholds import Thresholds, corpus_paths
from contam_cli.stats.percentile import percentile as percentile_of
from contam_cli.text import NormConfig, tokenize

__all__ = ["calibrate", "common_ngrams", "controls_needed", "source_threshold"]

ProgressFn = Callable[[int], None]


def calibrate(
    sources: Mapping[str, Any],
    controls: Any,
    *,
    percentile: float = 99.0,
    min_run: int | None = None,
    n: int | None = None,
    options: ScanOptions | None = None,
    progress: ProgressFn | None = None,
    executor: Executor | None = None,
    common_out: str | Path | None = None,
    common_k: int = 1000,
    output: str | Path | None = None,
    **kwargs: Any,
) -> Thresholds:
    """Per-source thresholds measured on `controls` (see the module docstring).

    `sources` maps source names to corpora and `controls` is an eval-like input, both under the
    one input rule; `n` (default: the options' n, 13) and keyword arguments override fields of
    :class:`ScanOptions`. No controls, or none with at least n tokens, is a UsageError.
    `output` also saves the thresholds file there; it and `common_out` appear together or not
    at all, never over or inside a control or source path.

    >>> t = calibrate({"web": ["one two three four five six"]}, ["two three four five", "x y z"],
    ...               n=3, percentile=100)
    >>> t["web"].longest_run, t["web"].overlap_fraction, t["web"].controls
    (5, 1.0, 2)
    """
    opts = _options(options, n, kwargs)
    _check_arguments(percentile, min_run, common_k, common_out)
    records, control_inputs = load_eval(controls, opts, what="controls")
    found = resolve_sources(sources, opts)
    check_input_roles(controls, [p for s in found for p in s.paths], opts)
    given = _given_paths(controls, sources)
    if output is not None and common_out is not None:
        if Path(output).resolve() == Path(common_out).resolve():
            raise UsageError(f"{common_out}: given for two outputs ({output} too)")
    with output_group() as stack:
        out = None if output is None else stack.enter_context(atomic_writer(output, inputs=given))
        fh = None
        if common_out is not None:
            fh = stack.enter_context(atomic_writer(common_out, inputs=given))
        done = scan_corpus(
            records, found, opts, progress=progress, executor=executor, frequencies=fh is not None
        )
        table = _thresholds(
            done.index,
            done.acc.matched_counts(done.index),
            done.acc.best_len,
            [s.name for s in found],
            percentile,
            min_run,
            _fuzzy_scores(done),
            name_paths(classify(controls, what="controls").paths),
        )
        leaked = _leaked_controls(done.index, done.acc.best_len, [s.name for s in found], table)
        leaked += tuple(_unread(control_inputs, done.acc.unread_turns))
        if fh is not None:
            assert done.doc_freq is not None and done.full_index is not None
            rows = common_ngrams(done.full_index, done.doc_freq, records, common_k, opts.norm)
            _write_common(fh, rows)
        result = Thresholds(
            sources=table,
            n=opts.n,
            normalization=opts.norm.describe(),
            percentile=float(percentile),
            min_run=min_run,
            fuzzy=opts.describe().get("fuzzy"),
            calibrated_on=corpus_paths(sources),
            tool_version=__version__,
            origin="calibrate",
            warnings=leaked,
        )
        if out is not None:
            out.write(result.to_json())
    return result


def _unread(
    control_inputs: list[dict[str, Any]], unread: dict[str, tuple[int, str, str]]
) -> list[str]:
    """The chat turns read as no text (none of content, value and text), first per file: in
    the controls (their overlaps read low) and in the sources (their leaks unseen)."""
    corpus = [{"path": p, "unread_turn": unread_turn_entry(t)} for p, t in sorted(unread.items())]
    return [*eval_warnings(control_inputs), *eval_warnings(corpus, "--corpus-field")]


def source_threshold(
    overlaps: np.ndarray,
    runs: np.ndarray,
    q: float,
    min_run: int | None = None,
    fuzzy: np.ndarray | None = None,
) -> SourceThreshold:
    """One source's thresholds from its controls' overlaps and runs (NaN: an unscorable control)
    and, when given, their fuzzy scores (NaN: too short for the fuzzy detector).

    >>> t = source_threshold(np.array([0.0, 0.5, np.nan]), np.array([0, 9, np.nan]), 50)
    >>> t.overlap_fraction, t.longest_run, t.controls, t.well_estimated
    (0.25, 6, 2, True)
    >>> source_threshold(np.zeros(3), np.zeros(3), 50, fuzzy=np.array([0.1, 0.3, np.nan])).fuzzy
    0.2
    """
    scored = int(np.count_nonzero(~np.isnan(np.asarray(overlaps, dtype=np.float64))))
    if scored == 0:
        raise ValueError("no scorable controls: every overlap is NaN")
    overlap = min(1.0, percentile_of(overlaps, q))
    # NOTE: runs are whole numbers; an interpolation a hair above one must not add a token.
    run = math.ceil(round(percentile_of(runs, q), 9)) + 1
    if min_run is not None:
        run = max(run, min_run)
    fz = None
    if fuzzy is not None:
        both = ~np.isnan(np.asarray(overlaps, np.float64)) & ~np.isnan(
            np.asarray(fuzzy, np.float64)
        )
        scored = int(np.count_nonzero(both))
        if scored == 0:
            raise ValueError("no control scored by both detectors")
        fz = min(1.0, percentile_of(fuzzy, q))
    return SourceThreshold(run, overlap, scored, scored >= controls_needed(q), fz)


def controls_needed(q: float) -> float:
    """The controls a `q`-th percentile needs: ceil(1 / tail fraction), exact in decimal.

    >>> controls_needed(99), controls_needed(99.9), controls_needed(50), controls_needed(100)
    (100, 1000, 2, inf)
    """
    tail = 100 - Fraction(str(q))
    return math.inf if tail <= 0 else math.ceil(100 / tail)


def common_ngrams(
    index: EvalIndex, doc_freq: np.ndarray, records: list[Record], k: int, norm: NormConfig
) -> list[tuple[str, int]]:
    """The `k` n-grams of `index` found in the most documents (`doc_freq` per gram; at least
    one), as (normalized token text, documents), most documents first, then by text. The text
    is the tokens of the n-gram's first place among `records` (the indexed texts), joined by
    single spaces: tokenized again it gives the same n-gram.
    """
    found = np.flatnonzero(doc_freq > 0)
    # NOTE: the k largest by count; ties at the cut are settled by text below, so take them all.
    if len(found) > k:
        cut = np.partition(doc_freq[found], len(found) - k)[len(found) - k]
        found = found[doc_freq[found] >= cut]
    tokens: dict[int, list[str]] = {}
    rows = []
    first, _ = index.occ_range(found)
    for u, j in zip(found.tolist(), first.tolist()):
        e, p = int(index.occ_ex[j]), int(index.occ_pos[j])
        if e not in tokens:
            tokens[e] = tokenize(records[e].text, norm)
        rows.append((" ".join(tokens[e][p : p + index.n]), int(doc_freq[u])))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return rows[:k]


def _write_common(fh: IO[Any], rows: list[tuple[str, int]]) -> None:
    for text, docs in rows:
        fh.write(orjson.dumps({"text": text, "documents": docs}) + b"\n")


def _thresholds(
    index: EvalIndex,
    matched: np.ndarray,
    runs: np.ndarray,
    names: list[str],
    q: float,
    min_run: int | None,
    fuzzy: np.ndarray | None = None,
    where: str = "",
) -> dict[str, SourceThreshold]:
    """Per source, its thresholds from the (source, control) matched counts and runs (and fuzzy
    scores, NaN where unscorable); `where` starts the errors (the controls' files)."""
    scorable = index.scorable & (index.total_ngrams > 0)
    if not scorable.any():
        raise UsageError(
            f"{where}none of the {index.n_examples} controls has an n-gram at n={index.n} "
            f"(fewer than {index.n} tokens): supply longer controls or lower n"
        )
    if fuzzy is not None and not (scorable & ~np.isnan(fuzzy).all(axis=0)).any():
        raise UsageError(
            f"{where}none of the {index.n_examples} controls is long enough for the fuzzy detector "
            "(and has an n-gram): supply longer controls"
        )
    total = np.maximum(index.total_ngrams, 1)
    out = {}
    for s, name in enumerate(names):
        overlaps = np.where(scorable, matched[s] / total, np.nan)
        lengths = np.where(scorable, runs[s].astype(np.float64), np.nan)
        fz = None if fuzzy is None else fuzzy[s]
        out[name] = source_threshold(overlaps, lengths, q, min_run, fz)
    return out


def _leaked_controls(
    index: EvalIndex, runs: np.ndarray, names: list[str], table: Mapping[str, SourceThreshold]
) -> tuple[str, ...]:
    """A warning per source some controls share a leak-long verbatim run with (the scan's
    default ``min_run``): such controls are in the source, and lift its thresholds toward the
    leaks they are meant to flag."""
    leak = FlagPolicy().min_run
    assert leak is not None
    scorable = index.scorable & (index.total_ngrams > 0)
    out = []
    for s, name in enumerate(names):
        k = int(np.count_nonzero(scorable & (runs[s] >= leak)))
        if k:
            t = table[name]
            out.append(
                f"{k} of {t.controls} controls share a verbatim run of {leak} tokens or more with "
                f"source {name!r} (a leak to contam scan's default --min-run): controls must be "
                f"outside every source, and these lift its thresholds (run {t.longest_run}, "
                f"overlap {t.overlap_fraction:.3f}) toward the leaks they should flag"
            )
    return tuple(out)


def _fuzzy_scores(done: CorpusScan) -> np.ndarray | None:
    """Per (source, control) its fuzzy score (NaN: too short), when the fuzzy detector ran."""
    index = done.fuzzy_index
    if index is None:
        return None
    assert isinstance(done.acc, WithFuzzy)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = done.acc.fuzzy.best_h / np.maximum(index.total_weight, 1)
    return np.where(index.scorable[None, :], scores, np.nan)


def _options(options: ScanOptions | None, n: int | None, kwargs: dict[str, Any]) -> ScanOptions:
    if options is not None and not isinstance(options, ScanOptions):
        raise ArgumentError(f"options must be ScanOptions, got {type(options).__name__}")
    if n is not None:
        kwargs = {**kwargs, "n": n}
    try:
        opts = replace(options or ScanOptions(), **kwargs)
    except TypeError as e:  # an unknown keyword
        raise ArgumentError(f"calibrate(): {e}") from None
    if opts.ignores:
        raise ArgumentError(
            "calibrate measures innocent overlap as it is: boilerplate suppression "
            "(ignore_common, ignore_from) does not apply to it"
        )
    return opts


def _check_arguments(
    q: object, min_run: object, common_k: object, common_out: str | Path | None
) -> None:
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 <= q <= 100:
        raise UsageError(f"--percentile must be a number in [0, 100], got {q!r}")
    if min_run is not None and (
        isinstance(min_run, bool) or not isinstance(min_run, int) or min_run < 1
    ):
        raise UsageError(f"--min-run must be an integer >= 1, got {min_run!r}")
    if isinstance(common_k, bool) or not isinstance(common_k, int) or common_k < 1:
        raise UsageError(f"--common-k must be an integer >= 1, got {common_k!r}")
    if common_out is not None and format_of(Path(common_out).name) != "jsonl":
        raise UsageError(
            f"{common_out}: --common-out writes JSONL (one n-gram per line, which --ignore-from "
            "reads): give a .jsonl path (optionally .gz, .bz2, .xz or .zst)"
        )


def _given_paths(controls: Any, sources: Mapping[str, Any]) -> list[Path]:
    """The paths given as controls or sources (outputs must not land on or inside them)."""
    out: list[Path] = []
    for value in [controls, *sources.values()] if isinstance(sources, Mapping) else [controls]:
        if isinstance(value, (str, Path)) or (
            isinstance(value, (list, tuple)) and all(isinstance(v, Path) for v in value)
        ):
            out.extend(classify(value, what="input").paths)
    return out
