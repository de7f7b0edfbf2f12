"""Regression tests for inputs that used to be read short without a word: every one now fails
naming the path, or is read whole."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import orjson
import pytest
from conftest import symlink_or_skip

from contam_cli import InputError, UsageError, scan
from contam_cli.io import iter_files, iter_records
from contam_cli.io.model import ReadNotes
from contam_cli.io.readers import iter_eval

zstandard = pytest.importorskip("zstandard")

LINES = b"".join(
    orjson.dumps({"id": str(i), "text": f"words of record {i}"}) + b"\n" for i in range(3000)
)


@pytest.mark.parametrize("cut", [0.25, 0.5, 0.99])
def test_a_truncated_zst_file_is_an_error_not_a_short_read(tmp_path: Path, cut: float) -> None:
    packed = zstandard.ZstdCompressor().compress(LINES)
    path = tmp_path / "eval.jsonl.zst"
    path.write_bytes(packed[: int(len(packed) * cut)])
    with pytest.raises(InputError, match="truncated zstd stream") as err:
        list(iter_records(path, role="eval"))
    assert str(err.value).startswith(str(path))
    with pytest.raises(InputError, match="truncated"):
        scan(["words of record 1 and more"], [path], n=3)


def test_a_corrupt_zst_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl.zst"
    path.write_bytes(b"this is not zstd at all")
    with pytest.raises(InputError, match="corrupt zstd stream"):
        list(iter_records(path, role="corpus"))


def test_multi_frame_zst_files_are_read_whole(tmp_path: Path) -> None:
    c = zstandard.ZstdCompressor()
    path = tmp_path / "c.jsonl.zst"
    path.write_bytes(c.compress(LINES[:50_000]) + c.compress(LINES[50_000:]))
    assert len(list(iter_records(path, role="eval"))) == 3000


def test_a_directory_that_cannot_be_listed_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.jsonl").write_text('{"text": "a b c"}\n', encoding="utf-8", newline="\n")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "b.jsonl").write_text(
        '{"text": "a b c"}\n', encoding="utf-8", newline="\n"
    )
    real = os.scandir

    def scandir(path: object = ".") -> object:
        if str(path).endswith("secret"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(InputError, match="secret: cannot list directory: Permission denied"):
        iter_files(tmp_path)


def test_symlinked_directories_are_followed_and_loops_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.jsonl").write_text('{"text": "a b c"}\n', encoding="utf-8", newline="\n")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    symlink_or_skip(corpus / "linked", data, target_is_directory=True)
    assert [p.name for p in iter_files(corpus)] == ["a.jsonl"]
    symlink_or_skip(data / "back", corpus, target_is_directory=True)
    with pytest.raises(InputError, match="reached twice"):
        iter_files(corpus)


def test_a_broken_symlink_of_a_known_format_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "a b c"}\n', encoding="utf-8", newline="\n")
    symlink_or_skip(tmp_path / "gone.jsonl", tmp_path / "missing.jsonl")
    with pytest.raises(InputError, match="gone.jsonl: cannot read file"):
        iter_files(tmp_path)
    with pytest.raises(InputError, match="broken symlink"):
        scan(tmp_path / "gone.jsonl", ["a b c"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "eval.jsonl"
    os.mkfifo(fifo)
    result: list[BaseException] = []

    def run() -> None:
        try:
            scan(fifo, ["a b c"])
        except BaseException as e:  # noqa: BLE001
            result.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "scan waited on the FIFO"
    assert isinstance(result[0], InputError) and "FIFO" in str(result[0])


def test_jsonl_lone_surrogate_escapes_are_read_like_the_json_reader_does(tmp_path: Path) -> None:
    text = '"text": "one two\\ud800 three four five"}'
    (tmp_path / "e.jsonl").write_text('{"id": "a", ' + text + "\n", encoding="utf-8", newline="\n")
    (tmp_path / "e.json").write_text('[{"id": "b", ' + text + "]", encoding="utf-8", newline="\n")
    notes = ReadNotes()
    got = [r.text for r in iter_eval([tmp_path / "e.jsonl", tmp_path / "e.json"], notes=notes)]
    assert got == ["one two\ufffd three four five"] * 2
    assert notes.surrogates == {str(tmp_path / "e.jsonl"): 1, str(tmp_path / "e.json"): 1}
    report = scan(tmp_path / "e.jsonl", ["one two three four five"], n=2)
    assert report.examples[0].longest_run == 5  # U+FFFD separates tokens like punctuation


def test_the_same_eval_file_twice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text(
        '{"id": "a", "text": "a b c"}\n', encoding="utf-8", newline="\n"
    )
    with pytest.raises(UsageError, match="the same eval file is given twice"):
        scan([tmp_path / "e.jsonl", tmp_path / "." / "e.jsonl"], ["a b c"])


def test_a_float_id_is_an_id_not_a_line_number(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text(
        '{"id": 1.5, "text": "a b c"}\n{"id": 2, "text": "d e f"}\n', encoding="utf-8", newline="\n"
    )
    assert [r.id for r in iter_eval([tmp_path / "e.jsonl"])] == ["1.5", "2"]


@pytest.mark.parametrize("name", ["e.jsonl", "e.txt"])
@pytest.mark.parametrize("first", [b"\xef\xbb\xbf\n", b"\xef\xbb\xbf\r\n", b"\xef\xbb\xbf  \n"])
def test_a_bom_alone_on_the_first_line_is_a_blank_line(
    tmp_path: Path, name: str, first: bytes
) -> None:
    body = b'{"id": "a", "text": "hello world"}\n' if name == "e.jsonl" else b"hello world\n"
    path, plain = tmp_path / name, tmp_path / f"plain-{name}"
    path.write_bytes(first + body)
    plain.write_bytes(first[3:] + body)
    got = [(r.id, r.text, r.locator.line) for r in iter_records(path, role="eval")]
    assert got == [(r.id, r.text, r.locator.line) for r in iter_records(plain, role="eval")]
    assert [text for _, text, _ in got] == ["hello world"]  # not an empty example
    if name == "e.jsonl":  # NOTE: a .txt corpus file is one document, read whole either way
        got = [(r.id, r.text, r.locator.line) for r in iter_records(path, role="corpus")]
        assert got == [("a", "hello world", 2)]
    for accel in (False, True):
        report = scan([path], [path], n=2, accel=accel)
        assert [e.id for e in report.examples] == ["a" if name == "e.jsonl" else "2"]
