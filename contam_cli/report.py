"""The scan report: a plain value holding every per-example result, the config and the inputs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from contam_cli.engine import Evidence
from contam_cli.policy import Reason

__all__ = ["SCHEMA", "SourceResult", "ExampleResult", "Report", "fingerprint"]

#: Version of the JSON report layout; bumped on any incompatible change.
SCHEMA = "contam.scan/1"


@dataclass(frozen=True, slots=True)
class SourceResult:
    """One example's overlap with one corpus source."""

    matched_ngrams: int
    overlap_fraction: float
    longest_run: int


@dataclass(frozen=True, slots=True)
class ExampleResult:
    """Everything measured about one eval example."""

    id: str
    eval_path: str
    eval_line: int | None
    n_tokens: int
    total_ngrams: int
    """Distinct n-grams of the example (0 when unscorable)."""
    matched_ngrams: int
    overlap_fraction: float | None
    """matched / total distinct n-grams; None when the example is unscorable."""
    longest_run: int | None
    """Longest span, in tokens, found verbatim inside one corpus document; None when unscorable."""
    zscore: float | None
    flagged: bool
    reasons: tuple[Reason, ...]
    best_source: str | None
    matched_sources: tuple[str, ...]
    per_source: dict[str, SourceResult]
    evidence: Evidence | None
    fingerprint: str
    """Content hash of (normalized example text, best source): stable across reordering."""

    @property
    def scorable(self) -> bool:
        return self.overlap_fraction is not None

    def to_dict(self, redact: bool = False) -> dict[str, Any]:
        ev = self.evidence
        return {
            "id": self.id,
            "eval": {"path": self.eval_path, "line": self.eval_line},
            "flagged": self.flagged,
            "reasons": [r.to_dict() for r in self.reasons],
            "scorable": self.scorable,
            "n_tokens": self.n_tokens,
            "total_ngrams": self.total_ngrams,
            "matched_ngrams": self.matched_ngrams,
            "overlap_fraction": self.overlap_fraction,
            "longest_run": self.longest_run,
            "zscore": self.zscore,
            "best_source": self.best_source,
            "matched_sources": list(self.matched_sources),
            "per_source": {
                k: {
                    "matched_ngrams": v.matched_ngrams,
                    "overlap_fraction": v.overlap_fraction,
                    "longest_run": v.longest_run,
                }
                for k, v in self.per_source.items()
            },
            "evidence": None if ev is None else _evidence_dict(ev, redact),
            "fingerprint": self.fingerprint,
        }


def _evidence_dict(ev: Evidence, redact: bool) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Report:
    """The result of a scan; renderers turn it into text, the CLI turns it into an exit code."""

    examples: tuple[ExampleResult, ...]
    config: dict[str, Any]
    inputs: dict[str, Any]
    tool_version: str
    redact: bool = False
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def flagged(self) -> tuple[ExampleResult, ...]:
        return tuple(e for e in self.examples if e.flagged)

    @property
    def unscorable(self) -> tuple[ExampleResult, ...]:
        return tuple(e for e in self.examples if not e.scorable)

    @property
    def contaminated(self) -> bool:
        return any(e.flagged for e in self.examples)

    def summary(self) -> dict[str, int]:
        n_flag = len(self.flagged)
        n_uns = len(self.unscorable)
        return {
            "examples": len(self.examples),
            "flagged": n_flag,
            "clean": len(self.examples) - n_flag - n_uns,
            "unscorable": n_uns,
        }

    def summary_line(self) -> str:
        s = self.summary()
        return (
            f"{s['examples']} examples: {s['flagged']} flagged, {s['clean']} clean, "
            f"{s['unscorable']} unscorable"
        )

    def ranked(self) -> list[ExampleResult]:
        """Scorable examples, most suspicious first (flagged, run, overlap), then input order."""
        scorable = [e for e in self.examples if e.scorable]
        return sorted(
            scorable,
            key=lambda e: (not e.flagged, -(e.longest_run or 0), -(e.overlap_fraction or 0.0)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "tool": {"name": "contam", "version": self.tool_version},
            "config": self.config,
            "inputs": self.inputs,
            "summary": {**self.summary(), **self.stats},
            "examples": [e.to_dict(self.redact) for e in self.examples],
        }


def fingerprint(text_digest: bytes, source: str | None) -> str:
    """Stable id of a finding: the normalized example text (as the digest of its tokens) and the
    source; nothing positional, so it survives reordering and reformatting."""
    h = hashlib.sha256(b"contam-finding/1\0")
    h.update(text_digest)
    h.update(b"\0")
    h.update((source or "").encode("utf-8"))
    return h.hexdigest()[:32]
