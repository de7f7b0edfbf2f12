"""A ``.json`` document is an array of records, an object holding one, or one record.

An object with a text field auto-detection reads is that one record: its lists (choices, tags,
chat turns) are never taken for the records, which read a record's tags as the examples and
never checked its text (exit 0 on a leaked example). An object that could be either is refused.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from contam_cli import InputError
from contam_cli.cli import app
from contam_cli.io import iter_records
from contam_cli.io.extract import TextSpec

runner = CliRunner()
LEAK = (
    "the quick brown fox jumps over the lazy dog while seven wizards quietly box jumping frogs "
    "near the old stone bridge at dawn"
)
CHOICES = ["alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi", "b"]


def run(*args: object):  # noqa: ANN201
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "leak.txt").write_text(f"Some preface. {LEAK}. An epilogue.\n")
    return tmp_path / "corpus"


def _json(path: Path, obj: object, prefix: bytes = b"") -> Path:
    path.write_bytes(prefix + orjson.dumps(obj, option=orjson.OPT_INDENT_2))
    return path


def test_a_record_with_a_list_is_one_record(tmp_path: Path) -> None:
    path = _json(tmp_path / "e.json", {"id": "a", "text": LEAK, "choices": CHOICES})
    (rec,) = iter_records(path, role="eval")
    assert (rec.id, rec.text) == ("a", LEAK)
    assert rec.locator.line == 1
    assert rec.locator.span == (0, path.stat().st_size)


def test_a_record_after_a_bom_spans_the_object(tmp_path: Path) -> None:
    path = _json(tmp_path / "e.json", {"id": "a", "text": LEAK}, prefix=b"\xef\xbb\xbf\n")
    (rec,) = iter_records(path, role="eval")
    assert rec.locator.line == 2
    assert rec.locator.span == (4, path.stat().st_size)


def test_a_chat_record_is_one_record_with_its_roles(tmp_path: Path) -> None:
    turns = [{"role": "user", "content": "repeat after me"}, {"role": "assistant", "content": LEAK}]
    path = _json(tmp_path / "c.json", {"id": "c1", "messages": turns})
    (rec,) = iter_records(path, role="eval", spec=TextSpec(roles=("assistant",)))
    assert (rec.id, rec.text) == ("c1", LEAK)


def test_a_container_of_records_beside_tags_is_still_a_container(tmp_path: Path) -> None:
    records = [{"id": "x", "text": "one"}, {"id": "y", "text": "two"}]
    path = _json(tmp_path / "e.json", {"version": "1.1", "tags": ["a", "b"], "data": records})
    assert [(r.id, r.text) for r in iter_records(path, role="eval")] == [("x", "one"), ("y", "two")]


def test_an_array_of_strings_alone_in_an_object_is_records(tmp_path: Path) -> None:
    path = _json(tmp_path / "e.txt.json", {"texts": ["first text", "second text"]})
    assert [r.text for r in iter_records(path, role="corpus")] == ["first text", "second text"]


def test_strings_beside_string_fields_are_refused(tmp_path: Path) -> None:
    path = _json(tmp_path / "e.json", {"id": "a", "body": LEAK, "tags": ["web", "en"]})
    with pytest.raises(InputError, match="one record, or an array of records") as err:
        list(iter_records(path, role="eval", spec=TextSpec(fields=("body",))))
    assert str(err.value).startswith(f"{path}:1:")


def test_a_field_is_never_replaced_by_a_bare_string_record(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text(orjson.dumps({"id": "a", "q": LEAK}).decode() + '\n"a bare string"\n')
    with pytest.raises(InputError, match="record is a string, expected an object") as err:
        list(iter_records(path, role="eval", spec=TextSpec(fields=("q",))))
    assert str(err.value).startswith(f"{path}:2:")


def test_a_leaked_single_record_eval_file_is_flagged(tmp_path: Path, corpus: Path) -> None:
    path = _json(tmp_path / "single.json", {"id": "a", "text": LEAK, "choices": CHOICES})
    result = run("scan", path, "--corpus", corpus, "--json")
    assert result.exit_code == 1, result.output
    (example,) = orjson.loads(result.stdout)["examples"]
    assert (example["id"], example["flagged"]) == ("a", True)
    assert example["scores"]["overlap_fraction"] == 1.0


def test_a_leak_in_a_one_document_json_corpus_file_is_found(tmp_path: Path) -> None:
    eval_path = tmp_path / "e.jsonl"
    eval_path.write_text(orjson.dumps({"id": "a", "text": LEAK}).decode() + "\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    _json(docs / "doc1.json", {"id": "doc1", "text": f"intro {LEAK}", "tags": ["web", "en"]})
    _json(docs / "doc2.json", {"id": "doc2", "text": "nothing to see here"})
    result = run("scan", eval_path, "--corpus", docs, "--json")
    assert result.exit_code == 1, result.output
    (example,) = orjson.loads(result.stdout)["examples"]
    assert example["flagged"]
    evidence = example["details"]["ngram"]["evidence"]
    assert (evidence["path"], evidence["doc_id"], evidence["text"]) == (
        str(docs / "doc1.json"),
        "doc1",
        LEAK,
    )


def test_clean_removing_the_one_record_writes_an_empty_array(tmp_path: Path, corpus: Path) -> None:
    record = {"id": "a", "text": LEAK, "choices": CHOICES}
    path = _json(tmp_path / "single.json", record)
    before = path.read_bytes()
    out, dirty = tmp_path / "out.json", tmp_path / "dirty.json"
    result = run("clean", path, "--corpus", corpus, "-o", out, "--dirty-out", dirty)
    assert result.exit_code == 1, result.output
    assert out.read_bytes() == b"[]"
    assert orjson.loads(dirty.read_bytes()) == record  # the record whole, lists untouched
    assert path.read_bytes() == before


def test_a_one_record_corpus_file_cut_in_two_becomes_an_array(tmp_path: Path) -> None:
    eval_path = tmp_path / "e.jsonl"
    eval_path.write_text(orjson.dumps({"id": "a", "text": LEAK}).decode() + "\n")
    filler = " ".join(f"word{i}" for i in range(60))
    docs, out = tmp_path / "docs", tmp_path / "out"
    docs.mkdir()
    _json(docs / "doc.json", {"id": "d1", "text": f"{filler}. {LEAK}. {filler}"})
    result = run(
        "clean", eval_path, "--corpus", docs, "--target", "corpus", "-o", out,
        "--mode", "cut-span", "--window", 0, "--min-piece", 20,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    pieces = orjson.loads((out / "doc.json").read_bytes())
    assert [p["id"] for p in pieces] == ["d1#0", "d1#1"]
    assert [p["text"].strip(". ") for p in pieces] == [filler, filler]
    assert run("scan", eval_path, "--corpus", out).exit_code == 0


def test_json_lines_under_a_json_name_is_refused_with_a_hint(tmp_path: Path) -> None:
    # NOTE: Spark writes JSON Lines as part-00000-<uuid>.json; say what the file is.
    path = tmp_path / "part-00000-abc-c000.json"
    path.write_bytes(b'{"text": "a"}\n{"text": "b"}\n')
    with pytest.raises(InputError, match=r"extra data after the record \(one JSON object per line"):
        list(iter_records(path, role="corpus", spec=TextSpec()))
    path.write_bytes(b'{"text": "a"} {"text": "b"}\n')
    with pytest.raises(InputError) as caught:
        list(iter_records(path, role="corpus", spec=TextSpec()))
    assert str(caught.value).endswith("extra data after the record")
