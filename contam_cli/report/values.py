"""The values a report is made of: methods, reasons, and one example's result.

These are plain frozen values. A report holds every example as columns (:mod:`.table`); an
:class:`ExampleResult` is one example read out of them, with the n-gram detector's details as an
:class:`NgramResult`, the fuzzy detector's as a :class:`FuzzyResult`, and every other
detector's as plain JSON values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from contam_cli.engine.evidence import Evidence

__all__ = [
    "CONTROL_SUFFIX",
    "Direction",
    "ExampleResult",
    "FuzzyMatch",
    "FuzzyResult",
    "Method",
    "NgramResult",
    "Reason",
    "SourceResult",
]

Direction = Literal["higher", "lower"]
"""Which way a method's score is more suspicious (perplexity: lower)."""
CONTROL_SUFFIX = ":control_pct"
"""A probe method ``X`` run with controls adds the method ``X:control_pct``: X's percentile
among the controls, a monotone transform of X."""


@dataclass(frozen=True, slots=True)
class Method:
    """A score a detector gives every example it can score (None where it cannot).

    >>> Method("perplexity", "probe", "lower").to_dict()["direction"]
    'lower'
    """

    name: str
    detector: str
    """The detector that computes it: ``ngram``, ``fuzzy``, ``probe``, ``input`` (a scores file),
    ``combined`` (``contam report``)."""
    direction: Direction = "higher"
    integer: bool = False
    """Its values are whole numbers (written as JSON integers)."""
    description: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"method {self.name!r}: direction must be 'higher' or 'lower'")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "detector": self.detector,
            "direction": self.direction,
            "integer": self.integer,
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class Reason:
    """One flag rule that fired for one example, named by the detector that owns it."""

    rule: str
    """``min-overlap``, ``min-run``, ``zscore``, ``source-run``, ``source-overlap`` (ngram);
    ``min-fuzzy``, ``source-fuzzy`` (fuzzy); ``combined-zscore`` (report)."""
    value: float
    threshold: float
    source: str | None = None
    detector: str = "ngram"

    def __str__(self) -> str:
        where = f" in {self.source}" if self.source else ""
        if self.rule in ("min-overlap", "source-overlap"):
            return f"overlap {self.value:.3f} >= {self.threshold:g}{where}"
        if self.rule in ("min-run", "source-run"):
            return f"run {int(self.value)} >= {int(self.threshold)}{where}"
        if self.rule == "zscore":
            return f"z {self.value:.2f} >= {self.threshold:g}"
        if self.rule == "min-fuzzy":  # NOTE: a global rule; its source is where the copy is
            return f"fuzzy {self.value:.3f} >= {self.threshold:g}"
        if self.rule == "source-fuzzy":
            return f"fuzzy {self.value:.3f} >= {self.threshold:g}{where}"
        return f"{self.rule} {self.value:.3g} >= {self.threshold:g}{where}"

    def to_dict(self) -> dict[str, object]:
        return {
            "detector": self.detector,
            "rule": self.rule,
            "value": self.value,
            "threshold": self.threshold,
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class SourceResult:
    """One example's overlap with one corpus source."""

    matched_ngrams: int
    overlap_fraction: float
    longest_run: int


@dataclass(frozen=True, slots=True)
class NgramResult:
    """What the exact n-gram detector measured of one example."""

    scorable: bool
    """At least one n-gram to judge (an example shorter than n is not, and never counts as
    clean)."""
    n_tokens: int
    total_ngrams: int
    """Distinct n-grams of the example that count (0 when unscorable; ignored ones excluded)."""
    matched_ngrams: int
    ignored_ngrams: int
    """Distinct n-grams left out as boilerplate (``--ignore-common``, ``--ignore-from``)."""
    overlap_fraction: float | None
    longest_run: int | None
    """Longest span, in tokens, found verbatim inside ONE corpus document; None when
    unscorable."""
    zscore: float | None
    best_source: str | None
    per_source: dict[str, SourceResult] = field(default_factory=dict)
    evidence: Evidence | None = None

    @property
    def matched_sources(self) -> tuple[str, ...]:
        return tuple(self.per_source)


Pair = tuple[int, int, int, int, int, int]
"""One matched token of a fuzzy alignment: (eval token, document token, eval character start,
eval character end, document character start, document character end)."""


@dataclass(frozen=True, slots=True)
class FuzzyMatch:
    """Where an example's best reworded copy sits in the corpus, and the words that matched.

    Character offsets are in the eval example's text (``eval_char_*``, and the pairs' eval side)
    and in the corpus document's text (``char_*``, the pairs' document side); -1 where that text
    could not be read again.
    """

    source: str
    path: str | None
    line: int | None
    """Line of the aligned span in a text file; of the record otherwise."""
    record: int | None
    doc_id: str | None
    char_start: int
    """The aligned span in the document's text: its first to its last matched token."""
    char_end: int
    doc_token: int
    doc_token_end: int
    """Token positions of the aligned span in the document (end: just past its last token)."""
    eval_token: int
    eval_token_end: int
    """Token positions of the first and just past the last matched eval token."""
    eval_char_start: int
    eval_char_end: int
    text: str | None
    """The aligned span of the document (None when redacted or not readable)."""
    pairs: tuple[Pair, ...]
    """Every matched token, in eval order (see :data:`Pair`)."""
    byte_offset: int | None = field(default=None, compare=False)
    """Start of the document's record in its file (not in the JSON: for ``clean --fuzzy``)."""

    @property
    def length(self) -> int:
        """Document tokens in the aligned span."""
        return self.doc_token_end - self.doc_token


@dataclass(frozen=True, slots=True)
class FuzzyResult:
    """What the fuzzy (reworded-leak) detector measured of one example."""

    scorable: bool
    """At least ``min_tokens`` tokens (an example shorter is unscorable, never clean)."""
    score: float | None
    """Alignment score / the example's total rarity weight (1.0: verbatim); None: unscorable."""
    aligned_fraction: float | None
    """Eval tokens matched / eval tokens."""
    identity: float | None
    """Matched tokens / alignment columns (matches, mismatches, gaps)."""
    per_source: dict[str, float] = field(default_factory=dict)
    """Each source's own best score, for the sources where something aligned."""
    evidence: FuzzyMatch | None = None

    @property
    def best_source(self) -> str | None:
        return None if self.evidence is None else self.evidence.source


@dataclass(frozen=True, slots=True)
class ExampleResult:
    """Everything a report says of one eval example."""

    id: str
    eval_path: str
    eval_line: int | None
    fingerprint: str
    """Content hash of the normalized example text: stable across reordering and reformatting
    (see :mod:`contam_cli.text.fingerprint`)."""
    scores: Mapping[str, float | None]
    """Per method of the report, its score (None: not scorable by that method)."""
    reasons: tuple[Reason, ...] = ()
    ngram: NgramResult | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    """Other detectors' details (JSON values), by detector; absent when there are none."""
    text: str | None = None
    """The example's text, kept for the examples a reviewer will look at (those that matched
    something) so the leaked span can be shown in place; None otherwise and when redacted."""
    fuzzy: FuzzyResult | None = None
    """The fuzzy detector's details (None when it did not run)."""

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)

    @property
    def scorable(self) -> bool:
        """Whether any method scored it."""
        return any(v is not None for v in self.scores.values())

    # Shortcuts to the n-gram detector's results (None / empty without it).
    @property
    def overlap_fraction(self) -> float | None:
        return None if self.ngram is None else self.ngram.overlap_fraction

    @property
    def longest_run(self) -> int | None:
        return None if self.ngram is None else self.ngram.longest_run

    @property
    def zscore(self) -> float | None:
        return None if self.ngram is None else self.ngram.zscore

    @property
    def n_tokens(self) -> int | None:
        return None if self.ngram is None else self.ngram.n_tokens

    @property
    def total_ngrams(self) -> int | None:
        return None if self.ngram is None else self.ngram.total_ngrams

    @property
    def matched_ngrams(self) -> int | None:
        return None if self.ngram is None else self.ngram.matched_ngrams

    @property
    def best_source(self) -> str | None:
        return None if self.ngram is None else self.ngram.best_source

    @property
    def per_source(self) -> dict[str, SourceResult]:
        return {} if self.ngram is None else self.ngram.per_source

    @property
    def matched_sources(self) -> tuple[str, ...]:
        return () if self.ngram is None else self.ngram.matched_sources

    @property
    def evidence(self) -> Evidence | None:
        return None if self.ngram is None else self.ngram.evidence
