"""Report: the value every command returns and writes, for every detector.

Per example (an :class:`~contam_cli.report.table.ExampleTable`): id, eval location, content
fingerprint, one score per method (each method with its direction), the detectors' details, and the
reasons of whichever flag rules fired. Around them: the methods, the config and inputs that made
the report, warnings about anything read short or replaced, and a summary. Renderers turn it into
text; the CLI turns it into an exit code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from contam_cli._version import __version__
from contam_cli.report.table import ExampleTable
from contam_cli.report.values import ExampleResult, Method

__all__ = ["SCHEMA", "Report"]

#: Version of the JSON report layout; bumped on any incompatible change.
SCHEMA = "contam.report/2"


@dataclass(frozen=True, eq=False)
class Report:
    """A report; see the module docstring. Equal reports have equal JSON."""

    examples: ExampleTable
    config: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    command: str = "scan"
    """The command that made it: scan, clean, probe, report."""
    tool_version: str = __version__
    redact: bool = False
    """Eval and corpus text were left out of every output."""
    stats: dict[str, Any] = field(default_factory=dict)
    """The summary's figures besides the counts (which come from the examples)."""
    warnings: tuple[str, ...] = ()
    """Anything the reader should know was read short, replaced or skipped."""

    def __post_init__(self) -> None:
        if not isinstance(self.examples, ExampleTable):
            raise TypeError("Report.examples must be an ExampleTable (ExampleTable.from_results)")

    @property
    def methods(self) -> tuple[Method, ...]:
        """The scores of every example, most decisive first: examples rank in this order."""
        return self.examples.methods

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Report):
            return NotImplemented
        return self.header() == other.header() and self.examples == other.examples

    __hash__ = None  # type: ignore[assignment]

    def method(self, name: str) -> Method:
        for m in self.methods:
            if m.name == name:
                return m
        raise KeyError(name)

    def eval_paths(self) -> list[str]:
        """The eval files this report read (none when the examples came from memory)."""
        given = self.inputs.get("eval")
        if not isinstance(given, list):
            return []
        return [e["path"] for e in given if isinstance(e, dict) and isinstance(e.get("path"), str)]

    def flagged_mask(self) -> np.ndarray:
        """Per example (in input order): flagged."""
        return self.examples.flagged

    def scorable_mask(self) -> np.ndarray:
        """Per example (in input order): scored by at least one method."""
        return self.examples.scorable()

    @property
    def flagged(self) -> tuple[ExampleResult, ...]:
        return tuple(self.take(np.flatnonzero(self.flagged_mask())))

    @property
    def unscorable(self) -> tuple[ExampleResult, ...]:
        return tuple(self.take(np.flatnonzero(~self.scorable_mask())))

    @property
    def contaminated(self) -> bool:
        return bool(self.flagged_mask().any())

    def summary(self) -> dict[str, int]:
        n = len(self.examples)
        n_flag = int(self.flagged_mask().sum())
        n_uns = int((~self.scorable_mask() & ~self.flagged_mask()).sum())
        return {"examples": n, "flagged": n_flag, "clean": n - n_flag - n_uns, "unscorable": n_uns}

    def summary_line(self) -> str:
        """The counts in one line. A probe flags nothing, so its line never says "clean"."""
        s = self.summary()
        if self.command == "probe":
            return (
                f"{s['examples']} examples: {s['examples'] - s['unscorable']} scored, "
                f"{s['unscorable']} unscorable (probe scores flag nothing: see contam report)"
            )
        return (
            f"{s['examples']} examples: {s['flagged']} flagged, {s['clean']} clean, "
            f"{s['unscorable']} unscorable"
        )

    def take(self, indices: Sequence[int] | np.ndarray) -> list[ExampleResult]:
        """The examples at `indices` (into ``examples``), in that order."""
        return self.examples.take(indices)

    def ranked_indices(self) -> np.ndarray:
        """Indices of the scorable examples, most suspicious first: flagged, then by each method
        in order (oriented by its direction, missing last), then input order."""
        scorable = np.flatnonzero(self.scorable_mask())
        keys = [~self.flagged_mask()[scorable]]
        for m in self.methods:
            v = self.examples.scores[m.name][scorable]
            oriented = -v if m.direction == "higher" else v
            # NOTE: missing scores sort after every present one; -0.0 == 0.0 for lexsort.
            keys.append(np.where(np.isnan(oriented), np.inf, oriented))
        # NOTE: lexsort is stable (input order breaks ties); its LAST key is the primary one.
        return scorable[np.lexsort(keys[::-1])]

    def ranked(self) -> list[ExampleResult]:
        """Scorable examples, most suspicious first (see :meth:`ranked_indices`)."""
        return self.take(self.ranked_indices())

    def header(self) -> dict[str, Any]:
        """Everything of :meth:`to_dict` but the examples (which come last there)."""
        return {
            "schema": SCHEMA,
            "tool": {"name": "contam", "version": self.tool_version},
            "command": self.command,
            "redacted": self.redact,
            "methods": [m.to_dict() for m in self.methods],
            "config": self.config,
            "inputs": self.inputs,
            "warnings": list(self.warnings),
            "summary": {**self.summary(), **self.stats},
        }

    def example_dicts(self, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        """The JSON of examples ``start`` to ``stop`` (default: to the end)."""
        start, stop, _ = slice(start, stop).indices(len(self.examples))
        return self.examples.example_dicts(start, stop, self.redact)

    def to_dict(self) -> dict[str, Any]:
        return {**self.header(), "examples": self.example_dicts()}
