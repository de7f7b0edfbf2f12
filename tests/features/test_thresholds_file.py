"""The thresholds file's per-source ``calibrated_on`` paths: written by calibrate, read back
exactly, validated, and left out for sources in memory (such files keep their bytes)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from contam_cli.errors import UsageError
from contam_cli.features.calibrate import calibrate
from contam_cli.io.remote import Url
from contam_cli.policy.rules import SourceThreshold
from contam_cli.policy.thresholds import (
    CorpusPaths,
    Thresholds,
    corpus_paths,
    load_thresholds,
    parse_thresholds,
)

FORMULA = "please show all working and simplify your answer completely"
CONTROLS = [FORMULA + " for question one", FORMULA + " for question two"]


def test_calibrate_records_each_sources_paths_and_reads_them_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "web").mkdir()
    (tmp_path / "web" / "a.txt").write_text(" ".join([FORMULA] * 5), encoding="utf-8")
    (tmp_path / "b.txt").write_text("the harbour was empty that morning", encoding="utf-8")
    sources = {"web": "web", "books": [Path("b.txt")], "memory": ["some text held in memory"]}
    t = calibrate(sources, CONTROLS, n=5)
    assert t.calibrated_on == {
        "web": CorpusPaths(("web",), (str(tmp_path.resolve() / "web"),)),
        "books": CorpusPaths(("b.txt",), (str(tmp_path.resolve() / "b.txt"),)),
    }
    t.save(tmp_path / "t.json")
    data = orjson.loads((tmp_path / "t.json").read_bytes())
    assert data["schema"] == "contam.thresholds/1"
    assert data["sources"]["books"]["calibrated_on"] == {
        "paths": ["b.txt"],
        "resolved": [str(tmp_path.resolve() / "b.txt")],
    }
    assert "calibrated_on" not in data["sources"]["memory"]
    back = load_thresholds(tmp_path / "t.json")
    assert back == t and back.to_json() == t.to_json() == (tmp_path / "t.json").read_bytes()


def test_sources_in_memory_write_no_paths() -> None:
    t = calibrate({"web": [" ".join([FORMULA] * 5)]}, CONTROLS, n=5)
    assert t.calibrated_on == {} and b"calibrated_on" not in t.to_json()


def test_round_trip_is_exact() -> None:
    t = Thresholds(
        sources={"a": SourceThreshold(7, 0.25, 120, True), "b": SourceThreshold(None, 0.5)},
        n=5,
        calibrated_on={"a": CorpusPaths(("x", "s3://bucket/p/"), ("/data/x", "s3://bucket/p/"))},
    )
    back = parse_thresholds(orjson.loads(t.to_json()), "t.json")
    assert back == t and back.to_json() == t.to_json()


def test_urls_are_recorded_as_they_are(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("text", encoding="utf-8")
    found = corpus_paths({"mix": [Url("s3://bucket/p/"), tmp_path / "x.txt"]})
    assert found["mix"].resolved == ("s3://bucket/p/", str((tmp_path / "x.txt").resolve()))


def test_the_scan_checks_paths_by_what_they_resolve_to() -> None:
    t = Thresholds(
        sources={"a": SourceThreshold(7, None), "b": SourceThreshold(9, None)},
        calibrated_on={"a": CorpusPaths(("a",), ("/d/a",)), "b": CorpusPaths(("b",), ("/d/b",))},
        origin="t.json",
    )
    assert t.check_corpus({"a": CorpusPaths(("../d/a",), ("/d/a",))}) == []
    assert t.check_corpus({}) == []
    (warning,) = t.check_corpus({"a": CorpusPaths(("a",), ("/e/a",))})
    assert "'a' were calibrated on /d/a, this scan reads /e/a" in warning
    with pytest.raises(UsageError, match="source 'a' reads b, the paths source 'b' was"):
        t.check_corpus({"a": CorpusPaths(("b",), ("/d/b",))})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["x"], "must be an object with 'paths' and 'resolved'"),
        ({"paths": ["x"]}, "must be an object with 'paths' and 'resolved'"),
        ({"paths": [], "resolved": []}, "paths: must be a non-empty list of strings"),
        ({"paths": ["x"], "resolved": [1]}, "resolved: must be a non-empty list of strings"),
        ({"paths": ["x", "y"], "resolved": ["/x"]}, "one entry per path"),
    ],
)
def test_bad_paths_are_refused_naming_the_key(value: object, message: str) -> None:
    data = {"sources": {"web": {"longest_run": 9, "calibrated_on": value}}}
    with pytest.raises(UsageError, match=r"t\.json: sources\.web\.calibrated_on"):
        parse_thresholds(data, "t.json")
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        parse_thresholds(data, "t.json")
