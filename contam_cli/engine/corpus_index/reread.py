"""The documents holding a persisted index's evidence, read again as they were indexed.

An index with positions keeps each document's file, byte offset and record ordinal, not its text,
so the evidence text is read again from the corpus, with the text rules the index was built with
(its header's ``corpus_text``: fields, roles). The corpus may have changed since (a scan without
``--verify`` does not hash it), so a document read again only gives evidence when its tokens at
the run are the indexed ones: each n-gram of the run, hashed again, must be the eval example's
n-gram at the same place of the run, which is what the index matched there. A file that is gone,
a record that is missing, unreadable or different give that evidence no text (offsets -1, see
``docs/report-schema.md``) and a warning naming the file; the run itself (its length, the
overlap) is the index's, still right for the corpus it indexed.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from contam_cli.engine.eval_index import EvalIndex
from contam_cli.engine.match import ChunkRuns
from contam_cli.engine.windows import window_ngrams
from contam_cli.errors import ContamError
from contam_cli.io.extract import TextSpec
from contam_cli.io.model import Record
from contam_cli.io.readers import iter_records, whole_read_id
from contam_cli.text import Tokenizer

__all__ = ["evidence_records"]


@dataclass
class _FileNotes:
    """What went wrong reading one corpus file's evidence documents again."""

    size_differs: bool = False
    failed: dict[int, str] = field(default_factory=dict)
    """Document -> why it is not as indexed."""


def evidence_records(
    files: list[Path | None],
    entries: list[dict[str, Any]],
    table: dict[str, np.ndarray],
    runs: ChunkRuns,
    index: EvalIndex,
    spec: TextSpec,
) -> tuple[list[Record | None], list[str]]:
    """Per run of `runs`, its document as it was indexed (None: it cannot be read again as
    indexed), and warnings, one per corpus file that is gone or changed.

    `files`: where each of the source's files is now (None: not found); `entries`: the header's
    file entries; `table`: the index's per-document table; `spec`: the rules the index read the
    corpus' text with.
    """
    wanted = sorted({int(d) for d in runs.doc.tolist()})
    docs, notes, gone = _read_docs(files, entries, table, wanted, spec)
    tk = Tokenizer(index.norm, accel=False)  # NOTE: a few documents
    grams: dict[int, np.ndarray] = {}
    out: list[Record | None] = []
    for r in range(len(runs.example)):
        d = int(runs.doc[r])
        rec = docs.get(d)
        if rec is not None:
            if d not in grams:
                grams[d] = _grams_by_position(rec.text, tk, index.n)
            if not _run_holds(grams[d], index, runs, r):
                notes[int(table["file_ord"][d])].failed[d] = "its tokens at the run differ"
                rec = None
        out.append(rec)
    warnings = gone + [_warning(files[f], n) for f, n in sorted(notes.items()) if _changed(n)]
    return out, warnings


def _changed(notes: _FileNotes) -> bool:
    return notes.size_differs or bool(notes.failed)


def _warning(path: Path | None, notes: _FileNotes) -> str:
    size = " (size differs)" if notes.size_differs else ""
    head = f"{path}: changed since the index was built{size}; "
    tail = " (scan with --verify to refuse a changed corpus)"
    if not notes.failed:
        return head + "the evidence read from it still matches the index" + tail
    why = "; ".join(dict.fromkeys(notes.failed.values()))
    return (
        head + f"{len(notes.failed)} evidence document(s) in it no longer as indexed ({why}): "
        "that evidence has no text" + tail
    )


