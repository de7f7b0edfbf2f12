"""A bad line inside a byte-range shard of a large JSONL file names its file line, as a whole
read does, with one worker or several (a range alone cannot know how many lines precede it)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

import contam_cli.engine.shards as shards_module
from contam_cli import scan
from contam_cli.errors import InputError


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("bad_line", [251, 799])
def test_the_error_names_the_file_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, bad_line: int
) -> None:
    monkeypatch.setattr(shards_module, "SHARD_BYTES", 4096)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", 2048)
    lines = [orjson.dumps({"text": f"document {i} with a few words"}) for i in range(1, 801)]
    lines[bad_line - 1] = b'{"text": "cut short'
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b"\n".join(lines) + b"\n")
    src = shards_module.Source("corpus", (corpus,))
    assert len(shards_module.plan_shards(0, src)) > 3  # the bad line is in a later range
    with pytest.raises(InputError) as caught:
        scan(["document 5 with a few words"], str(corpus), n=3, jobs=jobs)
    assert str(caught.value).startswith(f"{corpus}:{bad_line}: invalid JSON")
