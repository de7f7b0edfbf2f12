"""Step 'scan' of action.yml: ``contam scan`` with the action's inputs; outputs set, exit code kept.

The inputs arrive in environment variables, never in a script's text, and no shell reads them:
each becomes exactly one argument of contam (``--option=VALUE``, so a value cannot be taken for
another option), in a list handed to the process as it is. ``eval``, ``corpus``, ``sources``
and ``extra-args`` hold one item per line (blank lines ignored, each line trimmed); ``eval`` and
``corpus`` lines are globs (``**`` included), expanded here, sorted; a glob that matches nothing
is passed on as written, for contam to name, and a line naming an existing path as written is
that path. The eval paths come after ``--``.

contam writes the annotations (``--format github``), the step summary (``GITHUB_STEP_SUMMARY``),
the SARIF file and the JSON report; this step then sets the outputs ``flagged``, ``new-findings``,
``report-path`` and ``exit-code`` and succeeds, so that they are set whatever the verdict; the
action's last step exits with the code.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _workflow import error, set_outputs

#: Single-value inputs: (environment variable, contam option).
OPTIONS = (
    ("CONTAM_INDEX", "--index"),
    ("CONTAM_NGRAM_SIZE", "--ngram-size"),
    ("CONTAM_MIN_OVERLAP", "--min-overlap"),
    ("CONTAM_MIN_RUN", "--min-run"),
    ("CONTAM_THRESHOLDS", "--thresholds"),
    ("CONTAM_BASELINE", "--baseline"),
    ("CONTAM_FAIL_ON", "--fail-on"),
    ("CONTAM_SARIF", "--sarif"),
)


class ActionInputError(Exception):
    """An input this script refuses before contam runs (contam checks everything else)."""


def lines(name: str) -> list[str]:
    """The non-blank lines of a one-per-line input, trimmed."""
    return [ln.strip() for ln in os.environ.get(name, "").splitlines() if ln.strip()]


def expand(pattern: str) -> list[str]:
    """The paths a glob names, sorted, less those inside a directory it also names (contam
    reads a directory whole: ``evals/**`` names ``evals``, ``evals/sub`` and every file, which
    would be each file given twice); the pattern itself when it has no magic or no match, or
    names an existing path as written (``data[1].jsonl`` is that file, not ``data1.jsonl``)."""
    if not any(ch in pattern for ch in "*?[") or os.path.lexists(pattern):
        return [pattern]
    found = sorted(glob.glob(pattern, recursive=True))
    dirs = {Path(p) for p in found if os.path.isdir(p)}
    top = [p for p in found if not any(d in dirs for d in Path(p).parents)]
    return top or [pattern]


def flag(name: str) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if value not in ("", "true", "false"):
        raise ActionInputError(f"redact must be true or false, got {value!r}")
    return value == "true"


def arguments(report: Path) -> list[str]:
    """contam's arguments, from the environment."""
    evals = [p for line in lines("CONTAM_EVAL") for p in expand(line)]
    if not evals:
        raise ActionInputError("the eval input is empty: give at least one path or glob")
    args = ["scan", "--format=github", "--no-progress", f"--report={report}"]
    args += [f"--corpus={p}" for line in lines("CONTAM_CORPUS") for p in expand(line)]
    args += [f"--source={line}" for line in lines("CONTAM_SOURCES")]
    for env, option in OPTIONS:
        value = os.environ.get(env, "").strip()
        if value:
            args.append(f"{option}={value}")
    if flag("CONTAM_REDACT"):
        args.append("--redact")
    args += lines("CONTAM_EXTRA_ARGS")
    return [*args, "--", *evals]


def outputs(report: Path, code: int) -> dict[str, str]:
    """The step's outputs from the report contam wrote (empty counts when it wrote none)."""
    flagged = new = ""
    if report.is_file():
        summary = json.loads(report.read_text(encoding="utf-8"))["summary"]
        flagged = str(summary["flagged"])
        baseline = summary.get("baseline")
        new = str(baseline["new"] if isinstance(baseline, dict) else summary["flagged"])
    return {
        "flagged": flagged,
        "new-findings": new,
        "report-path": str(report) if report.is_file() else "",
        "exit-code": str(code),
    }


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="contam-", dir=os.environ.get("RUNNER_TEMP")))
    report = work / "contam-report.json"
    try:
        args = arguments(report)
    except ActionInputError as e:
        error(str(e))
        set_outputs(outputs(report, 2))
        return 0
    sys.stdout.flush()
    code = subprocess.run([sys.executable, "-m", "contam_cli", *args], check=False).returncode
    set_outputs(outputs(report, code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
