"""Reworded leaks out of a corpus (``clean --target corpus`` with the fuzzy detector on).

The exact rule cuts every matched n-gram; a reworded copy shares few or none. So with
``ScanOptions.fuzzy`` the clean pass also runs the fuzzy detector over every batch of documents
and cuts, besides the n-gram windows, the aligned span (first to last matched token) of every
alignment of an eval example scoring at least ``min_fuzzy`` -- exactly the copies that make the
``min-fuzzy`` rule flag it, each one, in every document (a scan keeps only the best) -- plus the
window each side, through the same cut rule (widened to whole tokens, merged, short pieces
dropped). A cleaned record that still holds such an alignment is dropped, as one that still
holds an eval n-gram is, so a rescan with ``--fuzzy`` does not flag the example for this corpus.

Which examples count follows the n-gram rule: every one by default, the flagged ones with
``flagged_only``. The index is built from every example either way, so scores are the scan's
(an example's rarity weights come from the whole eval set).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from contam_cli.engine.executor import Executor
from contam_cli.engine.fuzzy import FuzzyIndex, build_fuzzy_index
from contam_cli.engine.fuzzy.spans import aligned_spans
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import NothingScoredError, UsageError
from contam_cli.features.clean.layout import _eval_paths
from contam_cli.features.fuzzy_report import check_fuzzy_input, fuzzy_eval_index
from contam_cli.features.scan import ProgressFn, load_eval, scan
from contam_cli.io.inputs import name_paths
from contam_cli.io.model import Record
from contam_cli.policy import FlagPolicy
from contam_cli.report import Report
from contam_cli.text import Tokenizer

__all__ = ["FuzzyCut", "check_fuzzy", "describe_cut", "fuzzy_cut", "scan_for_clean"]


@dataclass(frozen=True, eq=False)
class FuzzyCut:
    """What the clean pass needs of the fuzzy detector: its index of the eval set, and per
    example the score at or above which an alignment is cut (``inf``: the example does not
    count)."""

    index: FuzzyIndex
    threshold: np.ndarray

    def spans(self, tk: Tokenizer, texts: list[str]) -> dict[int, list[tuple[int, int]]]:
        """Per text (index into `texts`), the character spans to cut."""
        return aligned_spans(self.index, tk, texts, self.threshold)


def check_fuzzy(eval: Any, opts: ScanOptions, policy: FlagPolicy | None) -> None:
    """UsageError (before any work) unless a clean with the fuzzy detector can run: it needs
    its rule (``min_fuzzy``) and an eval set it can read again."""
    if opts.fuzzy is None:
        return
    if (policy or FlagPolicy()).min_fuzzy is None:
        raise UsageError("cleaning with the fuzzy detector needs its rule: give --min-fuzzy")
    check_fuzzy_input(eval)


def fuzzy_cut(
    eval: Any,
    records: list[Record] | None,
    opts: ScanOptions,
    policy: FlagPolicy | None,
    tk: Tokenizer,
    counts: np.ndarray,
) -> FuzzyCut | None:
    """The fuzzy cut of the examples `counts` (bool per example) at the policy's ``min_fuzzy``,
    indexed from `records` (in memory) or else from `eval` read again; None when the fuzzy
    detector is off."""
    if opts.fuzzy is None:
        return None
    min_fuzzy = (policy or FlagPolicy()).min_fuzzy
    assert min_fuzzy is not None  # NOTE: checked by check_fuzzy before any work
    if records is None:
        index = fuzzy_eval_index(eval, opts, len(counts), tk)
    else:
        index = build_fuzzy_index([r.text for r in records], tokenizer=tk, config=opts.fuzzy)
    return FuzzyCut(index, np.where(counts, float(min_fuzzy), np.inf))


def describe_cut(cut: FuzzyCut | None) -> dict[str, Any]:
    """The manifest's record of the fuzzy cut (nothing without one)."""
    if cut is None:
        return {}
    counted = np.isfinite(cut.threshold)
    least = float(cut.threshold[counted].min()) if counted.any() else None
    return {"min_fuzzy": least, "fuzzy_examples": int((counted & cut.index.scorable).sum())}


def scan_for_clean(
    eval: Any,
    sources: Mapping[str, Any],
    opts: ScanOptions,
    policy: FlagPolicy | None,
    progress: ProgressFn | None,
    executor: Executor | None,
) -> tuple[list[Record], list[dict[str, Any]], Report]:
    """The eval records (all in memory), their description and the scan report that a corpus
    clean of flagged examples starts from."""
    records, eval_inputs = load_eval(eval, opts)
    scanned = eval if _eval_paths(eval) else records
    report = scan(
        scanned, sources, policy=policy, options=opts, progress=progress, executor=executor
    )
    if not report.scorable_mask().any():
        raise NothingScoredError(
            f"{name_paths(report.eval_paths())}no eval example could be scored "
            f"(all shorter than n={opts.n}): nothing "
            "was checked, nothing written"
        )
    return records, eval_inputs, replace(report, command="clean")
