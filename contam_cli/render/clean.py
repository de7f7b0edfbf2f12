"""What `contam clean` prints: the removed examples or the changed files, then one summary line."""

from __future__ import annotations

from contam_cli.features.clean import CorpusCleanResult, EvalCleanResult
from contam_cli.render.table import evidence_where, example_evidence, short_path
from contam_cli.render.text import columns

__all__ = ["SHOWN_FILES", "render_corpus_summary", "render_eval_summary"]

#: Changed corpus files listed on stdout (the manifest always lists every file).
SHOWN_FILES = 20


def render_eval_summary(result: EvalCleanResult) -> str:
    """The removed examples (id, reasons, where the leak is), then one summary line."""
    lines = []
    if result.removed:
        rows = [
            [e.id, "; ".join(str(r) for r in e.reasons), evidence_where(example_evidence(e))]
            for e in result.removed
        ]
        lines = columns(["removed", "reasons", "where"], rows, "lll")
    n = len(result.report.examples)
    unscorable = len(result.report.unscorable)
    line = f"{n} examples: {len(result.removed)} removed, {result.kept} kept"
    line += f" ({unscorable} unscorable, kept)" if unscorable else ""
    line += f" -> {result.output}"
    if result.dirty_output is not None:
        line += f" (removed -> {result.dirty_output})"
    return "".join(x + "\n" for x in [*lines, line])


def render_corpus_summary(result: CorpusCleanResult) -> str:
    """The changed files with their counts, then one summary line."""
    lines: list[str] = []
    changed = [f for f in result.files if f.changed]
    if changed:
        headers = ["file", "documents", "kept", "cut", "dropped", "pieces", "bytes removed"]
        rows = [
            [
                short_path(f.input),
                *(str(v) for v in (f.documents, f.kept, f.cut, f.dropped, f.pieces)),
                str(f.bytes_removed),
                f.output if f.output is not None else "(nothing left, not written)",
            ]
            for f in changed[:SHOWN_FILES]
        ]
        lines = columns([*headers, "output"], rows, "lrrrrrrl")
        if len(changed) > SHOWN_FILES:
            lines.append(f"... {len(changed) - SHOWN_FILES} more changed files (see the manifest)")
    t = result.totals
    lines.append(
        f"{t['documents']} documents in {t['files']} files: {t['kept']} kept, {t['cut']} cut "
        f"({t['pieces']} written), {t['dropped']} dropped; {t['bytes_removed']} text bytes "
        f"removed -> {result.output} (manifest: {result.manifest})"
    )
    return "".join(x + "\n" for x in lines)
