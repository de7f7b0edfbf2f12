"""contam scan and clean: outputs checked before any work, written together, every format on
stdout, a closed stdout, and a run that scored nothing is an error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CD, DECONTAM, ROOT, assert_valid_report
from typer.testing import CliRunner

from contam_cli.cli import app

BENCH = str(CD / "examples" / "benchmark.jsonl")
CORPUS = str(CD / "examples" / "corpus")
runner = CliRunner()


def run(*args: object):  # noqa: ANN201
    return runner.invoke(app, [str(a) for a in args])


def test_report_html_and_sarif_written_together(tmp_path: Path) -> None:
    r = run("scan", BENCH, "-c", CORPUS, "--report", tmp_path / "r.json",
            "--html", tmp_path / "r.html", "--sarif", tmp_path / "r.sarif")  # fmt: skip
    assert r.exit_code == 1, r.output
    assert_valid_report((tmp_path / "r.json").read_bytes())
    assert "<mark" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "r.sarif").read_text(encoding="utf-8"))["version"] == "2.1.0"


def test_a_bad_output_path_fails_before_the_scan(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8", newline="\n")
    for bad in (BENCH, tmp_path / "afile" / "r.json", tmp_path):
        r = run("scan", BENCH, "-c", CORPUS, "--report", bad)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.output
        assert r.stdout == ""  # nothing was scanned, nothing printed
    r = run("scan", BENCH, "-c", CORPUS, "--report", tmp_path / "x", "--html", tmp_path / "x")
    assert r.exit_code == 2 and "two outputs" in r.stderr


def test_every_format_on_stdout() -> None:
    md = run("scan", BENCH, "-c", CORPUS, "--format", "markdown")
    assert md.exit_code == 1 and md.stdout.startswith("# contam scan: contamination found")
    html = run("scan", BENCH, "-c", CORPUS, "--format", "html", "--no-fail")
    assert html.exit_code == 0 and html.stdout.lstrip().lower().startswith("<!doctype html>")
    sarif = run("scan", BENCH, "-c", CORPUS, "-f", "sarif")
    assert json.loads(sarif.stdout)["runs"][0]["tool"]["driver"]["name"] == "contam"


def test_nothing_scored_is_an_error_not_a_clean_pass(tmp_path: Path) -> None:
    r = run("scan", BENCH, "-c", CORPUS, "-n", 100)
    assert r.exit_code == 2
    assert "no eval example could be scored (all 5 shorter than n=100)" in r.stderr
    out = tmp_path / "o.jsonl"
    r = run("clean", BENCH, "-c", CORPUS, "-n", 100, "-o", out)
    assert r.exit_code == 2 and "could be scored" in r.stderr and not out.exists()
    r = run("clean", BENCH, "-c", CORPUS, "-n", 100, "--target", "corpus", "-o", tmp_path / "d")
    assert r.exit_code == 2 and os.listdir(tmp_path) == []
    r = run("scan", BENCH, "-c", CORPUS, "--field", "id")  # ids are two characters: no 13-grams
    assert r.exit_code == 2 and "could be scored" in r.stderr


def test_unknown_roles_are_an_error_listing_the_roles_present() -> None:
    train = str(DECONTAM / "train_chat.jsonl")
    r = run("scan", str(DECONTAM / "eval.jsonl"), "-c", train, "-n", 8, "--roles", "usr")
    assert r.exit_code == 2, r.output
    assert "role usr" in r.stderr and "roles present: assistant, system, user" in r.stderr
    ok = run(
        "scan", str(DECONTAM / "eval.jsonl"), "-c", train, "-n", 8, "--roles", "user,assistant"
    )
    assert ok.exit_code == 1, ok.output


def test_unknown_roles_are_an_error_in_every_command_and_format(tmp_path: Path) -> None:
    # NOTE: index build, calibrate and clean --target corpus did not check --roles (an index of
    # empty documents, then `scan --index` said clean), nor did any command look in Parquet.
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    ev = str(DECONTAM / "eval.jsonl")
    leak = json.loads((DECONTAM / "eval.jsonl").read_text(encoding="utf-8").splitlines()[2])
    chat = tmp_path / "corpus" / "chat.parquet"
    chat.parent.mkdir()
    pq.write_table(pa.table({"messages": [[{"role": "User", "content": leak["text"]}]]}), chat)
    train = str(chat.parent)
    for args in (
        ("scan", ev, "-c", train),
        ("index", "build", "-c", train, "-o", tmp_path / "idx"),
        ("calibrate", "-s", f"web={train}", "--controls", ev, "-o", tmp_path / "t.json"),
        ("clean", ev, "-c", train, "--target", "corpus", "-o", tmp_path / "clean"),
    ):
        r = run(*args, "-n", 8, "--roles", "user")
        assert r.exit_code == 2, (args, r.output)
        assert "role user (roles present: User)" in r.stderr, (args, r.stderr)
    assert sorted(os.listdir(tmp_path)) == ["corpus"]
    assert run("scan", ev, "-c", train, "-n", 8, "--roles", "User").exit_code == 1


def every_command(ev: str, corpus: Path, tmp_path: Path) -> list[tuple[object, ...]]:
    """Each command that reads a corpus, writing (if at all) below `tmp_path`."""
    return [
        ("scan", ev, "-c", corpus),
        ("index", "build", "-c", corpus, "-o", tmp_path / "idx"),
        ("calibrate", "-s", f"web={corpus}", "--controls", ev, "-o", tmp_path / "t.json"),
        ("clean", ev, "-c", corpus, "--target", "corpus", "-o", tmp_path / "clean"),
        ("clean", ev, "-c", corpus, "-o", tmp_path / "cleaned.jsonl"),
    ]


def test_roles_are_checked_file_by_file(tmp_path: Path) -> None:
    # NOTE: --roles was checked over all inputs together: `user` turns in one file let a Parquet
    # file of `User` turns through, its texts read as empty and the leak in it unseen (exit 0).
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    ev = str(DECONTAM / "eval.jsonl")
    leak = json.loads((DECONTAM / "eval.jsonl").read_text(encoding="utf-8").splitlines()[2])
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    turn = {"role": "user", "content": "a question about nothing in the eval set at all"}
    (corpus / "a.jsonl").write_text(json.dumps({"messages": [turn]}) + "\n", encoding="utf-8")
    (corpus / "plain.jsonl").write_text(json.dumps({"text": "no chat here"}) + "\n", "utf-8")
    chat = corpus / "b.parquet"
    pq.write_table(pa.table({"messages": [[{"role": "User", "content": leak["text"]}]]}), chat)
    said = f"{chat}: --roles user: no chat turn in it has any of these roles"
    for args in every_command(ev, corpus, tmp_path):
        r = run(*args, "-n", 8, "--roles", "user")
        assert r.exit_code == 2, (args, r.output)
        assert r.stderr.count("\n") == 1 and said in r.stderr, (args, r.stderr)
        assert "(its roles: User;" in r.stderr, (args, r.stderr)
    assert sorted(os.listdir(tmp_path)) == ["corpus"]
    assert run("scan", ev, "-c", corpus, "-n", 8, "--roles", "user,User").exit_code == 1
    chat.unlink()  # the plain-text file beside a chat file is no error
    assert run("scan", ev, "-c", corpus, "-n", 8, "--roles", "user").exit_code == 0


def test_files_of_no_known_format_are_named_in_a_warning_by_every_command(
    tmp_path: Path,
) -> None:
    # NOTE: a leak in `shard-00000` (JSONL without a suffix) or a .csv was passed over without
    # a word, and the scan said clean.
    ev = str(DECONTAM / "eval.jsonl")
    leak = json.loads((DECONTAM / "eval.jsonl").read_text(encoding="utf-8").splitlines()[2])
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "filler.txt").write_text("nothing of the eval set here at all\n", encoding="utf-8")
    (corpus / "shard-00000").write_text(json.dumps({"text": leak["text"]}) + "\n", "utf-8")
    (corpus / "rows.csv").write_text("text\n" + leak["text"] + "\n", encoding="utf-8")
    said = f"{corpus}: 2 file(s) not read, of no known format: rows.csv, shard-00000 ("
    scanned = run("scan", ev, "-c", corpus, "-n", 8, "--format", "json")
    assert scanned.exit_code == 0, scanned.output
    assert any(w.startswith(said) for w in json.loads(scanned.stdout)["warnings"])
    for args in every_command(ev, corpus, tmp_path):
        r = run(*args, "-n", 8)
        assert r.exit_code == 0, (args, r.output)
        assert [line for line in r.stderr.splitlines() if said in line], (args, r.stderr)
    quiet = run("scan", ev, "-c", corpus, "-n", 8, "--exclude", "rows.csv", "--exclude", "shard-*")
    assert quiet.exit_code == 0 and "not read" not in quiet.stderr


def test_a_closed_stdout_ends_quietly_with_the_verdict(tmp_path: Path) -> None:
    # NOTE: a JSON report far larger than a pipe's buffer, so the writer meets the closed pipe.
    lines = (CD / "examples" / "benchmark.jsonl").read_text(encoding="utf-8").splitlines()
    many = [
        json.dumps({"id": f"x{i}", "text": json.loads(lines[i % 5])["text"]}) for i in range(600)
    ]
    (tmp_path / "e.jsonl").write_text("\n".join(many) + "\n", encoding="utf-8", newline="\n")
    cmd = [sys.executable, "-m", "contam_cli", "scan", str(tmp_path / "e.jsonl"), "-c", CORPUS]
    cmd.append("--json")
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.stdout is not None
    proc.stdout.read(10)
    proc.stdout.close()  # the reader went away, like `| head -c 10`
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert err == b""