def _read_docs(
    files: list[Path | None],
    entries: list[dict[str, Any]],
    table: dict[str, np.ndarray],
    wanted: list[int],
    spec: TextSpec,
) -> tuple[dict[int, Record], dict[int, _FileNotes], list[str]]:
    """Read the documents `wanted` again, each file once: the records found, per file read what
    went wrong, and a warning per file that is gone."""
    file_ord = table["file_ord"]
    by_file: dict[int, list[int]] = {}
    for d in wanted:
        by_file.setdefault(int(file_ord[d]), []).append(d)
    out: dict[int, Record] = {}
    notes: dict[int, _FileNotes] = {}
    gone = []
    for f, docs in by_file.items():
        path = files[f]
        if path is None:
            gone.append(
                f"{entries[f]['path']}: corpus file of the index not found; "
                f"{len(docs)} evidence document(s) without text"
            )
            continue
        note = notes[f] = _FileNotes()
        try:
            note.size_differs = path.stat().st_size != entries[f]["bytes"]
            found = _file_records(path, docs, table, spec)
        except (ContamError, OSError) as e:
            # NOTE: a changed file may no longer parse, or no longer hold the indexed fields.
            why = f"cannot be read as indexed: {e}".replace("\n", " ")
            note.failed.update(dict.fromkeys(docs, why))
            continue
        out.update(found)
        note.failed.update((d, "record missing") for d in docs if d not in found)
    return out, notes, gone


def _file_records(
    path: Path, docs: list[int], table: dict[str, np.ndarray], spec: TextSpec
) -> dict[int, Record]:
    """The records of documents `docs` of one file that are still there."""
    file_ord, offsets, records = table["file_ord"], table["offset"], table["record"]
    out: dict[int, Record] = {}
    if path.suffix in (".jsonl", ".ndjson") and all(offsets[d] >= 0 for d in docs):
        for d in docs:  # uncompressed JSONL: jump straight to the record
            off = int(offsets[d])
            got = iter_records(path, role="corpus", spec=spec, byte_range=(off, off + 1))
            rec = next(got, None)  # NOTE: None: no line starts there any more
            if rec is not None:
                out[d] = _placed(rec, int(table["line"][d]), int(records[d]), off)
        return out
    first = int(np.searchsorted(file_ord, file_ord[docs[0]]))
    want = {int(records[d]) if records[d] >= 0 else d - first: d for d in docs}
    last = max(want)
    for i, rec in enumerate(iter_records(path, role="corpus", spec=spec)):
        if i in want:
            out[want[i]] = rec
        if i >= last:
            break
    return out


def _placed(rec: Record, line: int, ordinal: int, offset: int) -> Record:
    """A record read at its byte offset, with the line and ordinal it has in its file (the
    index holds them; a read from an offset knows neither), and the id a whole-file read gives
    it when the record has none."""
    if line < 0:
        return rec
    loc = replace(rec.locator, line=line, record=ordinal if ordinal >= 0 else rec.locator.record)
    return replace(rec, id=whole_read_id(rec.id, offset, line), locator=loc)


def _grams_by_position(text: str, tk: Tokenizer, n: int) -> np.ndarray:
    """The n-gram hash starting at each token position of `text`, as the index build hashes
    them (window by window for a long document; the same hashes)."""
    raw = text.encode("utf-8", "surrogatepass")
    parts = list(window_ngrams(raw, tk, n))
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    grams = np.concatenate([g for g, _ in parts])
    pos = np.concatenate([p for _, p in parts])
    out = np.zeros(int(pos[-1]) + 1 if len(pos) else 0, dtype=np.uint64)
    out[pos] = grams
    return out


def _run_holds(grams: np.ndarray, index: EvalIndex, runs: ChunkRuns, r: int) -> bool:
    """Whether run `r` is in the document whose n-gram at each position is `grams`: each of
    its n-grams there is the example's n-gram at the same offset of the run."""
    count = int(runs.length[r]) - index.n + 1
    doc_pos, eval_pos = int(runs.doc_pos[r]), int(runs.eval_pos[r])
    if count <= 0 or doc_pos + count > len(grams):
        return False
    here = grams[doc_pos : doc_pos + count]
    u = np.searchsorted(index.grams, here)
    if (u >= len(index.grams)).any() or (index.grams[u] != here).any():
        return False
    j, rep = index.occurrences_of(u)
    step = np.arange(count) if rep is None else rep
    hit = (index.occ_ex[j] == runs.example[r]) & (index.occ_pos[j] == eval_pos + step)
    seen = np.zeros(count, dtype=bool)
    seen[step[hit]] = True
    return bool(seen.all())
