"""SARIF 2.1.0 for GitHub code scanning: one result per flagged example, at its eval file and line.

* ``tool.driver.rules``: one per kind of flag rule that fired in the report, id
  ``<detector>/<rule>`` (``ngram/min-run``), with a short and a full description, help, and
  ``defaultConfiguration.level`` ``error``.
* ``results``: one per flagged example, in input order: ``ruleId`` of its first reason (every
  reason is in the message and in ``properties.reasons``), level ``error``, the message naming
  the reasons and the evidence (source, place, run length, overlap) and, unless the report is
  redacted, a shortened leaked text; the location is the eval file (relative to `root`, the
  working directory by default, when it lies below it; else a ``file:`` URI) and line (1 when
  not known); the corpus evidence is a related location (for an example only fuzzy rules flag,
  the reworded copy's, and the message quotes it); ``partialFingerprints`` holds the
  example's content fingerprint under ``contamFingerprint/v1``; ``properties`` the scores (and
  ``fuzzy``: the aligned fraction, identity and the copy's place, when that detector ran).
* Unscorable examples are not results: code scanning would show them as alerts, and they are
  not findings. Each is a ``note`` in ``invocations[0].toolExecutionNotifications`` (descriptor
  ``contam/unscorable``, at its eval location; the first ``MAX_NOTES``, then one that counts
  the rest), beside the report's warnings (level ``warning``, descriptor ``contam/warning``).
* `baseline`: an optional mapping from fingerprint to ``baselineState`` (``unchanged``,
  ``updated``, ...); with one, every result gets a state (``new`` when its fingerprint is not
  in it). Without one, results carry none.

Deterministic: no timestamps, no absolute paths but those given, keys sorted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

import numpy as np
import orjson

from contam_cli.engine.evidence import Evidence
from contam_cli.errors import ArgumentError
from contam_cli.io.remote import is_url
from contam_cli.render.html_parts import eval_span, norm_config
from contam_cli.render.table import evidence_where, example_evidence
from contam_cli.report import ExampleResult, FuzzyMatch, Reason, Report

__all__ = [
    "BASELINE_STATES",
    "FINGERPRINT_KEY",
    "MAX_NOTES",
    "artifact_uri",
    "render_sarif",
    "rule_id",
]

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
#: The key of the example's content fingerprint in ``partialFingerprints``.
FINGERPRINT_KEY = "contamFingerprint/v1"
BASELINE_STATES = ("new", "unchanged", "updated", "absent")
#: SARIF 2.1.0 §3.11.5: a message's literal braces are doubled (``{0}`` is a placeholder).
_BRACES = str.maketrans({"{": "{{", "}": "}}"})
#: Unscorable examples given a notification each at most (then one counts the rest).
MAX_NOTES = 1000
#: Characters of leaked text quoted in a result's message at most.
QUOTE_CHARS = 120

_RULES: dict[str, tuple[str, str]] = {
    "ngram/min-overlap": (
        "The example's n-gram overlap with the training corpus is at or above the threshold.",
        "At least the threshold share (--min-overlap, default 0.5) of the example's distinct "
        "n-grams occur in the training corpus: the example, or most of it, leaked.",
    ),
    "ngram/min-run": (
        "A long verbatim span of the example is in the training corpus.",
        "A span of the example at least --min-run tokens long (default 30) occurs verbatim and "
        "contiguously in one corpus document: a short leak inside a long example.",
    ),
    "ngram/zscore": (
        "The example's overlap is an outlier among the examples that match.",
        "The example's overlap z-score, among the examples with a match, is at or above "
        "--threshold.",
    ),
    "ngram/source-run": (
        "A verbatim run at or above its source's calibrated threshold.",
        "The example's longest run in one corpus source is at or above that source's "
        "threshold from --thresholds (contam calibrate).",
    ),
    "ngram/source-overlap": (
        "Overlap with one source at or above its calibrated threshold.",
        "The example's overlap with one corpus source is at or above that source's threshold "
        "from --thresholds (contam calibrate).",
    ),
    "fuzzy/min-fuzzy": (
        "A reworded copy of the example is in the training corpus.",
        "The fuzzy detector aligned the example to a corpus passage with a similarity at or "
        "above its threshold: a leak with light edits.",
    ),
    "fuzzy/source-fuzzy": (
        "A reworded copy at or above its source's calibrated fuzzy threshold.",
        "The fuzzy detector's score of the example in one corpus source is at or above that "
        "source's fuzzy threshold from --thresholds (contam calibrate --fuzzy).",
    ),
    "report/combined-zscore": (
        "The detectors' combined score is at or above the threshold.",
        "The weighted mean of the methods' z-scores (contam report) is at or above the threshold.",
    ),
}
_HELP = (
    "Review the evidence (contam scan --report, or the HTML report) and remove the example from "
    "the eval set (contam clean) or the leaked text from the training data (contam clean "
    "--target corpus); report scores on the clean subset."
)
_NOTES = {
    "contam/unscorable": "An example too short for any method to score: not evidence of being "
    "clean.",
    "contam/warning": "Something was read short, replaced or skipped while making the report.",
}


def rule_id(reason: Reason) -> str:
    """The SARIF rule id of a reason: ``<detector>/<rule>``.

    >>> rule_id(Reason("min-run", 40, 30))
    'ngram/min-run'
    """
    return f"{reason.detector}/{reason.rule}"


def render_sarif(
    report: Report,
    *,
    baseline: Mapping[str, str] | None = None,
    root: str | os.PathLike[str] | None = None,
) -> str:
    """`report` as a SARIF 2.1.0 log (see the module docstring), as JSON text."""
    if baseline is not None:
        bad = sorted({v for v in baseline.values() if v not in BASELINE_STATES})
        if bad:
            raise ArgumentError(f"baseline: states {bad}, expected one of {BASELINE_STATES}")
    base = Path(os.getcwd() if root is None else root)
    flagged = report.flagged
    ids = sorted({rule_id(r) for e in flagged for r in e.reasons})
    index = {k: i for i, k in enumerate(ids)}
    norm = norm_config(report)
    results = [_result(report, e, index, norm, base, baseline) for e in flagged]
    driver: dict[str, Any] = {
        "name": "contam",
        "version": report.tool_version,
        "rules": [_rule(k) for k in ids],
        "notifications": [_descriptor(k, v) for k, v in sorted(_NOTES.items())],
    }
    if re.fullmatch(r"\d+\.\d+\.\d+([-+].*)?", report.tool_version):
        driver["semanticVersion"] = report.tool_version
    run = {
        "tool": {"driver": driver},
        "invocations": [
            {"executionSuccessful": True, "toolExecutionNotifications": _notes(report, base)}
        ],
        "results": results,
        "properties": {"command": report.command, "summary": report.summary()},
    }
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    # NOTE: hand-made reasons may hold numpy scalars; they are written as the numbers they are.
    options = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
    return orjson.dumps(log, option=options).decode() + "\n"


def _rule(key: str) -> dict[str, Any]:
    detector, _, rule = key.partition("/")
    short, full = _RULES.get(
        key,
        (
            f"The {detector} detector's {rule} rule fired.",
            f"The {rule} rule of the "
            f"{detector} detector fired: its score is at or above the rule's threshold.",
        ),
    )
    name = "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", key) if w)
    return {
        "id": key,
        "name": name,
        "shortDescription": {"text": short},
        "fullDescription": {"text": full},
        "help": {"text": _HELP},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["contamination", detector]},
    }


def _descriptor(key: str, text: str) -> dict[str, Any]:
    return {"id": key, "shortDescription": {"text": text}}


def _result(
    report: Report,
    e: ExampleResult,
    index: Mapping[str, int],
    norm: Any,
    base: Path,
    baseline: Mapping[str, str] | None,
) -> dict[str, Any]:
    key = rule_id(e.reasons[0])
    ev = e.evidence
    out: dict[str, Any] = {
        "ruleId": key,
        "ruleIndex": index[key],
        "level": "error",
        "kind": "fail",
        "message": {"text": _message(report, e, norm).translate(_BRACES)},
        "locations": [_location(e.eval_path, e.eval_line, base)],
        "partialFingerprints": {FINGERPRINT_KEY: e.fingerprint},
        "properties": _properties(e),
    }
    shown = example_evidence(e)
    if isinstance(shown, FuzzyMatch) and shown.path:
        related = _location(shown.path, shown.line, base, required=False)
        related["id"] = 1
        related["message"] = {
            "text": f"reworded copy: {len(shown.pairs)} words matched, source {shown.source}"
        }
        out["relatedLocations"] = [related]
    elif ev is not None and ev.path:
        related = _location(ev.path, ev.line, base, required=False)
        related["id"] = 1
        related["message"] = {
            "text": f"longest verbatim run: {ev.length} tokens, source {ev.source}"
        }
        out["relatedLocations"] = [related]
    for related in out.get("relatedLocations", ()):
        related["message"]["text"] = related["message"]["text"].translate(_BRACES)
    if baseline is not None:
        out["baselineState"] = baseline.get(e.fingerprint, "new")
    return out


def _message(report: Report, e: ExampleResult, norm: Any) -> str:
    reasons = "; ".join(str(r) for r in e.reasons)
    shown = example_evidence(e)
    if isinstance(shown, FuzzyMatch):
        return _fuzzy_message(report, e, shown, reasons)
    ev = e.evidence
    if ev is None:
        scores = ", ".join(
            f"{k} {v:.4g}" for k, v in e.scores.items() if isinstance(v, (int, float))
        )
        return f"Eval example {e.id} was flagged: {reasons}." + (
            f" Scores: {scores}." if scores else ""
        )
    where = evidence_where(ev) or "a document that could not be read again"
    overlap = e.overlap_fraction
    text = (
        f"Eval example {e.id} is in the training data: {reasons}. Evidence: source {ev.source}, "
        f"{where}, a verbatim run of {ev.length} tokens"
        + (f", overlap {overlap:.3f}" if overlap is not None else "")
        + "."
    )
    quote_ = None if report.redact else _leaked(e, ev, norm)
    return text + (f' Leaked text: "{quote_}"' if quote_ else "")


def _fuzzy_message(report: Report, e: ExampleResult, ev: FuzzyMatch, reasons: str) -> str:
    where = evidence_where(ev) or "a document that could not be read again"
    fz = e.fuzzy
    figures = ""
    if fz is not None and fz.aligned_fraction is not None and fz.identity is not None:
        figures = f" (aligned fraction {fz.aligned_fraction:.3f}, identity {fz.identity:.3f})"
    text = (
        f"A reworded copy of eval example {e.id} is in the training data: {reasons}. "
        f"Evidence: source {ev.source}, {where}, {len(ev.pairs)} words matched{figures}."
    )
    quote_ = None if report.redact else _quote(ev.text)
    return text + (f' Reworded text: "{quote_}"' if quote_ else "")


def _quote(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…"


def _leaked(e: ExampleResult, ev: Evidence, norm: Any) -> str | None:
    """The leaked text, whitespace collapsed and cut to ``QUOTE_CHARS``."""
    text = ev.text
    if text is None and e.text is not None:
        span = eval_span(e, norm)
        text = None if span is None else e.text[span[0] : span[1]]
    return _quote(text)


def _properties(e: ExampleResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "exampleId": e.id,
        "scores": dict(e.scores),
        "reasons": [r.to_dict() for r in e.reasons],
    }
    ev = e.evidence
    if ev is not None:
        out["evidence"] = {
            "source": ev.source,
            "path": ev.path,
            "line": ev.line,
            "record": ev.record,
            "charStart": ev.char_start,
            "charEnd": ev.char_end,
            "docToken": ev.doc_token,
            "evalToken": ev.eval_token,
            "length": ev.length,
        }
    if e.ngram is not None and e.ngram.zscore is not None:
        out["zscore"] = e.ngram.zscore
    fz = e.fuzzy
    if fz is not None and fz.scorable:
        found: dict[str, Any] = {"alignedFraction": fz.aligned_fraction, "identity": fz.identity}
        if fz.evidence is not None:
            f = fz.evidence
            found["evidence"] = {
                "source": f.source,
                "path": f.path,
                "line": f.line,
                "record": f.record,
                "charStart": f.char_start,
                "charEnd": f.char_end,
                "evalToken": f.eval_token,
                "evalTokenEnd": f.eval_token_end,
                "matched": len(f.pairs),
            }
        out["fuzzy"] = found
    return out


def _location(
    path: str | None, line: int | None, base: Path, *, required: bool = True
) -> dict[str, Any]:
    """A physical location; `required`: a line is always given (1 when not known)."""
    physical: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(path or "", base)}}
    if line is not None and line >= 1:
        physical["region"] = {"startLine": line}
    elif required:
        physical["region"] = {"startLine": 1}
    return {"physicalLocation": physical}


def artifact_uri(path: str, base: Path) -> str:
    """`path` as a URI: relative to `base` when it lies below it, else an absolute ``file:`` URI.

    >>> repo = Path.cwd() / "repo"
    >>> artifact_uri("data/my eval.jsonl", repo), artifact_uri(str(repo / "a.jsonl"), repo)
    ('data/my%20eval.jsonl', 'a.jsonl')
    >>> artifact_uri(str(repo.parent / "x.jsonl"), repo) == (repo.parent / "x.jsonl").as_uri()
    True
    >>> artifact_uri("s3://bucket/corpus/a.jsonl", repo)
    's3://bucket/corpus/a.jsonl'
    """
    if is_url(path):
        return path
    full = os.path.normpath(os.path.join(os.path.abspath(base), path))
    try:
        rel = os.path.relpath(full, os.path.abspath(base))
    except ValueError:  # NOTE: another drive than base's (Windows)
        rel = ".."
    if rel.startswith(".."):
        return Path(full).as_uri()
    return quote(PurePath(rel).as_posix(), safe="/")


def _notes(report: Report, base: Path) -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = [
        {"level": "warning", "descriptor": {"id": "contam/warning"}, "message": {"text": w}}
        for w in report.warnings
    ]
    unscorable = np.flatnonzero(~report.scorable_mask() & ~report.flagged_mask())
    for e in report.take(unscorable[:MAX_NOTES]):
        tokens = f" ({e.n_tokens} tokens)" if e.n_tokens is not None else ""
        notes.append(
            {
                "level": "note",
                "descriptor": {"id": "contam/unscorable"},
                "message": {
                    "text": f"Eval example {e.id} is unscorable{tokens}: not evidence "
                    "of being clean."
                },
                "locations": [_location(e.eval_path, e.eval_line, base)],
            }
        )
    if len(unscorable) > MAX_NOTES:
        rest = len(unscorable) - MAX_NOTES
        notes.append(
            {
                "level": "note",
                "descriptor": {"id": "contam/unscorable"},
                "message": {
                    "text": f"{rest} more eval examples are unscorable (the JSON report "
                    "lists every one)."
                },
            }
        )
    for note in notes:
        note["message"]["text"] = note["message"]["text"].translate(_BRACES)
    return notes
