"""Inputs and outputs: readers for every format, text and id extraction, atomic writers."""

from __future__ import annotations

from contam_cli.io.batches import TextBatch, iter_text_batches
from contam_cli.io.discover import iter_files, sha256_file
from contam_cli.io.extract import TextSpec, extract_id, extract_text
from contam_cli.io.formats import StrPath, detect_format, open_binary
from contam_cli.io.model import Locator, Record
from contam_cli.io.output import atomic_writer, write_atomic
from contam_cli.io.readers import iter_corpus, iter_eval, iter_records, read_eval

__all__ = [
    "Locator",
    "Record",
    "StrPath",
    "TextBatch",
    "TextSpec",
    "atomic_writer",
    "detect_format",
    "extract_id",
    "extract_text",
    "iter_corpus",
    "iter_eval",
    "iter_files",
    "iter_records",
    "iter_text_batches",
    "open_binary",
    "read_eval",
    "sha256_file",
    "write_atomic",
]
