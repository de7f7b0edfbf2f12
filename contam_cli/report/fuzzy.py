"""The fuzzy (reworded-leak) detector's part of a report: its method, and its details as columns.

Dense columns hold what every example has (whether the detector could score it, the aligned
fraction and identity of its best alignment); the rest (each source's score, the evidence with
its matched pairs) is kept only for the examples where something aligned, usually few.

In the JSON (``details.fuzzy``) the matched pairs are parallel arrays, one entry per matched
token: ``eval_token``, ``doc_token``, ``eval_char_start``, ``eval_char_end``,
``doc_char_start``, ``doc_char_end``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.report.columns import column, equal_columns, sparse
from contam_cli.report.values import FuzzyMatch, FuzzyResult, Method

__all__ = [
    "FUZZY_METHOD",
    "PAIR_KEYS",
    "FuzzyColumns",
    "fuzzy_match_dict",
    "fuzzy_match_from_dict",
]

FUZZY_METHOD = Method(
    "fuzzy",
    "fuzzy",
    "higher",
    description="rarity-weighted share of the example aligned to one corpus passage, "
    "substitutions, insertions, deletions and swaps tolerated (1.0: verbatim)",
)

#: The pairs' parallel arrays in the JSON, in the order of a pair's values.
PAIR_KEYS = (
    "eval_token",
    "doc_token",
    "eval_char_start",
    "eval_char_end",
    "doc_char_start",
    "doc_char_end",
)


@dataclass(frozen=True, eq=False)
class FuzzyColumns:
    """Per example (all columns of one length): what the fuzzy detector measured besides its
    score, with the sparse details keyed by example index."""

    scorable: np.ndarray
    aligned_fraction: np.ndarray
    """float64; NaN where unscorable, 0 where nothing aligned."""
    identity: np.ndarray
    per_source: Mapping[int, Mapping[str, float]]
    evidence: Mapping[int, FuzzyMatch]

    @classmethod
    def build(
        cls,
        *,
        scorable: Any,
        aligned_fraction: Any,
        identity: Any,
        per_source: Mapping[int, Mapping[str, float]] | None = None,
        evidence: Mapping[int, FuzzyMatch | None] | None = None,
    ) -> FuzzyColumns:
        """Columns from array-likes of one length (NaN where unscorable is enforced), and sparse
        details (empty values dropped)."""
        n = len(scorable)
        ok = column(scorable, np.bool_, n)
        nan = np.where(ok, 0.0, np.nan)
        return cls(
            scorable=ok,
            aligned_fraction=column(np.asarray(aligned_fraction, np.float64) + nan, np.float64, n),
            identity=column(np.asarray(identity, np.float64) + nan, np.float64, n),
            per_source={e: dict(v) for e, v in sparse(per_source, n).items()},
            evidence=sparse(evidence, n),
        )

    def __len__(self) -> int:
        return len(self.scorable)

    def detailed(self) -> set[int]:
        """The examples with sparse details."""
        return {*self.per_source, *self.evidence}

    def result(self, e: int, score: float | None) -> FuzzyResult:
        """Example `e`'s result, given its score."""
        scorable = bool(self.scorable[e])
        return FuzzyResult(
            scorable=scorable,
            score=score if scorable else None,
            aligned_fraction=float(self.aligned_fraction[e]) if scorable else None,
            identity=float(self.identity[e]) if scorable else None,
            per_source=dict(self.per_source.get(e, {})),
            evidence=self.evidence.get(e),
        )

    def plain_columns(self, sel: slice | np.ndarray) -> list[list[Any]]:
        """The values :meth:`plain_dict` takes, as columns, for rows `sel`."""
        scorable = self.scorable[sel].tolist()
        out = [scorable]
        for col in (self.aligned_fraction, self.identity):
            values: list[Any] = col[sel].tolist()
            if not all(scorable):
                values = [v if s else None for v, s in zip(values, scorable)]
            out.append(values)
        return out

    @staticmethod
    def plain_dict(scorable: bool, aligned: Any, identity: Any) -> dict[str, Any]:
        """The JSON of an example without sparse details, from its dense values."""
        return {
            "scorable": scorable,
            "aligned_fraction": aligned,
            "identity": identity,
            "best_source": None,
            "per_source": {},
            "evidence": None,
        }

    def to_dict(self, e: int, redact: bool, values: Sequence[Any] | None = None) -> dict[str, Any]:
        """Example `e`'s JSON (`values`: its row of :meth:`plain_columns`, when known)."""
        if values is None:
            values = [col[0] for col in self.plain_columns(np.array([e]))]
        d = self.plain_dict(*values)
        ev = self.evidence.get(e)
        d["best_source"] = None if ev is None else ev.source
        d["per_source"] = dict(self.per_source.get(e, {}))
        d["evidence"] = None if ev is None else fuzzy_match_dict(ev, redact)
        return d

    @classmethod
    def from_dicts(cls, dicts: Sequence[Mapping[str, Any] | None]) -> FuzzyColumns:
        """Columns from the examples' JSON (the inverse of :meth:`to_dict`); None: an example
        without fuzzy details (read as unscorable)."""
        per_source, evidence = {}, {}
        for e, d in enumerate(dicts):
            if d and d.get("per_source"):
                per_source[e] = {str(k): float(v) for k, v in d["per_source"].items()}
            if d and d.get("evidence") is not None:
                evidence[e] = fuzzy_match_from_dict(d["evidence"])

        def num(d: Mapping[str, Any] | None, key: str) -> float:
            return np.nan if not d or d.get(key) is None else float(d[key])

        return cls.build(
            scorable=[bool(d and d["scorable"]) for d in dicts],
            aligned_fraction=[num(d, "aligned_fraction") for d in dicts],
            identity=[num(d, "identity") for d in dicts],
            per_source=per_source,
            evidence=evidence,
        )

    @classmethod
    def from_results(cls, results: Sequence[FuzzyResult | None]) -> FuzzyColumns:
        """Columns of hand-made results (None: not scored by the fuzzy detector)."""

        def num(v: float | None) -> float:
            return np.nan if v is None else v

        return cls.build(
            scorable=[r is not None and r.scorable for r in results],
            aligned_fraction=[num(r.aligned_fraction if r else None) for r in results],
            identity=[num(r.identity if r else None) for r in results],
            per_source={e: r.per_source for e, r in enumerate(results) if r is not None},
            evidence={e: r.evidence for e, r in enumerate(results) if r is not None},
        )

    def take(self, idx: np.ndarray) -> FuzzyColumns:
        """The rows `idx`, renumbered from 0."""
        at = idx.tolist()

        def pick(m: Mapping[int, Any]) -> dict[int, Any]:
            return {new: m[old] for new, old in enumerate(at) if old in m}

        return FuzzyColumns.build(
            scorable=self.scorable[idx],
            aligned_fraction=self.aligned_fraction[idx],
            identity=self.identity[idx],
            per_source=pick(self.per_source),
            evidence=pick(self.evidence),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FuzzyColumns):
            return NotImplemented
        return (
            np.array_equal(self.scorable, other.scorable)
            and equal_columns(self.aligned_fraction, other.aligned_fraction)
            and equal_columns(self.identity, other.identity)
            and self.per_source == other.per_source
            and self.evidence == other.evidence
        )

    __hash__ = None  # type: ignore[assignment]


