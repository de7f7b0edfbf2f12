"""Boilerplate suppression: eval n-grams that count neither toward overlap nor toward runs.

Licence notices, famous quotations and instruction templates recur across a corpus, and an eval
example that holds one matches it innocently. Two ways to name them (both :class:`ScanOptions`
fields, both recorded in the report's ``config.boilerplate``):

* ``ignore_common=K``: eval n-grams found in more than K distinct corpus documents (all sources
  together). Counting them is a first pass over the corpus
  (:func:`~contam_cli.engine.doc_frequency.document_frequency`); the scan then runs on an eval
  index without them (:meth:`~contam_cli.engine.eval_index.EvalIndex.without`), so the scan's hot
  path is the same code with or without suppression.
* ``ignore_from=(PATH, ...)``: eval n-grams found in a boilerplate collection: any file or
  directory contam reads (texts found as in a corpus), and files of no known format read as
  UTF-8 plain text, one document each (so ``/usr/share/common-licenses/GPL-3`` works).

An example whose every n-gram is left out is unscorable (never counted as clean), with a warning.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.engine.accel import index_kernels
from contam_cli.engine.doc_frequency import document_frequency
from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.executor import InProcess
from contam_cli.engine.options import ScanOptions
from contam_cli.engine.shards import Source
from contam_cli.errors import InputError
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import format_of

__all__ = ["Suppression", "collection_mask", "collection_source", "suppress"]


@dataclass(frozen=True)
class Suppression:
    """The eval index without its boilerplate n-grams, and what the report says about it."""

    index: EvalIndex
    ignored: int
    """Distinct eval n-grams left out."""
    unscorable: int
    """Examples long enough to score whose every n-gram was left out."""
    opts: ScanOptions
    mostly: int = 0
    """Examples still scorable that had more of their n-grams left out than kept: their verdict
    rests on the few left (a leak copied into more than K documents is ignored whole)."""

    def describe(self) -> dict[str, Any]:
        """``config.boilerplate`` of the report."""
        return {**self.opts.describe()["boilerplate"], "ignored_ngrams": self.ignored}

    def warnings(self) -> list[str]:
        out = []
        if self.unscorable:
            out.append(
                f"{self.unscorable} example(s) have every n-gram ignored as boilerplate: they are "
                "unscorable, not evidence of being clean"
            )
        if self.mostly:
            k = self.opts.ignore_common
            why = "" if k is None else f", and a leak in more than {k} documents is ignored too"
            out.append(
                f"{self.mostly} example(s) have most of their n-grams ignored as boilerplate "
                f"(details.ngram.ignored_ngrams): their verdict rests on the few left{why}"
            )
        return out


def suppress(index: EvalIndex, opts: ScanOptions, doc_freq: np.ndarray | None) -> Suppression:
    """`index` without the n-grams `opts` ignores; `doc_freq` (per gram of `index`, from
    :func:`document_frequency`) is needed with ``ignore_common``."""
    drop = np.zeros(len(index.grams), dtype=bool)
    if opts.ignore_common is not None:
        if doc_freq is None:
            raise ValueError("ignore_common needs the document frequencies")
        drop |= doc_freq > opts.ignore_common
    if opts.ignore_from:
        drop |= collection_mask(index, opts.ignore_from, opts)
    out = index.without(drop, index_kernels() if opts.accel else None)
    lost = out.scorable & (out.total_ngrams == 0) & (out.ignored_ngrams > 0)
    mostly = out.scorable & (out.total_ngrams > 0) & (out.ignored_ngrams > out.total_ngrams)
    return Suppression(out, int(drop.sum()), int(lost.sum()), opts, int(mostly.sum()))


def collection_mask(index: EvalIndex, paths: tuple[Path, ...], opts: ScanOptions) -> np.ndarray:
    """Per gram of `index`, whether the boilerplate collection `paths` holds it (same n and
    normalization as the scan; texts found with the default rules, not the corpus's fields)."""
    source = collection_source(paths)
    read = replace(opts, corpus_spec=TextSpec(), include=(), exclude=())
    return document_frequency(index, [source], read, InProcess()) > 0


def collection_source(paths: tuple[Path, ...]) -> Source:
    """A boilerplate collection as one source: files of a known format as files, the others
    (licence files have no suffix) as UTF-8 texts in memory."""
    files: list[Path] = []
    texts: list[str] = []
    for path in paths:
        for f in _collection_files(Path(path)):
            if format_of(f.name) is not None:
                files.append(f)
            else:
                texts.append(_plain_text(f))
    return Source("boilerplate", tuple(files), stream=texts or None)


def _collection_files(root: Path) -> Iterator[Path]:
    """`root` itself, or every regular non-hidden file below it, sorted."""
    if not root.exists():
        raise InputError(root, "no such file or directory (--ignore-from)")
    if not root.is_dir():
        yield root
        return
    found = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        found += [Path(dirpath) / f for f in filenames if not f.startswith(".")]
    files = sorted(f for f in found if f.is_file())
    if not files:
        raise InputError(root, "no files in this boilerplate directory (--ignore-from)")
    yield from files


def _plain_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as e:
        raise InputError(path, f"cannot read file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise InputError(
            path,
            f"not UTF-8 text at byte {e.start} (a boilerplate file of no known format is read "
            "as plain text)",
        ) from None
