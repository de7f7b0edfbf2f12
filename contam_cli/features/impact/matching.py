"""Results records to report examples: by id, or by the fingerprint of the example's text.

Nothing is dropped silently: results records without an example and examples without a result
are both listed in the :class:`~contam_cli.features.impact.values.Matching`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from contam_cli.errors import UsageError
from contam_cli.features.combine import normalization_disagreement
from contam_cli.features.impact.results import Outcomes
from contam_cli.features.impact.values import MatchBy, Matching
from contam_cli.report import Report
from contam_cli.text import NormConfig, Tokenizer
from contam_cli.text.fingerprint import content_digests, fingerprints

__all__ = ["Pairs", "pair", "report_norm", "text_fingerprints"]

_BATCH = 4096
"""Texts tokenized at once when fingerprinting."""


@dataclass(frozen=True)
class Pairs:
    """Matched (report example, results record) pairs, in report order, and the rest."""

    examples: np.ndarray
    """int64 indices into the report's examples."""
    rows: np.ndarray
    """int64 indices into the outcomes, one per example above."""
    matching: Matching


def pair(report: Report, outcomes: Outcomes, by: MatchBy) -> Pairs:
    """Match ``outcomes`` to ``report``; UsageError when not one record matches."""
    table = report.examples
    if by == "id":
        keys: Sequence[str | None] = outcomes.ids
        targets: Sequence[str] = table.ids
        dupes = len(set(targets)) != len(targets)
        if dupes:
            raise UsageError("the report holds an id twice: match by fingerprint instead")
        if outcomes.id_source == "doc_id" and _line_numbers(report):
            raise UsageError(_shifted(outcomes))
    else:
        assert outcomes.texts is not None
        mixed = normalization_disagreement(report.config)
        if mixed is not None:
            # NOTE: hashing the results with any one of them mis-matches the other inputs'.
            raise UsageError(
                f"--match fingerprint: the combined report's inputs disagree on normalization "
                f"({mixed}), so its fingerprints are of several kinds: use --match id, or run "
                "impact on each input's report"
            )
        keys = text_fingerprints(outcomes.texts, report_norm(report.config))
        targets = table.fingerprints
    waiting: dict[str, deque[int]] = {}
    for e, key in enumerate(targets):
        waiting.setdefault(key, deque()).append(e)
    # NOTE: several examples may share a fingerprint (the same text twice); the k-th record with
    # that text takes the k-th such example, so counts stay right both ways.
    found = np.full(len(table), -1, dtype=np.int64)
    unmatched = []
    for i, wanted in enumerate(keys):
        queue = waiting.get(wanted) if wanted is not None else None
        if queue:
            found[queue.popleft()] = i
        else:
            unmatched.append(outcomes.label(i))
    examples = np.flatnonzero(found >= 0)
    matching = Matching(
        by=by,
        report_examples=len(table),
        results_records=len(outcomes),
        matched=int(examples.size),
        results_only=tuple(unmatched),
        report_only=tuple(table.ids[e] for e in np.flatnonzero(found < 0).tolist()),
    )
    if examples.size == 0:
        raise UsageError(_no_overlap(report, outcomes, by))
    return Pairs(examples, found[examples], matching)


def _line_numbers(report: Report) -> bool:
    """Whether every id of the report is its example's line number (an eval file without ids)."""
    table = report.examples
    return all(str(line) == found for found, line in zip(table.ids, table.eval_lines))


def _shifted(outcomes: Outcomes) -> str:
    where = outcomes.path or "the results"
    return (
        f"the report's ids are the line numbers of its eval file (from 1), but the doc_id of "
        f"{where} is lm-eval's position in the split (from 0), so matching them would pair each "
        "result with the next example: use --match fingerprint, or scan an eval file whose "
        "records carry their 0-based position as an id (--id-field doc_id if they really agree)"
    )


def _no_overlap(report: Report, outcomes: Outcomes, by: MatchBy) -> str:
    where = outcomes.path or "the results"
    if by == "fingerprint":
        return (
            f"no record of {where} has the text of a report example (its 'doc', or the record "
            "itself, with --field as given to the scan)"
        )
    ours = ", ".join(repr(i) for i in report.examples.ids[:3])
    theirs = ", ".join(repr(outcomes.label(i)) for i in range(min(3, len(outcomes))))
    return (
        f"no id of {where} is in the report (results ids {theirs}; report ids {ours}): "
        "use --id-field, or --match fingerprint"
    )


def report_norm(config: Mapping[str, Any]) -> NormConfig:
    """The normalization a report records (the default when it records none).

    >>> report_norm({"normalization": {"unicode": "none", "casefold": True}})
    NormConfig(nfkc=False, casefold=True)
    """
    norm = config.get("normalization")
    if not isinstance(norm, Mapping):
        return NormConfig()
    nfkc = norm.get("unicode", "NFKC") == "NFKC"
    return NormConfig(nfkc=nfkc, casefold=bool(norm.get("casefold", True)))


def text_fingerprints(texts: Sequence[str], norm: NormConfig) -> list[str]:
    """``[text_fingerprint(t, norm) for t in texts]``, tokenized a batch at a time."""
    tokenizer = Tokenizer(norm)
    out: list[str] = []
    for start in range(0, len(texts), _BATCH):
        batch = list(texts[start : start + _BATCH])
        stream = tokenizer.tokens(batch)
        counts = np.bincount(stream.doc, minlength=len(batch))
        out.extend(fingerprints(content_digests(stream.hashes, counts)))
    return out
