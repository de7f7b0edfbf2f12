"""`contam calibrate`, and `contam scan`/`clean` with its thresholds and the boilerplate options."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from conftest import assert_valid_report
from typer.testing import CliRunner, Result

from contam_cli.cli import app

runner = CliRunner()
FORMULA = "please show all working and simplify your answer completely"
PROSE = (
    "the harbour was empty that morning and the gulls had gone inland before the weather "
    "turned, which the fishermen took as a warning"
)
LICENCE = "permission is hereby granted free of charge to any person obtaining a copy"


def run(*args: object) -> Result:
    return runner.invoke(app, [str(a) for a in args])


def _jsonl(path: Path, texts: list[str]) -> Path:
    rows = [{"id": f"r{i}", "text": t} for i, t in enumerate(texts)]
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture
def data(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "formulaic.txt").write_text(
        " ".join([FORMULA] * 20), encoding="utf-8", newline="\n"
    )
    (tmp_path / "prose.txt").write_text(PROSE, encoding="utf-8", newline="\n")
    return {
        "dir": tmp_path,
        "formulaic": tmp_path / "formulaic.txt",
        "prose": tmp_path / "prose.txt",
        "controls": _jsonl(
            tmp_path / "controls.jsonl",
            [FORMULA + " for question one", FORMULA + " for question two"],
        ),
        "eval": _jsonl(
            tmp_path / "eval.jsonl", [FORMULA + " for question three", "an unrelated question"]
        ),
    }


def _sources(data: dict[str, Path]) -> list[str]:
    return ["--source", f"formulaic={data['formulaic']}", "--source", f"prose={data['prose']}"]


def _calibrate(data: dict[str, Path], *extra: object) -> tuple[Result, Path]:
    out = data["dir"] / "t.json"
    args = ["calibrate", *_sources(data), "--controls", data["controls"], "-n", "5", "-o", out]
    return run(*args, *extra), out


def test_calibrate_writes_the_file_and_prints_the_table(data: dict[str, Path]) -> None:
    result, out = _calibrate(data, "--percentile", "100")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "source     controls  run threshold  overlap threshold  well estimated",
        "formulaic         2             10              0.625  no",
        "prose             2              1              0.000  no",
        f"2 sources, 5-grams, 100th percentile -> {out}",
    ]
    assert "not well estimated" in result.stderr and "formulaic" in result.stderr
    t = orjson.loads(out.read_bytes())
    assert t["schema"] == "contam.thresholds/1" and t["n"] == 5 and t["percentile"] == 100.0
    assert t["sources"]["formulaic"] == {
        "longest_run": 10,
        "overlap_fraction": 0.625,
        "controls": 2,
        "well_estimated": False,
        "calibrated_on": {
            "paths": [str(data["formulaic"])],
            "resolved": [str(data["formulaic"].resolve())],
        },
    }


def test_min_run_floor_and_the_common_ngrams(data: dict[str, Path]) -> None:
    common = data["dir"] / "common.jsonl"
    result, out = _calibrate(data, "--min-run", "25", "--common-out", common, "--common-k", "2")
    assert result.exit_code == 0, result.output
    t = orjson.loads(out.read_bytes())
    assert t["min_run"] == 25 and t["sources"]["prose"]["longest_run"] == 25
    rows = [orjson.loads(line) for line in common.read_bytes().splitlines()]
    assert len(rows) == 2 and all(r["documents"] == 1 for r in rows)


def test_controls_found_in_a_source_are_warned_about(tmp_path: Path) -> None:
    words = [f"w{i}" for i in range(120)]
    leaked = " ".join(words[:40])
    controls = _jsonl(tmp_path / "c.jsonl", [leaked, " ".join(words[40:80]), " ".join(words[80:])])
    corpus = _jsonl(tmp_path / "web.jsonl", [f"a page quoting {leaked} in full"])
    result = run(
        "calibrate", "--source", f"web={corpus}", "--controls", controls, "-o", tmp_path / "t.json"
    )
    assert result.exit_code == 0, result.output
    assert (
        "contam: warning: 1 of 3 controls share a verbatim run of 30 tokens or more with "
        "source 'web'" in result.stderr
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--percentile", "150"], "--percentile"),
        (["--common-out", "common.txt"], "JSONL"),
        (["--min-run", "0"], "min-run"),
    ],
)
def test_bad_options_exit_2(data: dict[str, Path], extra: list[str], message: str) -> None:
    result, out = _calibrate(data, *extra)
    assert result.exit_code == 2 and message in result.output
    assert not out.exists()


def test_nothing_is_written_over_an_input_or_twice(data: dict[str, Path]) -> None:
    before = data["controls"].read_bytes()
    args = ["calibrate", *_sources(data), "--controls", data["controls"], "-n", "5"]
    result = run(*args, "-o", data["controls"])
    assert result.exit_code == 2 and "refusing to overwrite" in result.stderr
    assert data["controls"].read_bytes() == before
    same = data["dir"] / "x.jsonl"
    result = run(*args, "-o", same, "--common-out", same)
    assert result.exit_code == 2 and "given for two outputs" in result.stderr and not same.exists()


def test_no_controls_or_too_short_exit_2(data: dict[str, Path]) -> None:
    empty = data["dir"] / "empty.jsonl"
    empty.write_bytes(b"")
    short = _jsonl(data["dir"] / "short.jsonl", ["too short", "also short"])
    for controls, message in ((empty, "no records"), (short, "supply longer controls")):
        out = data["dir"] / "t.json"
        result = run("calibrate", *_sources(data), "--controls", controls, "-n", "5", "-o", out)
        assert result.exit_code == 2 and message in result.stderr, result.output
        assert not out.exists()


def test_scan_warns_about_thresholds_that_are_not_well_estimated(data: dict[str, Path]) -> None:
    _, thresholds = _calibrate(data, "--percentile", "100")
    report = data["dir"] / "r.json"
    result = run(
        "scan", data["eval"], *_sources(data), "-n", "5", "--thresholds", thresholds,
        "--report", report,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "thresholds for source 'formulaic' are not well estimated" in result.stderr
    doc = assert_valid_report(report.read_bytes())
    per_source = doc["config"]["policy"]["source_thresholds"]
    assert per_source["formulaic"]["well_estimated"] is False
    assert per_source["formulaic"]["longest_run"] == 10
    assert any("not well estimated" in w for w in doc["warnings"])
    first = doc["examples"][0]
    assert [(r["rule"], r["source"]) for r in first["reasons"]] == [
        ("min-overlap", None),
        ("source-overlap", "formulaic"),
    ]


@pytest.mark.parametrize(
    ("scan_args", "message"),
    [
        (["-n", "6"], "n=5, the scan uses n=6"),
        (["-n", "5", "--no-casefold"], "normalization"),
    ],
)
def test_thresholds_of_another_n_or_normalization_are_refused(
    data: dict[str, Path], scan_args: list[str], message: str
) -> None:
    _, thresholds = _calibrate(data)
    result = run("scan", data["eval"], *_sources(data), *scan_args, "--thresholds", thresholds)
    assert result.exit_code == 2 and message in result.stderr, result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_thresholds_must_cover_exactly_the_scans_sources(data: dict[str, Path]) -> None:
    _, thresholds = _calibrate(data)
    one = ["--source", f"formulaic={data['formulaic']}"]
    extra = [*_sources(data), "--source", f"web={data['prose']}"]
    for sources, message in ((extra, "no threshold for source 'web'"), (one, "'prose'")):
        result = run("scan", data["eval"], *sources, "-n", "5", "--thresholds", thresholds)
        assert result.exit_code == 2 and message in result.stderr, result.output


def _refused(thresholds: Path, data: dict[str, Path]) -> str:
    """The error for 'formulaic' read from the paths 'prose' was calibrated on."""
    return (
        f"contam: error: {thresholds}: source 'formulaic' reads {data['prose']}, the paths "
        "source 'prose' was calibrated on: its thresholds would apply to 'formulaic' "
        "(swapped or misnamed sources); give each source its own paths, or calibrate again"
    )


def _warned(result: Result, thresholds: Path, data: dict[str, Path], now: Path) -> str:
    """The one warning for 'formulaic' read from `now`, checked on stderr."""
    line = (
        f"{thresholds}: the thresholds for source 'formulaic' were calibrated on "
        f"{data['formulaic']}, this scan reads {now}: applied as they are "
        "(calibrate again if the source changed)"
    )
    assert (
        result.stderr.count("calibrated on") == 1 and f"contam: warning: {line}\n" in result.stderr
    ), result.output
    return line


def test_a_source_given_another_sources_calibration_paths_is_refused(
    data: dict[str, Path],
) -> None:
    _, thresholds = _calibrate(data)
    swapped = ["--source", f"formulaic={data['prose']}", "--source", f"prose={data['formulaic']}"]
    for command in (["scan", data["eval"]], ["clean", data["eval"], "-o", data["dir"] / "c.jsonl"]):
        result = run(*command, *swapped, "-n", "5", "--thresholds", thresholds)
        assert result.exit_code == 2, result.output
        assert result.stderr.strip().splitlines() == [_refused(thresholds, data)]
    assert not (data["dir"] / "c.jsonl").exists()


def _snapshot(data: dict[str, Path]) -> Path:
    """A directory holding a copy of the formulaic source."""
    copy = data["dir"] / "snapshot"
    copy.mkdir()
    (copy / "formulaic.txt").write_bytes(data["formulaic"].read_bytes())
    return copy


def test_other_paths_for_a_source_warn_and_its_thresholds_still_apply(
    data: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, thresholds = _calibrate(data, "--percentile", "100")
    copy = _snapshot(data)
    report = data["dir"] / "r.json"
    sources = [
        "--source",
        f"formulaic={copy / 'formulaic.txt'}",
        "--source",
        f"prose={data['prose']}",
    ]
    args = ["-n", "5", "--min-run", "1000", "--thresholds", thresholds, "--report", report]
    result = run("scan", data["eval"], *sources, *args)
    assert result.exit_code == 1, result.output
    line = _warned(result, thresholds, data, copy / "formulaic.txt")
    doc = assert_valid_report(report.read_bytes())
    assert line in doc["warnings"]
    assert [(r["rule"], r["source"]) for r in doc["examples"][0]["reasons"]] == [
        ("min-overlap", None),
        ("source-overlap", "formulaic"),
    ]
    # NOTE: the same files spelled another way (relative to another directory) are the same.
    monkeypatch.chdir(data["dir"])
    same = ["--source", "formulaic=formulaic.txt", "--source", "prose=./prose.txt"]
    result = run("scan", data["eval"], *same, *args)
    assert result.exit_code == 1 and "calibrated on" not in result.stderr, result.output


def test_a_thresholds_file_without_paths_applies_as_before(data: dict[str, Path]) -> None:
    thresholds = data["dir"] / "hand.json"
    thresholds.write_text(
        '{"sources": {"formulaic": {"overlap_fraction": 0.9}, "prose": {"longest_run": 100}}}',
        encoding="utf-8",
    )
    swapped = ["--source", f"formulaic={data['prose']}", "--source", f"prose={data['formulaic']}"]
    args = ["-n", "5", "--min-run", "1000", "--min-overlap", "1", "--json"]
    result = run("scan", data["eval"], *swapped, *args, "--thresholds", thresholds)
    assert result.exit_code == 0 and result.stderr == "", result.output
    doc = assert_valid_report(result.stdout)
    assert doc["summary"]["flagged"] == 0 and doc["warnings"] == []
    assert doc["config"]["policy"]["source_thresholds"]["prose"]["longest_run"] == 100


def test_scan_and_clean_take_the_boilerplate_options(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "corpus.jsonl", [f"notice {i}: {LICENCE}" for i in range(25)])
    ev = _jsonl(tmp_path / "eval.jsonl", [f"my question quotes {LICENCE} today", "x y z w v u"])
    base = ["scan", ev, "--corpus", corpus, "-n", "4", "--min-run", "10", "--json"]
    plain = run(*base)
    assert plain.exit_code == 1 and orjson.loads(plain.stdout)["summary"]["flagged"] == 1
    cut = run(*base, "--ignore-common", "20")
    assert cut.exit_code == 0, cut.output
    doc = assert_valid_report(cut.stdout)
    assert doc["config"]["boilerplate"] == {
        "ignore_common": 20,
        "ignore_from": [],
        "ignored_ngrams": 10,
    }
    assert doc["examples"][0]["details"]["ngram"]["ignored_ngrams"] == 10
    licence = tmp_path / "LICENSE"
    licence.write_text(LICENCE, encoding="utf-8", newline="\n")
    assert run(*base, "--ignore-from", licence).exit_code == 0
    out = tmp_path / "eval.clean.jsonl"
    cleaned = run(
        "clean", ev, "--corpus", corpus, "-n", "4", "--min-run", "10", "-o", out,
        "--ignore-common", "20",
    )  # fmt: skip
    assert cleaned.exit_code == 0, cleaned.output
    assert out.read_bytes() == ev.read_bytes()


def test_ignore_common_needs_a_corpus_not_an_index(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "corpus.jsonl", [LICENCE])
    ev = _jsonl(tmp_path / "eval.jsonl", [LICENCE])
    built = run("index", "build", "--corpus", corpus, "-o", tmp_path / "c.idx", "-n", "4")
    assert built.exit_code == 0, built.output
    result = run("scan", ev, "--index", tmp_path / "c.idx", "-n", "4", "--ignore-common", "3")
    assert result.exit_code == 2 and "--ignore-from" in result.stderr
    ok = run("scan", ev, "--index", tmp_path / "c.idx", "-n", "4", "--ignore-from", corpus)
    # NOTE: every n-gram of the one example is ignored: nothing was checked, which is an error.
    assert ok.exit_code == 2 and "every n-gram ignored" in ok.stderr, ok.output
    assert "no eval example could be scored" in ok.stderr


def _index(data: dict[str, Path], name: str, *sources: object) -> Path:
    out = data["dir"] / name
    result = run("index", "build", *sources, "-n", "5", "-o", out)
    assert result.exit_code == 0, result.output
    return out


def test_an_index_built_with_swapped_sources_is_refused(data: dict[str, Path]) -> None:
    _, thresholds = _calibrate(data)
    swapped = ["--source", f"formulaic={data['prose']}", "--source", f"prose={data['formulaic']}"]
    index = _index(data, "idx", *swapped)
    result = run("scan", data["eval"], "--index", index, "-n", "5", "--thresholds", thresholds)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [_refused(thresholds, data)]
    # NOTE: an index from before contam recorded its given paths is not checked, and says so.
    header = orjson.loads((index / "header.json").read_bytes())
    for src in header["sources"]:
        del src["given"]
    (index / "header.json").write_bytes(orjson.dumps(header))
    result = run("scan", data["eval"], "--index", index, "-n", "5", "--thresholds", thresholds)
    assert result.exit_code in (0, 1) and "calibrated on" not in result.stderr, result.output
    assert "calibrated_on was not checked" in result.stderr, result.output


def test_an_index_of_other_paths_for_a_source_warns(
    data: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, thresholds = _calibrate(data, "--percentile", "100")
    copy = _snapshot(data)
    moved = ["--source", f"formulaic={copy}", "--source", f"prose={data['prose']}"]
    report = data["dir"] / "r.json"
    args = ["-n", "5", "--min-run", "1000", "--thresholds", thresholds, "--report", report]
    result = run("scan", data["eval"], "--index", _index(data, "idx", *moved), *args)
    assert result.exit_code == 1, result.output
    line = _warned(result, thresholds, data, copy)
    assert line in assert_valid_report(report.read_bytes())["warnings"]
    # NOTE: the same files spelled another way (relative to another directory) are the same.
    monkeypatch.chdir(data["dir"])
    same = ["--source", "formulaic=formulaic.txt", "--source", "prose=./prose.txt"]
    result = run("scan", data["eval"], "--index", _index(data, "same", *same), *args)
    assert result.exit_code == 1 and "calibrated on" not in result.stderr, result.output
