"""The exact n-gram detector's part of a report: its methods, and its details as columns.

Dense columns hold what every example has (token and n-gram counts, the z-score); the rest (best
source, per-source results, evidence) is kept only for the examples that matched something.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.engine.evidence import Evidence
from contam_cli.report.columns import column, equal_columns, sparse
from contam_cli.report.values import Method, NgramResult, SourceResult

__all__ = ["NGRAM_METHODS", "NgramColumns", "evidence_dict", "evidence_from_dict"]

#: The n-gram detector's scores, most decisive first (reports rank examples in this order).
NGRAM_METHODS = (
    Method(
        "longest_run",
        "ngram",
        "higher",
        integer=True,
        description="longest span of the example, in tokens, found verbatim in one document",
    ),
    Method(
        "overlap_fraction",
        "ngram",
        "higher",
        description="matched distinct n-grams / distinct n-grams of the example",
    ),
)


@dataclass(frozen=True, eq=False)
class NgramColumns:
    """Per example (all columns of one length): what the n-gram detector measured besides its
    scores, with the sparse details keyed by example index."""

    scorable: np.ndarray
    n_tokens: np.ndarray
    total_ngrams: np.ndarray
    matched_ngrams: np.ndarray
    ignored_ngrams: np.ndarray
    zscore: np.ndarray
    """Where scorable, the overlap z-score (rounded to 6 places); 0 elsewhere."""
    best_source: Mapping[int, str]
    per_source: Mapping[int, Mapping[str, SourceResult]]
    evidence: Mapping[int, Evidence]

    @classmethod
    def build(
        cls,
        *,
        scorable: Any,
        n_tokens: Any,
        total_ngrams: Any,
        matched_ngrams: Any,
        zscore: Any,
        ignored_ngrams: Any = None,
        best_source: Mapping[int, str | None] | None = None,
        per_source: Mapping[int, Mapping[str, SourceResult]] | None = None,
        evidence: Mapping[int, Evidence | None] | None = None,
    ) -> NgramColumns:
        """Columns from array-likes of one length, and sparse details (empty values dropped)."""
        n = len(scorable)
        ignored = np.zeros(n, np.int64) if ignored_ngrams is None else ignored_ngrams
        return cls(
            scorable=column(scorable, np.bool_, n),
            n_tokens=column(n_tokens, np.int64, n),
            total_ngrams=column(total_ngrams, np.int64, n),
            matched_ngrams=column(matched_ngrams, np.int64, n),
            ignored_ngrams=column(ignored, np.int64, n),
            zscore=column(zscore, np.float64, n),
            best_source=sparse(best_source, n),
            per_source={e: dict(v) for e, v in sparse(per_source, n).items()},
            evidence=sparse(evidence, n),
        )

    def __len__(self) -> int:
        return len(self.scorable)

    def detailed(self) -> set[int]:
        """The examples with sparse details."""
        return {*self.best_source, *self.per_source, *self.evidence}

    def result(self, e: int, overlap: float | None, run: int | None) -> NgramResult:
        """Example `e`'s result, given its scores."""
        scorable = bool(self.scorable[e])
        return NgramResult(
            scorable=scorable,
            n_tokens=int(self.n_tokens[e]),
            total_ngrams=int(self.total_ngrams[e]),
            matched_ngrams=int(self.matched_ngrams[e]),
            ignored_ngrams=int(self.ignored_ngrams[e]),
            overlap_fraction=overlap,
            longest_run=run,
            zscore=float(self.zscore[e]) if scorable else None,
            best_source=self.best_source.get(e),
            per_source=dict(self.per_source.get(e, {})),
            evidence=self.evidence.get(e),
        )

    def plain_columns(self, sel: slice | np.ndarray) -> list[list[Any]]:
        """The values :meth:`plain_dict` takes, as columns, for rows `sel`."""
        scorable = self.scorable[sel].tolist()
        zscore: list[Any] = self.zscore[sel].tolist()
        if not all(scorable):
            zscore = [z if s else None for z, s in zip(zscore, scorable)]
        return [
            scorable,
            self.n_tokens[sel].tolist(),
            self.total_ngrams[sel].tolist(),
            self.matched_ngrams[sel].tolist(),
            self.ignored_ngrams[sel].tolist(),
            zscore,
        ]

    @staticmethod
    def plain_dict(
        scorable: bool, n_tokens: int, total: int, matched: int, ignored: int, zscore: Any
    ) -> dict[str, Any]:
        """The JSON of an example without sparse details, from its dense values."""
        return {
            "scorable": scorable,
            "n_tokens": n_tokens,
            "total_ngrams": total,
            "matched_ngrams": matched,
            "ignored_ngrams": ignored,
            "zscore": zscore,
            "best_source": None,
            "matched_sources": [],
            "per_source": {},
            "evidence": None,
        }

    def to_dict(self, e: int, redact: bool, values: Sequence[Any] | None = None) -> dict[str, Any]:
        """Example `e`'s JSON (`values`: its row of :meth:`plain_columns`, when known)."""
        if values is None:
            values = [col[0] for col in self.plain_columns(np.array([e]))]
        d = self.plain_dict(*values)
        per_source = self.per_source.get(e, {})
        ev = self.evidence.get(e)
        d["best_source"] = self.best_source.get(e)
        d["matched_sources"] = list(per_source)
        d["per_source"] = {
            k: {
                "matched_ngrams": v.matched_ngrams,
                "overlap_fraction": v.overlap_fraction,
                "longest_run": v.longest_run,
            }
            for k, v in per_source.items()
        }
        d["evidence"] = None if ev is None else evidence_dict(ev, redact)
        return d

    @classmethod
    def from_dicts(cls, dicts: Sequence[Mapping[str, Any]]) -> NgramColumns:
        """Columns from the examples' JSON (the inverse of :meth:`to_dict`)."""
        best, per_source, evidence = {}, {}, {}
        for e, d in enumerate(dicts):
            if d.get("best_source") is not None:
                best[e] = d["best_source"]
            if d.get("per_source"):
                per_source[e] = {
                    k: SourceResult(v["matched_ngrams"], v["overlap_fraction"], v["longest_run"])
                    for k, v in d["per_source"].items()
                }
            if d.get("evidence") is not None:
                evidence[e] = evidence_from_dict(d["evidence"])
        return cls.build(
            scorable=[d["scorable"] for d in dicts],
            n_tokens=[d["n_tokens"] for d in dicts],
            total_ngrams=[d["total_ngrams"] for d in dicts],
            matched_ngrams=[d["matched_ngrams"] for d in dicts],
            ignored_ngrams=[d.get("ignored_ngrams", 0) for d in dicts],
            zscore=[d["zscore"] if d["zscore"] is not None else 0.0 for d in dicts],
            best_source=best,
            per_source=per_source,
            evidence=evidence,
        )

    def take(self, idx: np.ndarray) -> NgramColumns:
        """The rows `idx`, renumbered from 0."""
        at = idx.tolist()

        def pick(m: Mapping[int, Any]) -> dict[int, Any]:
            return {new: m[old] for new, old in enumerate(at) if old in m}

        return NgramColumns.build(
            scorable=self.scorable[idx],
            n_tokens=self.n_tokens[idx],
            total_ngrams=self.total_ngrams[idx],
            matched_ngrams=self.matched_ngrams[idx],
            ignored_ngrams=self.ignored_ngrams[idx],
            zscore=self.zscore[idx],
            best_source=pick(self.best_source),
            per_source=pick(self.per_source),
            evidence=pick(self.evidence),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NgramColumns):
            return NotImplemented
        dense = ("scorable", "n_tokens", "total_ngrams", "matched_ngrams", "ignored_ngrams")
        return (
            all(np.array_equal(getattr(self, k), getattr(other, k)) for k in dense)
            and equal_columns(
                np.where(self.scorable, self.zscore, 0.0),
                np.where(other.scorable, other.zscore, 0.0),
            )
            and self.best_source == other.best_source
            and self.per_source == other.per_source
            and self.evidence == other.evidence
        )

    __hash__ = None  # type: ignore[assignment]


def evidence_dict(ev: Evidence, redact: bool) -> dict[str, Any]:
    """The JSON of one evidence (its text left out when `redact`)."""
    return {
        "source": ev.source,
        "path": ev.path,
        "line": ev.line,
        "record": ev.record,
        "doc_id": ev.doc_id,
        "char_start": ev.char_start,
        "char_end": ev.char_end,
        "doc_token": ev.doc_token,
        "eval_token": ev.eval_token,
        "length": ev.length,
        "text": None if redact else ev.text,
    }


def evidence_from_dict(d: Mapping[str, Any]) -> Evidence:
    return Evidence(
        source=d["source"],
        path=d["path"],
        line=d["line"],
        record=d["record"],
        doc_id=d["doc_id"],
        byte_offset=None,
        char_start=d["char_start"],
        char_end=d["char_end"],
        doc_token=d["doc_token"],
        eval_token=d["eval_token"],
        length=d["length"],
        text=d["text"],
    )
