"""Lone surrogate escapes ("\\ud800", valid JSON but not text) in a corpus are read as U+FFFD,
as in an eval set, and the report says so: a warning and `lone_surrogates` on the file's entry,
counted once per record whatever the shards, the workers or the format."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import contam_cli.engine.shards as shards_module
from contam_cli import scan

LEAK = "the quick brown fox jumps over the lazy dog near the river bank today"


def _corpus(tmp_path: Path, name: str, docs: list[str]) -> Path:
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text("[" + ", ".join(docs) + "]", encoding="utf-8", newline="\n")
    else:
        path.write_text("\n".join(docs) + "\n", encoding="utf-8", newline="\n")
    return path


def _docs(k: int) -> list[str]:
    """`k` documents holding a lone surrogate each (as written in JSON), and clean ones."""
    bad = [f'{{"text": "{LEAK} \\ud800 {i} \\udfff"}}' for i in range(k)]
    good = [orjson.dumps({"text": f"filler words {i} of a clean document"}).decode()
            for i in range(300)]  # fmt: skip
    return [*bad, *good]


@pytest.mark.parametrize("name", ["c.jsonl", "c.json"])
@pytest.mark.parametrize("jobs", [1, 2])
def test_each_record_is_counted_once_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, jobs: int
) -> None:
    monkeypatch.setattr(shards_module, "SHARD_BYTES", 2048)  # many byte-range shards
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", 1024)
    corpus = _corpus(tmp_path, name, _docs(3))
    report = scan([LEAK], str(corpus), n=5, jobs=jobs)
    [entry] = report.inputs["corpus"][0]["files"]
    assert entry["lone_surrogates"] == 3
    assert any(f"{corpus}: 3 record(s) held lone surrogate escapes" in w for w in report.warnings)
    [example] = report.examples
    assert example.flagged
    assert example.evidence is not None and "\ufffd" not in (example.evidence.text or "")


def test_a_clean_corpus_has_no_such_entry(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, "c.jsonl", _docs(0))
    report = scan([LEAK], str(corpus), n=5, jobs=1)
    assert "lone_surrogates" not in report.inputs["corpus"][0]["files"][0]
    assert not [w for w in report.warnings if "surrogate" in w]


def test_the_json_report_carries_what_was_read(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path, "c.jsonl", [f'{{"text": "{LEAK} \\ud83d"}}'])
    report = scan([LEAK + " \ud83d"], str(corpus), n=5, jobs=1)
    from contam_cli.report import iter_json

    data = b"".join(iter_json(report))
    assert orjson.loads(data)["inputs"]["corpus"][0]["files"][0]["lone_surrogates"] == 1


def test_texts_in_memory_are_replaced_and_reported_too() -> None:
    report = scan([LEAK + " \ud83d"], [LEAK + " \udc00 more", "clean text"], n=5, jobs=1)
    assert report.inputs["eval"][0]["lone_surrogates"] == 1
    assert "<memory>: 1 record(s) held lone surrogate escapes (not text), read as U+FFFD" in (
        report.warnings
    )
    assert any(w.startswith("<stream>: 1 record(s)") for w in report.warnings)
    [example] = report.examples
    assert example.flagged and example.text == LEAK + " \ufffd"
