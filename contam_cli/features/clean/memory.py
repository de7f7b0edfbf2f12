"""The cleaned eval set in memory: the input's bytes minus its flagged records, byte for byte.

What :func:`~contam_cli.features.clean.eval.clean_eval` writes to a file, returned as bytes: kept
lines (JSONL, TXT) and array elements (JSON) are copied unchanged, with their separators, blank
lines and the text around the array; a removed line takes its terminator with it. Compressed
input gives the decompressed bytes (the caller names them without the compression suffix).
"""

from __future__ import annotations

import io

from contam_cli.errors import InputError, UsageError
from contam_cli.features.clean.rewrite import _Cursor, _LineSink, _rebuild_array
from contam_cli.io.extract import TextSpec
from contam_cli.io.formats import detect_format
from contam_cli.io.memory import decompressed, open_bytes, records_from_bytes
from contam_cli.report import Report

__all__ = ["cleaned_eval_bytes"]


def cleaned_eval_bytes(
    data: bytes, name: str, report: Report, *, spec: TextSpec = TextSpec(), dirty: bool = False
) -> bytes:
    """`data` (the eval input `report` was made from, read as a file called `name`) without
    the records `report` flags; `dirty`: only the flagged records instead. `spec` must be the
    eval spec of the scan, so that the records are read back the same way."""
    records = records_from_bytes(data, name, role="eval", spec=spec)
    if [e.id for e in report.examples] != [r.id for r in records]:
        raise InputError(name, "the eval set is not the one this report was made from")
    flagged = report.flagged_mask().tolist()
    keep = [bool(f) == dirty for f in flagged]
    spans = []
    for r in records:
        if r.locator.span is None:  # NOTE: every format read from memory records its span
            raise UsageError(f"{name}: no byte spans to copy records by")
        spans.append(r.locator.span)
    if detect_format(name) == "json":
        plain = decompressed(data, name)
        return _rebuild_array(plain, spans, [None if k else [] for k in keep])
    out = io.BytesIO()
    with open_bytes(data, name) as fh:
        cursor, sink = _Cursor(fh), _LineSink(out)
        for (a, b), k in zip(spans, keep):
            gap, raw = cursor.read_to(a), cursor.read_to(b)
            sink.put(gap, raw if k else None)
        sink.put(cursor.rest(), b"")
    return out.getvalue()
