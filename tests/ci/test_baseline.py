"""Baselines of accepted findings: the file (sorted, one finding per line, no text, the same bytes
for a reordered eval file), subtraction as set algebra (hypothesis), per-source keys, bad files as
one-line errors, and the gate's exit codes through contam scan."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import CD, ROOT, assert_valid_report
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from contam_cli import FlagPolicy, scan
from contam_cli.cli import app
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.errors import InputError, UsageError
from contam_cli.policy.baseline import (
    Baseline,
    BaselineEntry,
    ReasonKey,
    dump_baseline,
    findings,
    gate,
    load_baseline,
    parse_baseline,
    source_key,
    subtract,
)
from contam_cli.report import ExampleTable, Method, Reason, Report, load_report

BENCH = CD / "examples" / "benchmark.jsonl"
CORPUS = CD / "examples" / "corpus"
LEAKED = ("Canberra", "photon", "Melbourne")
runner = CliRunner()


def run(*args: object):  # noqa: ANN201
    return runner.invoke(app, [str(a) for a in args])


def write_baseline(tmp_path: Path, eval_path: Path = BENCH, *more: object) -> Path:
    out = tmp_path / "contam-baseline.json"
    r = run("scan", eval_path, "-c", CORPUS, "--write-baseline", out, *more)
    assert r.exit_code == 1, r.output
    return out


# -- the file ------------------------------------------------------------------------------------


def test_the_file_is_sorted_one_finding_per_line_without_text(tmp_path: Path) -> None:
    text = write_baseline(tmp_path).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "{" and lines[1] == '  "findings": ['
    found = [json.loads(ln.strip().rstrip(",")) for ln in lines[2:4]]
    assert [f["id"] for f in found] == ["q1", "q2"]
    assert [f["fingerprint"] for f in found] == sorted(f["fingerprint"] for f in found)
    assert found[0]["reasons"] == [{"detector": "ngram", "rule": "min-overlap", "source": None}]
    assert list(found[0]) == sorted(found[0])  # keys sorted
    doc = json.loads(text)
    assert list(doc) == sorted(doc) and doc["schema"] == "contam.baseline/1"
    assert not any(word in text for word in LEAKED)
    assert '"line"' not in text and "value" not in text


def _shuffled(src: Path, dst: Path, *, seed: int, drop_ids: bool = False) -> Path:
    records = [json.loads(ln) for ln in src.read_text(encoding="utf-8").splitlines() if ln]
    random.Random(seed).shuffle(records)
    if drop_ids:
        records = [{"text": r["text"]} for r in records]
    dst.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8", newline="\n")
    return dst


@pytest.mark.parametrize("drop_ids", [False, True], ids=["ids", "id-less"])
def test_a_reordered_eval_file_gives_the_byte_identical_baseline(
    tmp_path: Path, drop_ids: bool
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = _shuffled(BENCH, tmp_path / "a" / "eval.jsonl", seed=1, drop_ids=drop_ids)
    second = _shuffled(BENCH, tmp_path / "b" / "eval.jsonl", seed=2, drop_ids=drop_ids)
    assert first.read_bytes() != second.read_bytes()
    one = write_baseline(tmp_path / "a", first).read_bytes()
    two = write_baseline(tmp_path / "b", second).read_bytes()
    assert one == two
    ids = [f["id"] for f in json.loads(one)["findings"]]
    assert ids == ([None, None] if drop_ids else ["q1", "q2"])  # a line number is no id


def test_load_of_dump_is_the_same_baseline(tmp_path: Path) -> None:
    path = write_baseline(tmp_path)
    b = load_baseline(path)
    assert b.path == str(path) and len(b.entries) == 2
    assert dump_baseline(b) == path.read_text(encoding="utf-8")
    assert parse_baseline(json.loads(dump_baseline(b))) == b
    empty = Baseline()
    assert parse_baseline(json.loads(dump_baseline(empty))) == empty


FP = "ab" * 16
GOOD = {"schema": "contam.baseline/1", "findings": [], "normalization": None, "per_source": False}
NO_NORM = {k: v for k, v in GOOD.items() if k != "normalization"}
BAD = [
    ("not json", b"{", "invalid JSON"),
    ("not utf-8", b"\xff\xfe", "not UTF-8"),
    ("another schema", {"schema": "contam.report/2"}, "not a baseline"),
    ("a list", [], "not a baseline"),
    ("unknown key", {**GOOD, "extra": 1}, "unknown key 'extra'"),
    ("findings not a list", {**GOOD, "findings": {}}, "findings must be an array"),
    ("short fingerprint", {**GOOD, "findings": [{"fingerprint": "ab"}]}, r"\[0\]: fingerprint"),
    ("upper-case hex", {**GOOD, "findings": [{"fingerprint": FP.upper()}]}, "fingerprint"),
    ("id a number", {**GOOD, "findings": [{"fingerprint": FP, "id": 3}]}, "id must be a string"),
    ("bad reasons", {**GOOD, "findings": [{"fingerprint": FP, "reasons": "x"}]}, "reasons must"),
    (
        "reason without a rule",
        {**GOOD, "findings": [{"fingerprint": FP, "reasons": [{"detector": "ngram"}]}]},
        "needs a detector and a rule",
    ),
    (
        "a source outside per_source",
        {**GOOD, "findings": [{"fingerprint": FP, "source": "web"}]},
        "not per_source",
    ),
    ("per_source not bool", {**GOOD, "per_source": "yes"}, "per_source must be true or false"),
    ("no normalization", NO_NORM, "no 'normalization' key, so its fingerprints cannot be checked"),
    ("normalization a string", {**GOOD, "normalization": "NFKC"}, "normalization must be an"),
]  # fmt: skip


@pytest.mark.parametrize("content, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_baseline_is_one_line_naming_the_file(
    tmp_path: Path, content: object, message: str
) -> None:
    path = tmp_path / "bad-baseline.json"
    path.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    with pytest.raises(InputError, match=message) as e:
        load_baseline(path)
    assert str(e.value).startswith(str(path))
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"contam: error: {path}") and r.stderr.count("\n") == 1
    assert r.stdout == ""  # refused before the scan


def test_a_missing_baseline_says_how_to_make_one(tmp_path: Path) -> None:
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", tmp_path / "nope.json")
    assert r.exit_code == 2 and "--write-baseline" in r.stderr, r.output


def test_a_baseline_of_the_token_rule_before_marks_and_format_characters_still_applies(
    tmp_path: Path,
) -> None:
    # "/2" gives the same tokens, so the same fingerprints, for text without format characters
    # or combining marks (this benchmark's): the accepted findings stay accepted.
    path = write_baseline(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert '"letters-digits-marks+segmented-scripts/2"' in text
    old = text.replace(
        "letters-digits-marks+segmented-scripts/2", "letters-digits+segmented-scripts"
    )
    path.write_text(old, encoding="utf-8")
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path)
    assert r.exit_code == 0 and "0 new, 2 accepted, 0 fixed" in r.stdout, r.output
    # The other way round (a baseline of a later rule, read by this one) is refused.
    path.write_text(
        text.replace("letters-digits-marks+segmented-scripts/2", "x/3"), encoding="utf-8"
    )
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path)
    assert r.exit_code == 2 and "written with normalization" in r.stderr, r.output


def test_a_baseline_without_its_normalization_is_refused_before_the_scan(tmp_path: Path) -> None:
    # Every baseline --write-baseline writes records it; one without it (edited by hand) could
    # not be checked against the scan's: a change of rule would make every finding look new.
    path = write_baseline(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(ln for ln in lines if '"normalization"' not in ln), encoding="utf-8")
    report = tmp_path / "r.json"
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path, "--report", report)
    assert r.exit_code == 2 and r.stdout == "" and not report.exists()
    assert r.stderr == (
        f"contam: error: {path}: no 'normalization' key, so its fingerprints cannot be checked "
        "(use --write-baseline)\n"
    )


def test_a_baseline_of_another_normalization_is_refused_before_the_scan(tmp_path: Path) -> None:
    path = write_baseline(tmp_path, BENCH, "--no-casefold")
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path)
    assert r.exit_code == 2 and "written with normalization" in r.stderr, r.output
    assert r.stdout == ""


# -- the gate ------------------------------------------------------------------------------------


def test_fail_on_decides_the_exit_code(tmp_path: Path) -> None:
    path = write_baseline(tmp_path)
    base = ("scan", BENCH, "-c", CORPUS, "--baseline", path)
    cases = {(): 0, ("--fail-on", "new"): 0, ("--fail-on", "any"): 1, ("--fail-on", "none"): 0}
    for more, code in cases.items():
        r = run(*base, *more)
        assert r.exit_code == code, (more, r.output)
    assert "baseline " in r.stdout and ": 0 new, 2 accepted, 0 fixed" in r.stdout
    assert run("scan", BENCH, "-c", CORPUS, "--fail-on", "none").exit_code == 0
    assert run("scan", BENCH, "-c", CORPUS, "--fail-on", "new").exit_code == 1  # all are new


def test_contradictory_options_are_usage_errors(tmp_path: Path) -> None:
    r = run("scan", BENCH, "-c", CORPUS, "--no-fail", "--fail-on", "any")
    assert r.exit_code == 2 and "--no-fail contradicts --fail-on any" in r.stderr
    r = run("scan", BENCH, "-c", CORPUS, "--baseline-per-source")
    assert r.exit_code == 2 and "applies to --write-baseline" in r.stderr
    r = run("scan", BENCH, "-c", CORPUS, "--write-baseline", BENCH)
    assert r.exit_code == 2 and r.stdout == "", r.output  # never over an input
    out = tmp_path / "x.json"
    r = run("scan", BENCH, "-c", CORPUS, "--write-baseline", out, "--report", out)
    assert r.exit_code == 2 and "two outputs" in r.stderr and not out.exists()


def test_a_baseline_is_updated_in_place_and_fixed_findings_are_counted(tmp_path: Path) -> None:
    path = write_baseline(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    gone = {"fingerprint": "0" * 32, "id": "old", "reasons": [], "source": None}
    path.write_text(
        json.dumps({**doc, "findings": [*doc["findings"], gone]}), encoding="utf-8", newline="\n"
    )
    report = tmp_path / "r.json"
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path, "--write-baseline", path,
            "--report", report)  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "0 new, 2 accepted, 1 fixed" in r.stdout and "refresh it" in r.stdout
    summary = assert_valid_report(report.read_bytes())["summary"]["baseline"]
    assert summary["fixed_findings"] == [gone] and summary["path"] == str(path)
    assert '"old"' not in path.read_text(encoding="utf-8")  # the rewrite dropped it
    again = run("scan", BENCH, "-c", CORPUS, "--baseline", path)
    assert "0 new, 2 accepted, 0 fixed" in again.stdout


def test_the_report_holds_each_findings_state_and_loads_back(tmp_path: Path) -> None:
    path = write_baseline(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["findings"] = [f for f in doc["findings"] if f["id"] == "q1"]
    path.write_text(json.dumps(doc), encoding="utf-8", newline="\n")
    out = tmp_path / "r.json"
    r = run("scan", BENCH, "-c", CORPUS, "--baseline", path, "--report", out)
    assert r.exit_code == 1, r.output
    data = assert_valid_report(out.read_bytes())
    states = {e["id"]: e["details"].get("baseline") for e in data["examples"]}
    assert states == {"q1": {"state": "accepted"}, "q2": {"state": "new"},
                      "q3": None, "q4": None, "q5": None}  # fmt: skip
    assert data["summary"]["baseline"]["new"] == 1
    assert load_report(out) == load_report(out)
    assert load_report(out).examples.details["baseline"] == {0: {"state": "accepted"},
                                                            1: {"state": "new"}}  # fmt: skip


def test_per_source_keys_make_a_finding_in_another_source_new(tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(CORPUS, other)
    path = tmp_path / "b.json"
    r = run("scan", BENCH, "-s", f"web={CORPUS}", "--write-baseline", path, "--baseline-per-source")
    assert r.exit_code == 1, r.output
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["per_source"] is True and {f["source"] for f in doc["findings"]} == {"web"}
    same = run("scan", BENCH, "-s", f"web={CORPUS}", "--baseline", path)
    assert same.exit_code == 0, same.output
    more = run("scan", BENCH, "-s", f"web={CORPUS}", "-s", f"books={other}", "--baseline", path,
               "--report", tmp_path / "r.json")  # fmt: skip
    assert more.exit_code == 1 and "2 new, 0 accepted" in more.stdout, more.output
    rows = load_report(tmp_path / "r.json").examples.details["baseline"]
    assert rows[0] == {"state": "new", "sources": {"books": "new", "web": "accepted"}}


def test_a_reworded_copy_in_another_source_is_new_in_a_per_source_baseline() -> None:
    # Accepted in 'a', where it is verbatim; then a reworded copy (fuzzy 0.744, no shared
    # 13-gram) turns up in 'b'. The min-fuzzy reason names only the best alignment's source.
    example = (
        "The committee approved the new budget for the public library after a long "
        "debate about opening hours and the cost of repairs to the old roof."
    )
    copy = (
        "After a long debate, the board approved a new budget for the town library, after "
        "the debate about opening times and the cost of repairs to the old roof."
    )
    before = scan([example], {"a": [example], "b": ["about gardening"]}, fuzzy=FuzzyConfig())
    baseline = findings(before, per_source=True)
    assert [en.source for en in baseline.entries] == ["a"]
    after = scan([example], {"a": [example], "b": [f"A page. {copy}"]}, fuzzy=FuzzyConfig())
    e = after.examples[0]
    assert e.fuzzy is not None and e.fuzzy.per_source["b"] > 0.7 and "b" not in e.per_source
    result = subtract(after, baseline)
    assert result.new == (0,) and result.accepted == ()
    row = result.report.examples.details["baseline"][0]
    assert row == {"state": "new", "sources": {"a": "accepted", "b": "new"}}
    # Below --min-fuzzy the copy in 'b' makes no finding there.
    strict = scan([example], {"a": [example], "b": [f"A page. {copy}"]}, fuzzy=FuzzyConfig(),
                  policy=FlagPolicy(min_fuzzy=0.8))  # fmt: skip
    assert [en.source for en in findings(strict, per_source=True).entries] == ["a"]


def test_the_per_source_key_is_documented() -> None:
    fp = "7bec3eb3282478c3a801e82a8d471da7"
    want = hashlib.sha256(f"{fp}\0web".encode()).hexdigest()[:32]
    assert source_key(fp, "web") == want == BaselineEntry(fp, None, (), "web").key
    assert source_key(fp, None) == fp


# -- subtraction as set algebra ------------------------------------------------------------------

POOL = [hashlib.md5(bytes([i])).hexdigest() for i in range(8)]  # noqa: S324 - not security


def _report(fps: list[str], flagged: list[bool], sources: list[str | None]) -> Report:
    n = len(fps)
    table = ExampleTable(
        ids=[f"e{i}" for i in range(n)],
        eval_paths=["eval.jsonl"] * n,
        eval_lines=list(range(1, n + 1)),
        fingerprints=fps,
        methods=(Method("score", "probe"),),
        scores={"score": np.linspace(0, 1, n)},
        reasons={
            i: [Reason("min-score", 1.0, 0.5, sources[i], "probe")] for i in range(n) if flagged[i]
        },
    )
    return Report(examples=table, command="probe")


examples = st.integers(0, 12).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from(POOL), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.sampled_from([None, "web", "books"]), min_size=n, max_size=n),
    )
)


@settings(max_examples=150, deadline=None)
@given(examples, st.lists(st.sampled_from(POOL), unique=True), st.booleans())
def test_new_and_accepted_partition_the_findings_and_fixed_are_not_found(
    ex: tuple[list[str], list[bool], list[str | None]], accepted: list[str], per_source: bool
) -> None:
    report = _report(*ex)
    found = findings(report, per_source=per_source)
    keep = [en for en in found.entries if en.fingerprint in accepted]
    gone = [BaselineEntry(fp, None, (ReasonKey("probe", "min-score"),)) for fp in accepted]
    baseline = Baseline(tuple({en.key: en for en in [*keep, *gone]}.values()), per_source)
    result = subtract(report, baseline)
    flagged = {int(i) for i in np.flatnonzero(report.flagged_mask())}
    assert set(result.new) | set(result.accepted) == flagged
    assert not set(result.new) & set(result.accepted)
    assert not {en.key for en in result.fixed} & found.keys
    # a baseline of the findings themselves leaves nothing new and nothing fixed
    own = subtract(report, found)
    assert own.new == () and own.fixed == () and set(own.accepted) == flagged
    assert found.keys - findings(report, per_source=per_source).keys == frozenset()
    assert gate(report, own, "new") is False and gate(report, own, "any") is bool(flagged)
    assert gate(report, result, "none") is False


def test_the_same_text_twice_is_one_finding() -> None:
    report = _report([POOL[0], POOL[0], POOL[1]], [True, True, False], [None, None, None])
    found = findings(report)
    assert len(found.entries) == 1 and found.entries[0].id == "e0"


def test_a_normalization_mismatch_is_a_usage_error() -> None:
    b = Baseline((), False, {"unicode": "NFKC", "casefold": False}, "b.json")
    report = _report([], [], [])
    b.check_normalization(None)  # not recorded: nothing to compare
    with pytest.raises(UsageError, match="b.json: written with normalization"):
        subtract(Report(examples=report.examples, config={"normalization": {"casefold": True}}), b)


def test_the_docs_name_the_schema() -> None:
    page = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "contam.baseline/1" in page and "sha256(fingerprint" in page
