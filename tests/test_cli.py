"""The command line: exit codes, outputs, error messages."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from conftest import CD, DECONTAM
from typer.testing import CliRunner

from contam_cli.cli import COMMANDS, app

runner = CliRunner()
BENCH = str(CD / "examples" / "benchmark.jsonl")
CORPUS = str(CD / "examples" / "corpus")


def run(*args: str):  # noqa: ANN201
    return runner.invoke(app, list(args))


def test_scan_table_and_exit_code_1() -> None:
    result = run("scan", BENCH, "--corpus", CORPUS)
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:7] == ["id", "overlap", "run", "z", "flag", "reasons", "where"]
    assert lines[1].split()[:5] == ["q1", "1.000", "23", "1.22", "FLAGGED"]
    assert "doc_contaminated.txt:3" in lines[1]
    assert lines[-1] == "5 examples: 2 flagged, 3 clean, 0 unscorable"


def test_clean_scan_exits_0() -> None:
    result = run(
        "scan", str(DECONTAM / "eval.jsonl"), "-c", str(CD / "examples" / "corpus"), "-n", "8"
    )
    assert result.exit_code == 0, result.output
    assert "0 flagged" in result.stdout


def test_no_fail() -> None:
    assert run("scan", BENCH, "--corpus", CORPUS, "--no-fail").exit_code == 0


def test_unscorable_listed_apart() -> None:
    result = run("scan", str(CD / "derived" / "mixed_examples.jsonl"), "--corpus", CORPUS)
    assert result.exit_code == 1, result.output
    assert "Unscorable (fewer than n=13 tokens" in result.stdout
    assert "s1  2 tokens" in result.stdout
    assert result.stdout.splitlines()[-1] == "4 examples: 2 flagged, 1 clean, 1 unscorable"


def test_json_is_deterministic_strict_and_versioned(tmp_path: Path) -> None:
    a = run("scan", str(CD / "derived" / "mixed_examples.jsonl"), "--corpus", CORPUS, "--json")
    b = run("scan", str(CD / "derived" / "mixed_examples.jsonl"), "--corpus", CORPUS, "--json")
    assert a.exit_code == 1 and a.stdout == b.stdout
    assert "NaN" not in a.stdout
    data = json.loads(a.stdout)
    assert data["schema"] == "contam.report/2" and data["tool"]["name"] == "contam"
    assert data["config"]["n"] == 13 and data["config"]["normalization"]["unicode"] == "NFKC"
    assert data["config"]["policy"]["min_overlap"] == 0.5
    s1 = data["examples"][0]
    assert s1["id"] == "s1" and s1["scores"] == {"longest_run": None, "overlap_fraction": None}
    assert s1["details"]["ngram"]["scorable"] is False
    assert data["inputs"]["eval"][0]["records"] == 4


def test_corpus_files_are_hashed_unless_asked_not_to() -> None:
    data = json.loads(run("scan", BENCH, "--corpus", CORPUS, "--json").stdout)
    files = data["inputs"]["corpus"][0]["files"]
    assert [Path(f["path"]).name for f in files] == ["doc_clean.txt", "doc_contaminated.txt"]
    assert all(len(f["sha256"]) == 64 and f["bytes"] > 0 for f in files)
    data = json.loads(run("scan", BENCH, "--corpus", CORPUS, "--json", "--no-corpus-hash").stdout)
    assert all(f["sha256"] is None for f in data["inputs"]["corpus"][0]["files"])


def test_report_file_and_redact(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    result = run("scan", BENCH, "--corpus", CORPUS, "--report", str(out), "--redact", "--no-fail")
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "Canberra" not in text and "photon" not in text
    assert json.loads(text)["examples"][0]["details"]["ngram"]["evidence"]["char_start"] == 41


def test_report_never_overwrites_an_input(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_bytes(Path(BENCH).read_bytes())
    result = run("scan", str(bench), "--corpus", CORPUS, "--report", str(bench))
    assert result.exit_code == 2
    assert bench.read_bytes() == Path(BENCH).read_bytes()


@pytest.mark.parametrize(
    "content, message",
    [
        pytest.param(
            b'{"id": "a", "text": "x y z"}\n{"id": "b", "text": \n', "bad.jsonl:2:", id="malformed"
        ),
        pytest.param(b'{"id": "a", "text": "caf\xe9"}\n', "bad.jsonl:1:", id="invalid-utf8"),
        pytest.param(b'{"id": "a", "body": "x"}\n', "bad.jsonl:1:", id="missing-field"),
        pytest.param(b"", "bad.jsonl", id="empty"),
        pytest.param(
            b'{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
            "bad.jsonl:2:",
            id="duplicate-id",
        ),
    ],
)
def test_bad_eval_input_exits_2_with_file_and_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    report = tmp_path / "out.json"
    result = run("scan", str(bad), "--corpus", CORPUS, "--report", str(report))
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not report.exists()


def test_missing_corpus_and_bad_source() -> None:
    assert run("scan", BENCH).exit_code == 2
    assert run("scan", BENCH, "--corpus", "/nonexistent/x").exit_code == 2
    result = run("scan", BENCH, "--source", "novalue")
    assert result.exit_code == 2 and "NAME=PATH" in result.stderr


def test_named_sources() -> None:
    result = run("scan", BENCH, "--source", f"web={CORPUS}", "--json", "--no-fail")
    data = json.loads(result.stdout)
    ngram = data["examples"][0]["details"]["ngram"]
    assert ngram["best_source"] == "web" and ngram["matched_sources"] == ["web"]


def test_python_dash_m_and_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "contam_cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("contam ")


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    seen = 0
    for name, (module, attribute) in COMMANDS.items():
        target = getattr(importlib.import_module(module), attribute)
        if isinstance(target, typer.Typer):
            for cmd in target.registered_commands:
                assert cmd.callback.__doc__, cmd.name
                assert f"contam {name} {cmd.name}" in readme, cmd.name
                seen += 1
        else:
            assert target.__doc__, name
            assert f"contam {name}" in readme, name
            seen += 1
    assert seen >= len(COMMANDS)


def test_a_command_imports_only_its_own_module() -> None:
    code = (
        "import sys; from contam_cli.entry import run; sys.argv = ['contam', 'report', '--help']\n"
        "run()\n"
        "print(sorted(m for m in sys.modules if m.startswith('contam_cli.cli.')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = proc.stdout.splitlines()[-1]
    assert "contam_cli.cli.report" in loaded
    for other in ("scan", "bench", "app_page", "probe", "impact", "index"):
        assert f"contam_cli.cli.{other}'" not in loaded, other


def test_help_lists_every_command_and_a_typo_gets_a_suggestion() -> None:
    listed = run("--help").stdout
    rows = listed[listed.index("Commands:") :].splitlines()[1:]
    assert [row.split()[0] for row in rows if row.strip()] == list(COMMANDS)
    typo = run("scna")
    assert typo.exit_code == 2 and "Did you mean 'scan'?" in typo.stderr


def test_table_limit_keeps_the_most_suspicious_and_says_what_is_left_out() -> None:
    result = run("scan", BENCH, "--corpus", CORPUS, "--limit", "1")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[1].split()[0] == "q1" and not any(line.startswith("q2") for line in lines)
    assert "... 1 more flagged examples not listed" in result.stdout


def test_progress_bar_goes_to_stderr_and_leaves_stdout_clean() -> None:
    result = run("scan", BENCH, "--corpus", CORPUS, "--json", "--progress", "--no-fail")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["summary"]["flagged"] == 2


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"sources": {"web": {"longest_run": "40"}}}', "sources.web.longest_run"),
        ('{"sources": {"web": {"longst_run": 40}}}', "unknown key 'longst_run'"),
        ('{"sources": {"web": {"longest_run": -5}}}', "sources.web.longest_run"),
        ('{"sources": {"web": {"overlap_fraction": 7.5}}}', "overlap_fraction"),
        ('{"sources": {"wbe": {"longest_run": 40}}}', "no threshold for source 'web'"),
        ('{"sources": {"web": {"longest_run": 40}, "wbe": {"longest_run": 4}}}', "'wbe', which"),
        ('{"sources": {}}', "non-empty"),
        ('{"n": 8, "sources": {"web": {"longest_run": 40}}}', "n=8"),
        ("[1, 2]", "expected an object"),
        ("{", "invalid JSON"),
    ],
)
def test_a_bad_thresholds_file_is_one_line_naming_file_and_key(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "t.json"
    path.write_text(content, encoding="utf-8", newline="\n")
    result = run("scan", BENCH, "--source", f"web={CORPUS}", "--thresholds", str(path))
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("contam: error: ") and "t.json" in lines[0]
    assert message in lines[0] and "internal error" not in lines[0]


def test_per_source_overlap_threshold_flags_and_reports_its_source(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{"sources": {"web": {"overlap_fraction": 0.9, "controls": 3, '
                    '"well_estimated": false}}}', encoding="utf-8", newline="\n")  # fmt: skip
    result = run(
        "scan", BENCH, "--source", f"web={CORPUS}", "--thresholds", str(path),
        "--min-overlap", "1.0", "--min-run", "100", "--json",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    reasons = json.loads(result.stdout)["examples"][0]["reasons"]
    assert {"detector": "ngram", "rule": "source-overlap", "value": 1.0, "threshold": 0.9,
            "source": "web"} in reasons  # fmt: skip
    assert "not well estimated" in result.stderr
    assert "not well estimated" in json.loads(result.stdout)["warnings"][0]