def fuzzy_match_dict(ev: FuzzyMatch, redact: bool) -> dict[str, Any]:
    """The JSON of one fuzzy evidence (its text left out when `redact`)."""
    columns = list(zip(*ev.pairs)) if ev.pairs else [()] * len(PAIR_KEYS)
    return {
        "source": ev.source,
        "path": ev.path,
        "line": ev.line,
        "record": ev.record,
        "doc_id": ev.doc_id,
        "char_start": ev.char_start,
        "char_end": ev.char_end,
        "doc_token": ev.doc_token,
        "doc_token_end": ev.doc_token_end,
        "eval_token": ev.eval_token,
        "eval_token_end": ev.eval_token_end,
        "eval_char_start": ev.eval_char_start,
        "eval_char_end": ev.eval_char_end,
        "length": ev.length,
        "text": None if redact else ev.text,
        "pairs": {k: list(v) for k, v in zip(PAIR_KEYS, columns)},
    }


def fuzzy_match_from_dict(d: Mapping[str, Any]) -> FuzzyMatch:
    cols = [d["pairs"][k] for k in PAIR_KEYS]
    if len({len(c) for c in cols}) != 1:
        raise ValueError("fuzzy evidence: pairs arrays of different lengths")
    return FuzzyMatch(
        source=d["source"],
        path=d["path"],
        line=d["line"],
        record=d["record"],
        doc_id=d["doc_id"],
        char_start=d["char_start"],
        char_end=d["char_end"],
        doc_token=d["doc_token"],
        doc_token_end=d["doc_token_end"],
        eval_token=d["eval_token"],
        eval_token_end=d["eval_token_end"],
        eval_char_start=d["eval_char_start"],
        eval_char_end=d["eval_char_end"],
        text=d["text"],
        pairs=tuple(tuple(int(v) for v in p) for p in zip(*cols)),  # type: ignore[misc]
    )
