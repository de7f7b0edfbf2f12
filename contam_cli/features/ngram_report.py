"""The exact n-gram detector's report: accumulated matches + the flag policy -> Report."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli._version import __version__
from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.options import ScanOptions
from contam_cli.features.eval_refs import EvalRefs
from contam_cli.io.model import Record
from contam_cli.policy import FlagPolicy
from contam_cli.report import NGRAM_METHODS, ExampleTable, NgramColumns, Report, SourceResult
from contam_cli.report.columns import Fingerprints
from contam_cli.report.values import Reason
from contam_cli.stats import zscores

__all__ = ["IndexCounts", "ngram_report"]


@dataclass(frozen=True)
class IndexCounts:
    """All the report needs of the eval index and the matches' n-grams: per-example counts.

    Taken before the report is built, they let the index go first (its arrays are most of a
    large scan's memory: 1.3 GB for 1,000,000 examples).
    """

    n_tokens: np.ndarray
    total_ngrams: np.ndarray
    ignored_ngrams: np.ndarray
    scorable: np.ndarray
    digests: list[bytes]
    distinct_ngrams: int
    matched: np.ndarray
    """Distinct matched n-grams per example, all sources together."""
    per_source: np.ndarray
    """Distinct matched n-grams per (source, example)."""

    @classmethod
    def of(cls, index: EvalIndex, acc: Accumulator) -> IndexCounts:
        per_source = acc.matched_counts(index)
        matched = per_source[0] if acc.n_sources == 1 else acc.matched_any(index)
        return cls(
            n_tokens=index.n_tokens,
            total_ngrams=index.total_ngrams,
            ignored_ngrams=index.ignored_ngrams,
            scorable=np.asarray(index.scorable, dtype=bool),
            digests=index.digests,
            distinct_ngrams=len(index.grams),
            matched=matched,
            per_source=per_source,
        )

    @property
    def n_examples(self) -> int:
        return len(self.n_tokens)


def ngram_report(
    records: Sequence[Record],
    index: EvalIndex | IndexCounts,
    acc: Accumulator,
    policy: FlagPolicy,
    opts: ScanOptions,
    inputs: dict[str, Any],
    config: dict[str, Any],
    command: str = "scan",
) -> Report:
    """Combine the accumulated matches with the flag policy into the report (`index`: the eval
    index scanned, or its :class:`IndexCounts`)."""
    counts = index if isinstance(index, IndexCounts) else IndexCounts.of(index, acc)
    n = counts.n_examples
    if len(records) != n:
        raise ValueError(f"{len(records)} records for {n} indexed examples")
    total = counts.total_ngrams
    scorable = counts.scorable & (total > 0)
    matched = counts.matched
    with np.errstate(invalid="ignore", divide="ignore"):
        overlap = np.where(scorable, matched / np.maximum(total, 1), 0.0)
    run = acc.best_len.max(axis=0) if acc.n_sources else np.zeros(n, np.int64)
    z = np.zeros(n)
    z[scorable] = zscores(overlap[scorable])
    z = _round6(z, scorable)
    reasons, sparse = _details(counts, acc, policy, overlap, run, z, scorable)
    refs = records if isinstance(records, EvalRefs) else None
    table = ExampleTable(
        ids=refs.ids if refs else [r.id for r in records],
        eval_paths=refs.eval_paths() if refs else [r.locator.path for r in records],
        eval_lines=refs.eval_lines() if refs else [r.locator.line for r in records],
        fingerprints=Fingerprints(counts.digests),
        methods=NGRAM_METHODS,
        scores={
            "longest_run": np.where(scorable, run, np.nan),
            "overlap_fraction": np.where(scorable, overlap, np.nan),
        },
        reasons=reasons,
        ngram=NgramColumns.build(
            scorable=scorable,
            n_tokens=counts.n_tokens,
            total_ngrams=total,
            matched_ngrams=matched,
            ignored_ngrams=counts.ignored_ngrams,
            zscore=z,
            **sparse,
        ),
    )
    stats = {
        "scorable": int(scorable.sum()),
        "overlap_mean": float(overlap[scorable].mean()) if scorable.any() else None,
        "overlap_std": float(overlap[scorable].std()) if scorable.any() else None,
        "eval_ngrams_distinct": counts.distinct_ngrams,
        "corpus_documents": int(acc.documents.sum()),
        "corpus_text_bytes": int(acc.text_bytes.sum()),
    }
    return Report(
        examples=table,
        config={**config, "policy": policy.describe()},
        inputs=inputs,
        command=command,
        tool_version=__version__,
        redact=opts.redact,
        stats=stats,
    )


def _details(
    counts: IndexCounts,
    acc: Accumulator,
    policy: FlagPolicy,
    overlap: np.ndarray,
    run: np.ndarray,
    z: np.ndarray,
    scorable: np.ndarray,
) -> tuple[dict[int, tuple[Reason, ...]], dict[str, dict[int, Any]]]:
    """Reasons of every example, and per-source results, best source and evidence of those that
    match something.

    Only the examples with a match in some source (usually few) are looked at one by one; the
    flag rules run once per distinct (overlap, run, z) of the others, which mostly share one.
    """
    names = acc.source_names
    total = counts.total_ngrams
    detail = np.zeros(0, dtype=np.int64)
    if names:
        per_src_matched = counts.per_source
        detail = np.flatnonzero((per_src_matched > 0).any(axis=0) | (run > 0))
        best = np.argmax(acc.best_len, axis=0)
    reasons: dict[int, tuple[Reason, ...]] = {}
    best_source: dict[int, str] = {}
    per_source: dict[int, dict[str, SourceResult]] = {}
    evidence = {}
    if len(detail):
        cols = zip(
            detail.tolist(),
            total[detail].tolist(),
            overlap[detail].tolist(),
            run[detail].tolist(),
            z[detail].tolist(),
            scorable[detail].tolist(),
            best[detail].tolist(),
            per_src_matched[:, detail].T.tolist(),
            acc.best_len[:, detail].T.tolist(),
        )
        for e, tot, ov, rn, ze, scor, b, src_matched, src_run in cols:
            ps = {
                names[s]: SourceResult(m, m / tot, src_run[s])
                for s, m in enumerate(src_matched)
                if m > 0
            }
            per_source[e] = ps
            if rn > 0:
                best_source[e] = names[b]
                ev = acc.evidence.get((b, e))
                if ev is not None:
                    evidence[e] = ev
            if scor:
                by_source = {k: (v.overlap_fraction, v.longest_run) for k, v in ps.items()}
                reasons[e] = tuple(policy.reasons(overlap=ov, run=rn, z=ze, per_source=by_source))
    plain = scorable.copy()
    plain[detail] = False
    for members, found in plain_reasons(policy, np.flatnonzero(plain), overlap, run, z):
        reasons.update(dict.fromkeys(members, found))
    sparse: dict[str, dict[int, Any]] = {
        "best_source": best_source,
        "per_source": per_source,
        "evidence": evidence,
    }
    return reasons, sparse


def plain_reasons(
    policy: FlagPolicy, plain: np.ndarray, overlap: np.ndarray, run: np.ndarray, z: np.ndarray
) -> Iterator[tuple[list[int], tuple[Reason, ...]]]:
    """For the scorable examples `plain`, which match in no source: groups of examples and the
    reasons (when any) they share, from one policy call per distinct (overlap, run, z)."""
    # NOTE: grouped by bit pattern, so each group's values are exactly those of its examples.
    keys = (z[plain].view(np.int64), run[plain].astype(np.int64), overlap[plain].view(np.int64))
    order, bounds = _groups(keys)
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        e = int(plain[order[lo]])
        found = policy.reasons(
            overlap=float(overlap[e]), run=int(run[e]), z=float(z[e]), per_source={}
        )
        if found:
            yield plain[order[lo:hi]].tolist(), tuple(found)


def round6(z: np.ndarray, scorable: np.ndarray) -> np.ndarray:
    """``round(z, 6)`` where scorable (Python's correctly rounded decimal rounding, which numpy's
    does not match), computed once per distinct value; 0 elsewhere."""
    values = z[scorable]
    order, bounds = _groups((values.view(np.int64),))
    firsts = values[order[bounds[:-1]]].tolist()
    rounded = np.array([round(v, 6) for v in firsts], dtype=np.float64)
    grouped = np.empty(len(values))
    grouped[order] = np.repeat(rounded, np.diff(bounds))
    out = np.zeros(len(z))
    out[scorable] = grouped
    return out


_round6 = round6


def _groups(keys: tuple[np.ndarray, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Rows with equal `keys` (parallel int arrays) as groups: ``order[bounds[g]:bounds[g+1]]``
    are the rows of group g."""
    order = np.lexsort(keys)
    new = np.zeros(len(order), dtype=bool)
    new[:1] = True
    for k in keys:
        sk = k[order]
        new[1:] |= sk[1:] != sk[:-1]
    return order, np.append(np.flatnonzero(new), len(order))
