"""The boilerplate suppression options that `contam scan` and `contam clean` share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

IgnoreCommonOpt = Annotated[
    int | None,
    typer.Option(
        "--ignore-common",
        min=0,
        metavar="K",
        help="Boilerplate: eval n-grams found in more than K distinct corpus documents count "
        "neither toward overlap nor toward runs (costs a first pass over the corpus).",
        show_default=False,
    ),
]
IgnoreFromOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--ignore-from",
        metavar="PATH",
        help="Boilerplate collection (file or directory: licence texts, prompt templates, the "
        "JSONL of contam calibrate --common-out); its n-grams never count (repeatable).",
        show_default=False,
    ),
]


def passes(ignore_common: int | None) -> int:
    """How many times a scan reads the corpus (for the progress bar's total)."""
    return 2 if ignore_common is not None else 1
