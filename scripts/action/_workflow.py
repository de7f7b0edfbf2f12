"""What the action's scripts share: workflow commands and step outputs, written safely.

Every value a user gave is escaped before it reaches the log (so it cannot start a workflow
command of its own), and every output is written in the delimited form (so a value cannot add
another output).
"""

from __future__ import annotations

import os
import sys
import uuid

__all__ = ["error", "escape", "set_outputs"]

_DATA = str.maketrans({"%": "%25", "\r": "%0D", "\n": "%0A"})


def escape(value: object) -> str:
    """`value` as a workflow command's message (``%``, CR and LF escaped)."""
    return str(value).translate(_DATA)


def error(message: str) -> None:
    """One ``::error`` annotation on stdout."""
    sys.stdout.write(f"::error title=contam action::{escape(message)}\n")
    sys.stdout.flush()


def set_outputs(values: dict[str, str]) -> None:
    """Append `values` to ``$GITHUB_OUTPUT`` (nothing when it is not set)."""
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8", newline="\n") as fh:
        for name, value in values.items():
            # NOTE: a random delimiter, as the runner's own toolkit does: a value cannot end it.
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            fh.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
