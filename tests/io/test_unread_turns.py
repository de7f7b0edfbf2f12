"""A chat turn with none of the text keys (content, value, text) but a string under another key
that is no known metadata (``{"role": "user", "message": ...}``) is read as no text, as before,
and a warning names the file, the first such turn's line and the key, on every route."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import contam_cli.engine.shards as shards_module
from contam_cli import scan
from contam_cli.io import eval_columns
from contam_cli.io.eval_columns import iter_eval_columns
from contam_cli.io.model import ReadNotes
from contam_cli.io.readers import iter_eval

KERNELS = [False, True] if eval_columns.jsonl_kernels() is not None else [False]
LEAK = "a lantern of hammered pewter swung above the quiet harbour while gulls argued"
TOOL_TURNS = [
    {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]},
    {"role": "tool", "tool_call_id": "c1", "name": "lookup"},
    {"role": "assistant", "content": None, "function_call": {"name": "f"}},
]


def _chat(path: Path, turns_per_line: list[list[dict[str, object]]]) -> Path:
    lines = [
        orjson.dumps({"id": f"r{i}", "messages": [{"role": "user", "content": "hi"}, *turns]})
        for i, turns in enumerate(turns_per_line)
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _unread() -> list[list[dict[str, object]]]:
    """Line 1 tool-call turns alone, lines 2 and 3 a turn whose text is under "message"."""
    return [TOOL_TURNS, [{"role": "user", "message": LEAK}], [{"role": "user", "message": "x"}]]


@pytest.mark.parametrize("route", ["records", "columns", *(["kernel"] if True in KERNELS else [])])
def test_an_eval_turn_without_a_text_key_is_noted(tmp_path: Path, route: str) -> None:
    path = _chat(tmp_path / "e.jsonl", _unread())
    notes = ReadNotes()
    if route == "records":
        list(iter_eval([path], notes=notes))
    else:
        list(iter_eval_columns([path], notes=notes, accel=route == "kernel"))
    offset = path.read_bytes().index(b"\n") + 1
    assert notes.unread_turns == {str(path): (offset, "line 2", "message")}


def test_a_json_eval_turn_without_a_text_key_is_noted(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text(
        '[{"id": "a", "messages": [{"role": "user", "content": "hi"}]},\n'
        f' {{"id": "b", "conversations": [{{"from": "human", "body": "{LEAK}"}}]}}]'
    )
    notes = ReadNotes()
    list(iter_eval([path], notes=notes))
    assert [(n[1], n[2]) for n in notes.unread_turns.values()] == [("line 2", "body")]


def test_tool_call_turns_are_not_noted(tmp_path: Path) -> None:
    path = _chat(tmp_path / "e.jsonl", [TOOL_TURNS, [{"from": "gpt", "value": "v"}]])
    notes = ReadNotes()
    list(iter_eval([path], notes=notes))
    assert notes.unread_turns == {}


@pytest.mark.parametrize("accel", KERNELS)
def test_the_scan_report_warns_of_unread_turns(tmp_path: Path, accel: bool) -> None:
    eval_path = _chat(tmp_path / "e.jsonl", [[{"role": "user", "content": LEAK}], *_unread()])
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(
        b'{"id": "d0", "text": "nothing here"}\n'
        + _chat(tmp_path / "x.jsonl", _unread()).read_bytes()
    )
    report = scan([eval_path], [corpus], n=5, accel=accel)
    tail = "has no content, value or text; its 'message' is not read (name that key content, or"
    assert [w for w in report.warnings if "chat turn" in w] == [
        f"{eval_path}: the chat turn at line 3 {tail} choose the text with --field)",
        f"{corpus}: the chat turn at line 3 {tail} choose the text with --corpus-field)",
    ]
    files = report.to_dict()["inputs"]["corpus"][0]["files"]
    assert files[0]["unread_turn"] == {"at": "line 3", "key": "message"}


def test_a_corpus_read_in_byte_ranges_names_the_first_turn_by_its_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = [[{"role": "user", "content": f"filler words {i} " * 20}] for i in range(40)]
    corpus = _chat(tmp_path / "c.jsonl", [*filler, *_unread(), *filler])
    monkeypatch.setattr(shards_module, "SHARD_BYTES", 1024)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", 1024)
    report = scan([LEAK], [corpus], n=5)
    data = corpus.read_bytes()
    offset = data.index(b'"message"') - data[: data.index(b'"message"')][::-1].index(b"\n")
    assert [w.split(" has ")[0] for w in report.warnings if "chat turn" in w] == [
        f"{corpus}: the chat turn at byte {offset}"
    ]
