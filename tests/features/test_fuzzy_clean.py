"""The fuzzy detector in clean, calibrate and the flag policy: reworded leaks removed from the
eval set and cut out of the corpus (every copy), per-source fuzzy thresholds measured, saved,
validated and applied."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

from contam_cli import scan
from contam_cli.cli import app
from contam_cli.engine.fuzzy import FuzzyConfig
from contam_cli.errors import UsageError
from contam_cli.features.bench.edits import Thesaurus, reword_hard
from contam_cli.features.bench.textmodel import TextModel
from contam_cli.features.calibrate import calibrate
from contam_cli.features.clean import clean_corpus, clean_eval
from contam_cli.policy import FlagPolicy, SourceThreshold
from contam_cli.policy.thresholds import Thresholds, load_thresholds, parse_thresholds
from contam_cli.stats.percentile import percentile

FUZZY = FuzzyConfig()


def _texts(seed: int) -> tuple[list[str], list[str], list[str]]:
    """Three examples, a reworded copy of each, and long filler documents."""
    rng = np.random.default_rng(seed)
    model = TextModel.build(rng)
    thesaurus = Thesaurus.build(model, rng)
    drafts = model.drafts(rng, np.array([60, 60, 60, 300, 300, 300]))
    examples = [d.text(model) for d in drafts[:3]]
    copies = [reword_hard(d, model, thesaurus, rng).text(model) for d in drafts[:3]]
    return examples, copies, [d.text(model) for d in drafts[3:]]


EXAMPLES, COPIES, FILLER = _texts(5)


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """eval: leak (reworded in the corpus, twice), clean one; corpus: a JSONL file and a text
    file each holding the copy inside filler."""
    ev = _jsonl(
        tmp_path / "eval.jsonl",
        [{"id": "leak", "text": EXAMPLES[0]}, {"id": "ok", "text": EXAMPLES[1]}],
    )
    corpus = tmp_path / "corpus"
    _jsonl(
        corpus / "a.jsonl",
        [{"text": FILLER[0] + " " + COPIES[0] + " " + FILLER[1]}, {"text": FILLER[2]}],
    )
    (corpus / "b.txt").write_text(
        FILLER[1] + "\n\n" + COPIES[0] + "\n", encoding="utf-8", newline="\n"
    )
    return {"eval": ev, "corpus": corpus, "dir": tmp_path}


def test_clean_eval_removes_the_reworded_leak_and_says_why(files: dict[str, Path]) -> None:
    out, dirty = files["dir"] / "clean.jsonl", files["dir"] / "dirty.jsonl"
    plain = clean_eval(files["eval"], files["corpus"], out, force=True)
    assert not plain.removed  # the exact detector misses it
    got = clean_eval(files["eval"], files["corpus"], out, dirty_output=dirty, fuzzy=FUZZY)
    assert [e.id for e in got.removed] == ["leak"]
    assert [r.rule for r in got.removed[0].reasons] == ["min-fuzzy"]
    assert [orjson.loads(x)["id"] for x in out.read_bytes().splitlines()] == ["ok"]
    assert [orjson.loads(x)["id"] for x in dirty.read_bytes().splitlines()] == ["leak"]


def test_clean_corpus_cuts_every_reworded_copy(files: dict[str, Path]) -> None:
    kw = {"window": 20, "min_piece": 40}
    plain = clean_corpus(files["eval"], files["corpus"], files["dir"] / "plain", **kw)
    assert not plain.changed  # no eval n-gram in the corpus
    out = files["dir"] / "out"
    got = clean_corpus(files["eval"], files["corpus"], out, fuzzy=FUZZY, **kw)
    stats = {Path(f.input).name: f for f in got.files}
    assert stats["a.jsonl"].cut == 1 and stats["a.jsonl"].kept == 1
    assert stats["b.txt"].cut + stats["b.txt"].dropped == 1
    assert got.config["min_fuzzy"] == 0.5 and got.config["fuzzy"]["min_tokens"] == 20
    for copy_text in (COPIES[0][:60], COPIES[0][-60:]):
        assert copy_text not in (out / "a.jsonl").read_text(encoding="utf-8")
    assert FILLER[2] in (out / "a.jsonl").read_text(
        encoding="utf-8"
    )  # the other document is untouched
    again = scan(files["eval"], out, fuzzy=FUZZY)
    assert not again.contaminated and (again.examples[0].scores["fuzzy"] or 0) < 0.5


def test_clean_corpus_flagged_only_cuts_only_flagged_examples(files: dict[str, Path]) -> None:
    kw = {"window": 20, "min_piece": 40, "flagged_only": True, "fuzzy": FUZZY}
    got = clean_corpus(files["eval"], files["corpus"], files["dir"] / "o1", **kw)
    assert got.changed and got.report is not None and got.report.contaminated
    strict = FlagPolicy(min_fuzzy=0.99)
    none = clean_corpus(files["eval"], files["corpus"], files["dir"] / "o2", policy=strict, **kw)
    assert not none.changed and none.config["fuzzy_examples"] == 0


def test_clean_with_the_fuzzy_detector_needs_its_rule(files: dict[str, Path]) -> None:
    with pytest.raises(UsageError, match="min-fuzzy"):
        clean_corpus(
            files["eval"],
            files["corpus"],
            files["dir"] / "o",
            fuzzy=FUZZY,
            policy=FlagPolicy(min_fuzzy=None),
        )
    assert not (files["dir"] / "o").exists()


# -- per-source thresholds -----------------------------------------------------------------------


def _sources(tmp_path: Path) -> dict[str, Path]:
    """Source "copies" holds reworded copies of the controls, "other" filler only."""
    (tmp_path / "copies.txt").write_text(" ".join(COPIES), encoding="utf-8", newline="\n")
    (tmp_path / "other.txt").write_text(" ".join(FILLER), encoding="utf-8", newline="\n")
    return {"copies": tmp_path / "copies.txt", "other": tmp_path / "other.txt"}


def test_calibrate_fuzzy_measures_each_source_with_the_percentile_rule(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    controls = [*EXAMPLES, "too short for the fuzzy detector but long enough for n"]
    t = calibrate(sources, controls, n=5, percentile=50, fuzzy=FUZZY)
    report = scan(controls, sources, n=5, fuzzy=FUZZY)
    for name in sources:
        scores = [
            np.nan if e.fuzzy.score is None else e.fuzzy.per_source.get(name, 0.0)
            for e in report.examples
        ]
        assert t[name].fuzzy == min(1.0, percentile(np.array(scores), 50))
        assert t[name].controls == 3  # scored by both detectors
    assert t["copies"].fuzzy > 0.5 > t["other"].fuzzy
    assert t.fuzzy == report.config["fuzzy"]
    path = tmp_path / "t.json"
    t.save(path)
    assert load_thresholds(path) == t
    plain = calibrate(sources, controls, n=5, percentile=50)
    assert all(v.fuzzy is None for v in plain.values()) and b'"fuzzy"' not in plain.to_json()


def test_source_fuzzy_thresholds_flag_and_name_their_source(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    t = Thresholds({"copies": SourceThreshold(fuzzy=0.3), "other": SourceThreshold(fuzzy=0.9)})
    policy = FlagPolicy(min_fuzzy=None, thresholds=t)
    r = scan([EXAMPLES[0]], sources, fuzzy=FUZZY, policy=policy)
    (reason,) = r.examples[0].reasons
    assert (reason.rule, reason.source, reason.threshold) == ("source-fuzzy", "copies", 0.3)
    assert str(reason) == f"fuzzy {reason.value:.3f} >= 0.3 in copies"
    assert r.config["policy"]["source_thresholds"]["copies"]["fuzzy"] == 0.3
    # The same thresholds without the fuzzy detector are refused: their rule would be dropped
    # without a word, and a scan that nothing flags would pass (it did).
    with pytest.raises(UsageError, match=r"holds fuzzy thresholds \(source 'copies', 'other'\)"):
        scan([EXAMPLES[0]], sources, policy=policy)


def test_fuzzy_thresholds_of_other_settings_are_refused(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    t = calibrate(sources, EXAMPLES, n=5, percentile=50, fuzzy=FUZZY)
    other = FuzzyConfig(max_gap=2)
    with pytest.raises(UsageError, match="max_gap"):
        scan([EXAMPLES[0]], sources, n=5, fuzzy=other, policy=FlagPolicy(thresholds=t))


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"fuzzy": 1.5}, "fuzzy must be a number in"),
        ({"fuzzy": "high"}, "fuzzy must be a number in"),
        ({"controls": 3}, "needs longest_run, overlap_fraction or fuzzy"),
        ({"fuzzy": 0.4, "fuzz": 1}, "unknown key 'fuzz'"),
    ],
)
def test_thresholds_files_validate_the_fuzzy_key(entry: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_thresholds({"sources": {"web": entry}}, "t.json")
    with pytest.raises(UsageError, match="fuzzy must be an object"):
        parse_thresholds({"fuzzy": 3, "sources": {"web": {"fuzzy": 0.4}}}, "t.json")
    assert parse_thresholds({"sources": {"web": {"fuzzy": 0.4}}}, "t.json")["web"].fuzzy == 0.4


def test_calibrate_command_writes_fuzzy_thresholds(tmp_path: Path) -> None:
    sources = _sources(tmp_path)
    controls = _jsonl(tmp_path / "controls.jsonl", [{"text": t} for t in EXAMPLES])
    out = tmp_path / "t.json"
    args = ["calibrate", "--controls", controls, "-o", out, "-n", "5", "--fuzzy"]
    args += [f"--source={k}={v}" for k, v in sources.items()]
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "fuzzy threshold" in result.stdout
    t = load_thresholds(out)
    assert t["copies"].fuzzy is not None and t.fuzzy is not None
