"""Evidence from a persisted index with positions: documents read again with the text rules the
index was built with, and a corpus changed since never crashes a scan nor shows the wrong text."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

from contam_cli.cli import app

runner = CliRunner()
LEAK = (
    "the quick brown fox jumps over the lazy dog while seven wizards quietly box jumping "
    "frogs near the old stone bridge at dawn"
)
OTHER = "an unrelated record about tides rivers and the slow work of glaciers on old valleys"


def _jsonl(path: Path, *objs: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    return path


def _eval(tmp_path: Path) -> str:
    return str(_jsonl(tmp_path / "eval.jsonl", {"id": "a", "text": LEAK}))


def _build(corpus: Path, idx: Path, *flags: str) -> None:
    r = runner.invoke(
        app, ["index", "build", "-c", str(corpus), "-o", str(idx), "--positions", "-j1", *flags]
    )
    assert r.exit_code == 0, r.output


def _scan(*args: str) -> tuple[int, dict[str, Any], str]:
    r = runner.invoke(app, ["scan", *args, "-j1", "--json"])
    assert "internal error" not in r.stderr, r.stderr
    return r.exit_code, json.loads(r.stdout) if r.stdout else {}, r.stderr


def _evidence(report: dict[str, Any]) -> dict[str, Any]:
    return report["examples"][0]["details"]["ngram"]["evidence"]


def test_corpus_field_evidence_is_the_indexed_field(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    _jsonl(corpus / "c.jsonl", {"text": "short title", "body": f"intro {LEAK}"})
    _build(corpus, tmp_path / "idx", "--corpus-field", "body")
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1 and not report["warnings"], err
    ev = _evidence(report)
    assert (ev["text"], ev["char_start"], ev["char_end"], ev["doc_token"]) == (LEAK, 6, 129, 1)
    stream = _scan(_eval(tmp_path), "-c", str(corpus), "--corpus-field", "body")[1]
    assert {**_evidence(stream), "path": None} == {**ev, "path": None}
    assert ev["path"] == str(corpus / "c.jsonl")
    same = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"), "--corpus-field", "body")
    assert same[0] == 1 and _evidence(same[1]) == ev


def test_roles_evidence_is_the_assistant_turn(tmp_path: Path) -> None:
    corpus = tmp_path / "chat"
    turns = [
        {"role": "user", "content": f"please tell me about {LEAK} and more words here"},
        {"role": "assistant", "content": LEAK},
    ]
    _jsonl(corpus / "c.jsonl", {"messages": turns})
    _build(corpus, tmp_path / "idx", "--roles", "assistant")
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1 and not report["warnings"], err
    ev = _evidence(report)
    assert (ev["text"], ev["char_start"], ev["doc_token"]) == (LEAK, 0, 0)


@pytest.mark.parametrize(
    ("flags", "asked"),
    [(["--corpus-field", "text"], "--corpus-field text"), (["--roles", "user"], "--roles user")],
)
def test_other_text_rules_than_the_index_are_refused(
    tmp_path: Path, flags: list[str], asked: str
) -> None:
    corpus = tmp_path / "c"
    _jsonl(corpus / "c.jsonl", {"text": "short title", "body": f"intro {LEAK}"})
    _build(corpus, tmp_path / "idx", "--corpus-field", "body")
    r = runner.invoke(app, ["scan", _eval(tmp_path), "--index", str(tmp_path / "idx"), *flags])
    assert r.exit_code == 2, r.output
    line = r.stderr.strip()
    assert "\n" not in line and str(tmp_path / "idx") in line
    assert "--corpus-field body" in line and asked in line


def _changed(report: dict[str, Any], err: str, path: Path, why: str) -> None:
    """The finding stands (the index's numbers), its evidence has no text, a warning says why."""
    assert report["examples"][0]["scores"]["overlap_fraction"] == 1.0
    ev = _evidence(report)
    assert ev["text"] is None and (ev["char_start"], ev["char_end"]) == (-1, -1)
    assert ev["length"] == 23 and ev["path"] is None
    (warning,) = report["warnings"]
    assert warning.startswith(f"{path}: changed since the index was built") and why in warning
    assert "contam: warning:" in err


def _write(path: Path, text: str) -> None:
    data = text.encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)


