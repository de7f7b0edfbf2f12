"""The sources an example is a finding in, for baselines keyed per source.

An example's global rules (``min-overlap``, ``min-run``, ``min-fuzzy``) measure it over every
source together, so a per-source baseline needs the sources that make it a finding: the ones its
reasons name, the ones whose own overlap, run or fuzzy score alone reaches the global rule, else
the source of its longest run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contam_cli.report import ExampleResult

__all__ = ["finding_sources"]


def finding_sources(e: ExampleResult, policy: Mapping[str, Any]) -> list[str | None]:
    """The sources example `e` is a finding in under the report's `policy` (its
    ``config.policy``), sorted; ``[None]`` when it has none."""
    found = {r.source for r in e.reasons if r.source is not None}
    min_overlap, min_run = policy.get("min_overlap"), policy.get("min_run")
    for name, s in e.per_source.items():
        if (min_overlap is not None and s.overlap_fraction >= min_overlap) or (
            min_run is not None and s.longest_run >= min_run
        ):
            found.add(name)
    min_fuzzy = policy.get("min_fuzzy")
    if min_fuzzy is not None and e.fuzzy is not None:
        # NOTE: the min-fuzzy reason names only the best alignment's source.
        found.update(k for k, v in e.fuzzy.per_source.items() if v > 0 and v >= min_fuzzy)
    if not found and e.best_source is not None:
        found.add(e.best_source)
    out: list[str | None] = [*sorted(found)]
    return out or [None]
