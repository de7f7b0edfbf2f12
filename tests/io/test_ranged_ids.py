"""A record whose own id is ``"@<offset>"`` of its line (the id a byte-range read gives a record
without one) keeps it: a range read never makes it a line number, nor a record without an id
the other one's id."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import contam_cli.engine.shards as shards_module
from contam_cli import scan
from contam_cli.io import eval_columns
from contam_cli.io.readers import iter_records, whole_read_id

KERNELS = [False, True] if eval_columns.jsonl_kernels() is not None else [False]

LEAKS = [
    f"{word} stole the brass lantern from the lighthouse keeper before the winter storm came"
    for word in ("marigold", "obsidian", "pewter")
]


def _corpus(path: Path) -> tuple[Path, list[int]]:
    """60 records; 10 holds LEAKS[0] and the id "@<its offset>", 30 LEAKS[1] and no id, 50
    LEAKS[2] and the id "@@<its offset>". Returns the path and each line's offset."""
    out, offsets, offset = [], [], 0
    for i in range(60):
        text = f"alpha beta gamma delta epsilon {i} " * 4
        record: dict[str, object] = {"text": text} if i == 30 else {"id": f"d{i}", "text": text}
        if i in (10, 30, 50):
            record["text"] = text + LEAKS[(i - 10) // 20]
        if i in (10, 50):
            record["id"] = ("@" if i == 10 else "@@") + str(offset)
        line = orjson.dumps(record)
        out.append(line)
        offsets.append(offset)
        offset += len(line) + 1
    path.write_bytes(b"\n".join(out) + b"\n")
    return path, offsets


def test_a_range_read_tells_an_own_at_id_from_a_generated_one(tmp_path: Path) -> None:
    path, offsets = _corpus(tmp_path / "c.jsonl")
    for i, want in ((10, f"@{offsets[10]}"), (30, "31"), (50, f"@@{offsets[50]}")):
        off = offsets[i]
        (rec,) = iter_records(path, role="corpus", byte_range=(off, off + 1))
        assert whole_read_id(rec.id, off, i + 1) == want
    assert [r.id for r in iter_records(path, role="corpus")][10:51:20] == [
        f"@{offsets[10]}",
        "31",
        f"@@{offsets[50]}",
    ]


@pytest.mark.parametrize("accel", KERNELS)
def test_ranged_evidence_keeps_an_own_at_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, accel: bool
) -> None:
    path, offsets = _corpus(tmp_path / "c.jsonl")
    whole = scan(LEAKS, [path], n=5, accel=accel)
    monkeypatch.setattr(shards_module, "SHARD_BYTES", 1024)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", 1024)
    ranged = scan(LEAKS, [path], n=5, accel=accel)
    ids = [e["details"]["ngram"]["evidence"]["doc_id"] for e in ranged.to_dict()["examples"]]
    assert ids == [f"@{offsets[10]}", "31", f"@@{offsets[50]}"]
    assert ranged.to_dict()["examples"] == whole.to_dict()["examples"]