@pytest.mark.parametrize("name", ["c.txt", "c.txt.gz", "c.jsonl"])
def test_a_shrunken_file_gives_a_warning_not_a_crash(tmp_path: Path, name: str) -> None:
    path = tmp_path / "c" / name
    path.parent.mkdir()
    wrap = (lambda t: json.dumps({"text": t}) + "\n") if name.endswith(".jsonl") else str
    _write(path, wrap(f"intro {LEAK}\n"))
    _build(path.parent, tmp_path / "idx")
    _write(path, wrap("nothing here"))
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1, err
    _changed(report, err, path, "(size differs)")
    assert "tokens at the run differ" in report["warnings"][0]


def test_a_record_gone_from_a_jsonl_file(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c" / "c.jsonl", {"text": OTHER}, {"text": LEAK})
    _build(path.parent, tmp_path / "idx")
    _jsonl(path, {"text": OTHER})
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1, err
    _changed(report, err, path, "record missing")


@pytest.mark.parametrize("name", ["c.txt", "c.jsonl"])
def test_a_same_size_edit_is_caught(tmp_path: Path, name: str) -> None:
    path = tmp_path / "c" / name
    path.parent.mkdir()
    wrap = (lambda t: json.dumps({"text": t}) + "\n") if name == "c.jsonl" else str
    _write(path, wrap(f"intro {LEAK}"))
    _build(path.parent, tmp_path / "idx")
    before = path.stat().st_size
    # One word moved: every token of the run one place later, the same bytes.
    _write(path, wrap("the intro " + LEAK.removeprefix("the ")))
    assert path.stat().st_size == before
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1, err
    _changed(report, err, path, "tokens at the run differ")
    assert "size differs" not in report["warnings"][0]


def test_a_record_that_no_longer_parses(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c" / "c.jsonl", {"text": LEAK})
    _build(path.parent, tmp_path / "idx")
    path.write_text("{not json\n", encoding="utf-8")
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1, err
    _changed(report, err, path, "cannot be read as indexed")


def test_a_change_elsewhere_keeps_the_evidence(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c" / "c.jsonl", {"text": LEAK})
    _build(path.parent, tmp_path / "idx")
    _jsonl(path, {"text": LEAK}, {"text": OTHER})  # a record added after it
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "idx"))
    assert code == 1, err
    assert _evidence(report)["text"] == LEAK
    (warning,) = report["warnings"]
    assert "size differs" in warning and "still matches the index" in warning


def _as_format_2(idx: Path) -> None:
    """The header an earlier contam wrote: format 2, no corpus_text."""
    head = json.loads((idx / "header.json").read_text(encoding="utf-8"))
    head["format"] = "contam.index/2"
    del head["corpus_text"]
    (idx / "header.json").write_text(json.dumps(head), encoding="utf-8")


def test_an_index_of_an_earlier_format(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    _jsonl(corpus / "c.jsonl", {"text": "short title", "body": f"intro {LEAK}"})
    _build(corpus, tmp_path / "pos", "--corpus-field", "body")
    _as_format_2(tmp_path / "pos")
    r = runner.invoke(app, ["scan", _eval(tmp_path), "--index", str(tmp_path / "pos")])
    assert r.exit_code == 2 and "rebuild it" in r.stderr and "contam.index/2" in r.stderr
    assert str(tmp_path / "pos") in r.stderr and "\n" not in r.stderr.strip()
    # Without positions nothing is read again: scanned as before, unless rules are asked for.
    build = ["index", "build", "-c", str(corpus), "-o", str(tmp_path / "np"), "-j1"]
    assert runner.invoke(app, [*build, "--corpus-field", "body"]).exit_code == 0
    _as_format_2(tmp_path / "np")
    code, report, err = _scan(_eval(tmp_path), "--index", str(tmp_path / "np"))
    assert code == 1 and report["examples"][0]["scores"]["overlap_fraction"] == 1.0, err
    r = runner.invoke(
        app, ["scan", _eval(tmp_path), "--index", str(tmp_path / "np"), "--corpus-field", "body"]
    )
    assert r.exit_code == 2 and "--corpus-field body" in r.stderr and "rebuild it" in r.stderr


def test_the_header_records_the_text_rules(tmp_path: Path) -> None:
    corpus = tmp_path / "chat"
    _jsonl(corpus / "c.jsonl", {"messages": [{"role": "assistant", "content": LEAK}]})
    _build(corpus, tmp_path / "idx", "--roles", "assistant")
    info = json.loads(runner.invoke(app, ["index", "info", str(tmp_path / "idx")]).stdout)
    assert info["format"] == "contam.index/3"
    assert info["corpus_text"] == {"fields": [], "roles": ["assistant"], "id_field": None}
