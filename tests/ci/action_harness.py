"""Run action.yml's steps here as a GitHub runner would, without the network.

Each ``run:`` step runs with ``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``)
in the workspace, with the environment a runner sets (``GITHUB_ACTIONS=true``,
``GITHUB_ACTION_PATH``, ``GITHUB_WORKSPACE``, ``RUNNER_TEMP``, a fresh ``GITHUB_OUTPUT`` and
``GITHUB_STEP_SUMMARY`` per step) plus the step's ``env:``, where ``${{ inputs.x }}``,
``${{ steps.id.outputs.y }}`` and ``${{ github.action_path }}`` are replaced by their values as
GitHub replaces them there (a value is substituted as text, never read by a shell). ``uses:``
steps are skipped, and so is the install step: their outputs are stubs naming this interpreter,
whose environment has contam installed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
#: Outputs of the steps the harness does not run.
STUBS = {"python": {"python-path": sys.executable}, "install": {"python": sys.executable}}


def load_action() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    return data


@dataclass
class StepRun:
    """What one step did."""

    name: str
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


@dataclass
class ActionRun:
    """What the whole action did: its outputs, each step, the job's summary and log."""

    outputs: dict[str, str]
    steps: list[StepRun] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(s.code != 0 for s in self.steps)

    @property
    def exit_code(self) -> int:
        """The code the job sees: the first failing step's, else 0."""
        return next((s.code for s in self.steps if s.code), 0)

    @property
    def log(self) -> str:
        return "".join(s.stdout + s.stderr for s in self.steps)

    @property
    def summary(self) -> str:
        return "".join(s.summary for s in self.steps)


def parse_outputs(text: str) -> dict[str, str]:
    """A ``$GITHUB_OUTPUT`` file: ``name=value`` lines and ``name<<DELIM`` ... ``DELIM`` blocks."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            end = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


def substitute(value: str, inputs: dict[str, str], steps: dict[str, dict[str, str]]) -> str:
    """`value` with its expressions replaced (only the forms the action uses in ``env:``)."""

    def one(m: re.Match[str]) -> str:
        expr = m.group(1)
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs.") :]]
        if expr.startswith("steps."):
            step, kind, name = expr[len("steps.") :].split(".", 2)
            assert kind == "outputs", expr
            return steps.get(step, {}).get(name, "")
        if expr == "github.action_path":
            return str(ROOT)
        raise AssertionError(f"the harness does not evaluate ${{{{ {expr} }}}}")

    return _EXPR.sub(one, value)


def run_action(
    given: dict[str, str],
    workspace: Path,
    runner_temp: Path,
    *,
    skip: tuple[str, ...] = ("install",),
) -> ActionRun:
    """Run action.yml with inputs `given` (the others take their defaults) in `workspace`,
    skipping the ``uses:`` steps and the steps `skip` names."""
    action = load_action()
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, f"not inputs of action.yml: {unknown}"
    inputs.update(given)
    steps: dict[str, dict[str, str]] = {}
    result = ActionRun(outputs={})
    for k, step in enumerate(action["runs"]["steps"]):
        sid = step.get("id", f"step{k}")
        if "uses" in step or sid in skip:
            steps[sid] = dict(STUBS.get(sid, {}))
            continue
        ran = _run_step(step, sid, inputs, steps, workspace, runner_temp, k)
        result.steps.append(ran)
        steps[sid] = ran.outputs
        if ran.code != 0:
            break
    result.outputs = {
        name: substitute(str(spec["value"]), inputs, steps)
        for name, spec in action["outputs"].items()
    }
    return result


def _run_step(
    step: dict[str, Any],
    sid: str,
    inputs: dict[str, str],
    steps: dict[str, dict[str, str]],
    workspace: Path,
    runner_temp: Path,
    k: int,
) -> StepRun:
    assert step.get("shell") == "bash", f"step {sid}: every run step says shell: bash"
    output, summary = runner_temp / f"output_{k}", runner_temp / f"summary_{k}"
    output.write_text("", encoding="utf-8", newline="\n")
    summary.write_text("", encoding="utf-8", newline="\n")
    script = runner_temp / f"step_{k}.sh"
    script.write_text(step["run"], encoding="utf-8", newline="\n")
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(runner_temp),
        "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        "COLUMNS": "200",
    }
    env.update({k: substitute(str(v), inputs, steps) for k, v in step.get("env", {}).items()})
    proc = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return StepRun(
        step.get("name", sid),
        proc.returncode,
        proc.stdout,
        proc.stderr,
        parse_outputs(output.read_text(encoding="utf-8")),
        summary.read_text(encoding="utf-8"),
    )
