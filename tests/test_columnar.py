"""Columnar inputs: Parquet files and Hugging Face datasets saved to disk (Arrow IPC shards)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contam_cli import scan
from contam_cli.io import iter_files, iter_records

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

LEAK = "the planted benchmark question sits inside this row of the table"
ROWS = [{"id": f"r{i}", "text": f"row {i} has ordinary words only"} for i in range(5000)]
ROWS[4321] = {"id": "r4321", "text": f"before {LEAK} after"}


def test_parquet_is_streamed_by_row_group_and_scanned(tmp_path: Path) -> None:
    path = tmp_path / "corpus.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), path, row_group_size=1000)
    recs = list(iter_records(path, role="corpus"))
    assert len(recs) == 5000 and recs[4321].id == "r4321" and recs[4321].locator.record == 4321
    e = scan([LEAK], [path], n=5).examples[0]
    assert e.longest_run == 11 and e.evidence.record == 4321 and e.evidence.doc_id == "r4321"


def _save_to_disk(root: Path, rows: list[dict], shards: int = 2) -> None:
    """The layout `datasets.Dataset.save_to_disk` writes: Arrow IPC streams + JSON metadata."""
    root.mkdir(parents=True)
    step = len(rows) // shards
    names = []
    for k in range(shards):
        table = pa.Table.from_pylist(rows[k * step : (k + 1) * step if k < shards - 1 else None])
        name = f"data-{k:05d}-of-{shards:05d}.arrow"
        with pa.OSFile(str(root / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
            w.write_table(table)
        names.append({"filename": name})
    (root / "state.json").write_text(
        json.dumps({"_data_files": names, "_split": "train"}), encoding="utf-8", newline="\n"
    )
    (root / "dataset_info.json").write_text(
        json.dumps({"features": {"text": {}}}), encoding="utf-8", newline="\n"
    )


def test_hugging_face_dataset_directory(tmp_path: Path) -> None:
    ds = tmp_path / "hf" / "train"
    _save_to_disk(ds, ROWS)
    (tmp_path / "hf" / "dataset_dict.json").write_text(
        json.dumps({"splits": ["train"]}), encoding="utf-8", newline="\n"
    )
    files = iter_files(tmp_path / "hf")
    assert [f.name for f in files] == ["data-00000-of-00002.arrow", "data-00001-of-00002.arrow"]
    e = scan([LEAK], [tmp_path / "hf"], n=5).examples[0]
    assert e.longest_run == 11 and e.evidence.doc_id == "r4321"
    assert e.evidence.path.endswith("data-00001-of-00002.arrow")


def test_eval_set_from_parquet(tmp_path: Path) -> None:
    path = tmp_path / "eval.parquet"
    pq.write_table(pa.Table.from_pylist([{"question": LEAK, "answer": "yes", "id": 7}]), path)
    corpus = tmp_path / "c.txt"
    corpus.write_text(f"x {LEAK}\nyes y", encoding="utf-8", newline="\n")
    e = scan(path, [corpus], n=5).examples[0]
    assert e.id == "7" and e.overlap_fraction == 1.0 and e.longest_run == 12
