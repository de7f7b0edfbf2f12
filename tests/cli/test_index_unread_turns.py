"""A corpus chat turn with none of content, value and text (``{"role", "message"}``) is read as
no text by ``contam index build`` as by a scan, and said so: the build warns, the header's file
entry records ``unread_turn``, and ``scan --index`` repeats the warning in its report. Before,
only a streaming scan warned: a leak in such turns left ``scan --index`` clean without a word."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contam_cli.cli import app
from contam_cli.engine.corpus_index import load_header

LEAK = (
    "the quick brown fox jumps over the lazy dog while the cat watches from the window sill "
    "and the bird sings a song of summer days long gone by"
)


@pytest.mark.parametrize("positions", [False, True])
def test_index_build_and_scan_index_name_an_unread_chat_turn(
    tmp_path: Path, positions: bool
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    chat = corpus / "chat.jsonl"
    chat.write_bytes(
        orjson.dumps({"messages": [{"role": "user", "content": "hello there"}]})
        + b"\n"
        + orjson.dumps({"messages": [{"role": "user", "message": LEAK}]})
        + b"\n"
    )
    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(orjson.dumps({"id": "q1", "text": LEAK}) + b"\n")
    index = tmp_path / "ix"
    args = ["index", "build", "--corpus", str(corpus), "-o", str(index)]
    built = CliRunner().invoke(app, [*args, *(["--positions"] if positions else [])])
    assert built.exit_code == 0, built.output
    said = f"{chat}: the chat turn at line 2 has no content, value or text; its 'message'"
    assert [w for w in built.stderr.splitlines() if said in w], built.stderr
    entry = load_header(index).sources[0]["files"][0]
    assert entry["unread_turn"] == {"at": "line 2", "key": "message"}
    report = tmp_path / "r.json"
    scanned = CliRunner().invoke(
        app, ["scan", str(bench), "--index", str(index), "--report", str(report)]
    )
    assert scanned.exit_code == 0, scanned.output  # NOTE: the turn is not read: nothing found
    assert said in scanned.stderr
    assert any(said in w for w in orjson.loads(report.read_bytes())["warnings"])


def test_a_corpus_clean_names_an_unread_chat_turn(tmp_path: Path) -> None:
    """Before, the cleaned corpus kept the leak in such a turn, exit 0, without a word."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    chat = corpus / "chat.jsonl"
    chat.write_bytes(orjson.dumps({"messages": [{"role": "user", "message": LEAK}]}) + b"\n")
    bench = tmp_path / "bench.jsonl"
    bench.write_bytes(orjson.dumps({"id": "q1", "text": LEAK}) + b"\n")
    out = tmp_path / "clean"
    args = ["clean", str(bench), "--corpus", str(corpus), "--target", "corpus", "-o", str(out)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    said = f"{chat}: the chat turn at line 1 has no content, value or text; its 'message'"
    assert [w for w in done.stderr.splitlines() if said in w], done.stderr
    files = orjson.loads((out / ".contam-manifest.json").read_bytes())["files"]
    assert files[0]["unread_turn"] == {"at": "line 1", "key": "message"}


def test_calibrate_names_unread_chat_turns_in_controls_and_sources(tmp_path: Path) -> None:
    """Before, calibrate read such turns as no text without a word: a source's leaks unseen and
    a control's overlap read low, so its thresholds came out lower or higher than measured."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    chat = corpus / "chat.jsonl"
    chat.write_bytes(orjson.dumps({"messages": [{"role": "user", "message": LEAK}]}) + b"\n")
    (corpus / "web.txt").write_text(f"{LEAK}\n")
    controls = tmp_path / "controls.jsonl"
    controls.write_bytes(
        orjson.dumps({"id": "c1", "text": "a control of its own words, nowhere else to be seen"})
        + b"\n"
        + orjson.dumps({"id": "c2", "messages": [{"role": "user", "value": LEAK}]})
        + b"\n"
        + orjson.dumps({"id": "c3", "messages": [{"role": "user", "body": LEAK}]})
        + b"\n"
    )
    out = CliRunner().invoke(
        app,
        [
            "calibrate",
            "--controls",
            str(controls),
            "--corpus",
            str(corpus),
            "-o",
            str(tmp_path / "t.json"),
        ],  # fmt: skip
    )
    assert out.exit_code == 0, out.output
    warned = [w for w in out.stderr.splitlines() if "has no content, value or text" in w]
    assert warned == [
        f"contam: warning: {controls}: the chat turn at line 3 has no content, value or text; "
        "its 'body' is not read (name that key content, or choose the text with --field)",
        f"contam: warning: {chat}: the chat turn at line 1 has no content, value or text; "
        "its 'message' is not read (name that key content, or choose the text with "
        "--corpus-field)",
    ], out.stderr
