"""Evidence from a JSONL file read in byte ranges is the evidence of the file read whole: the
same line, record ordinal, doc_id, offsets and text, exact and fuzzy, with any number of jobs
and wherever the ranges are cut (a range alone knows neither the lines nor the records before
it, and gives a record without an id the id ``"@<offset>"``), and the same as from an index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contam_cli.engine.shards as shards_module
from contam_cli import scan
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.features.scan import ScanOptions, resolve_sources

FUZZY = FuzzyConfig()
FILLER = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda".split()
LEAKS = [
    "the seventeen purple elephants recite ancient poetry about quantum chromodynamics while "
    "a patient librarian catalogues every misplaced manuscript in the northern tower",
    "nine silver foxes negotiate a treaty with the river otters over fishing rights along "
    "the muddy banks where the old mill once turned its enormous wooden wheel",
    "a caravan of weary merchants crossed the salt flats at dawn carrying saffron indigo "
    "and copper kettles bound for the bustling markets of the distant harbour city",
]


def _line(i: int, leak: str | None, with_id: bool) -> bytes:
    words = " ".join(FILLER[(i * 7 + j) % len(FILLER)] for j in range(12))
    text = f"{words} {i}" if leak is None else f"caf\u00e9 {words} {leak} tail {i}"
    record: dict[str, Any] = {"id": f"doc-{i}"} if with_id else {}
    record["text"] = text
    return orjson.dumps(record)


def _corpus(path: Path, n: int, plants: dict[int, int], blanks: set[int], ids: set[int]) -> Path:
    """`n` records, leak k planted in record `plants[k]`, a blank line before each record of
    `blanks` (so lines and record ordinals differ), an id field in each record of `ids`."""
    where = {doc: k for k, doc in plants.items()}
    out = []
    for i in range(n):
        if i in blanks:
            out.append(b"")
        leak = LEAKS[where[i]] if i in where else None
        out.append(_line(i, leak, i in ids))
    path.write_bytes(b"\n".join(out) + b"\n")
    return path


def _evidence(report: Any) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None]]:
    """Each example's exact and fuzzy evidence as the report writes them."""
    out = []
    for e in report.to_dict()["examples"]:
        details = e["details"]
        out.append((details["ngram"]["evidence"], (details.get("fuzzy") or {}).get("evidence")))
    return out


def _ranges(path: Path) -> int:
    plan = shards_module.plan_shards(0, shards_module.Source("c", (path,)))
    return sum(1 for sh in plan for item in sh.items if item[2] is not None)


def _small_shards(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    monkeypatch.setattr(shards_module, "SHARD_BYTES", size)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", size)


@pytest.mark.parametrize(("jobs", "accel"), [(1, None), (2, None), (1, False)])
def test_ranged_evidence_is_the_whole_read_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int, accel: bool | None
) -> None:
    """`accel` False: JSONL read line by line rather than by the compiled kernels (when
    installed), the other route to the same records."""
    plants = {0: 3, 1: 151, 2: 296}
    f = _corpus(tmp_path / "c.jsonl", 300, plants, blanks={0, 40, 41, 200}, ids={296, 10})
    assert _ranges(f) == 0
    whole = scan(LEAKS, [f], n=5, fuzzy=FUZZY)
    _small_shards(monkeypatch, 2048)
    assert _ranges(f) > 8  # the leaks sit in the first, a middle and the last range
    ranged = scan(LEAKS, [f], n=5, fuzzy=FUZZY, jobs=jobs, accel=accel)
    assert _evidence(ranged) == _evidence(whole)
    assert ranged.to_dict()["examples"] == whole.to_dict()["examples"]
    # what a whole read gives: ordinals count records, an id-less record's id is its line
    lines = {3: 5, 151: 155, 296: 301}  # 1-based; blank lines before 0, 40, 41 and 200
    for k, doc in plants.items():
        exact, fuzzy = _evidence(ranged)[k]
        assert exact is not None and fuzzy is not None
        doc_id = "doc-296" if doc == 296 else str(lines[doc])
        for ev in (exact, fuzzy):
            assert (ev["line"], ev["record"], ev["doc_id"]) == (lines[doc], doc, doc_id)
            assert ev["text"] is not None and ev["text"] in LEAKS[k]
        assert exact["text"] == LEAKS[k]


def test_ranged_evidence_is_the_evidence_from_an_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from contam_cli.engine.corpus_index.build import build_corpus_index

    f = _corpus(tmp_path / "c.jsonl", 200, {0: 17, 1: 120, 2: 199}, blanks={5, 6}, ids={120})
    _small_shards(monkeypatch, 2048)
    assert _ranges(f) > 4
    opts = ScanOptions(n=5)
    out = tmp_path / "index"
    build_corpus_index(
        resolve_sources([f], opts),
        out,
        n=5,
        norm=opts.norm,
        positions=True,
        corpus_spec=opts.corpus_spec,
    )
    indexed = [ev for ev, _ in _evidence(scan(LEAKS, index=out, n=5))]
    ranged = [ev for ev, _ in _evidence(scan(LEAKS, [f], n=5))]
    keys = ("line", "record", "doc_id", "char_start", "char_end", "text")
    assert [{k: ev[k] for k in keys} for ev in ranged if ev] == [
        {k: ev[k] for k in keys} for ev in indexed if ev
    ]
    assert [ev["record"] for ev in ranged if ev] == [17, 120, 199]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    split=st.integers(150, 4000),
    plants=st.lists(st.integers(0, 79), min_size=3, max_size=3),
    blanks=st.sets(st.integers(0, 79), max_size=10),
    ids=st.sets(st.integers(0, 79), max_size=10),
)
def test_any_cut_points_give_the_whole_read_evidence(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    split: int,
    plants: list[int],
    blanks: set[int],
    ids: set[int],
) -> None:
    f = _corpus(tmp_path_factory.mktemp("c") / "c.jsonl", 80, dict(enumerate(plants)), blanks, ids)
    with monkeypatch.context() as m:
        m.setattr(shards_module, "SHARD_BYTES", 1 << 40)
        m.setattr(shards_module, "MIN_SHARD_BYTES", 1 << 40)
        whole = _evidence(scan(LEAKS, [f], n=5, fuzzy=FUZZY))
    _small_shards(monkeypatch, split)
    assert _evidence(scan(LEAKS, [f], n=5, fuzzy=FUZZY)) == whole
