"""scan() with the fuzzy detector: a reworded leak the exact detector misses is flagged, with
evidence; results do not depend on --jobs or the chunk size; short examples stay unscorable;
with the detector off nothing of the exact scan changes; each batch is tokenized once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contam_cli.engine.shards as shards_module
from contam_cli import scan
from contam_cli.engine.accumulator import Accumulator
from contam_cli.engine.corpus_pass import new_accumulator
from contam_cli.engine.eval_index import build_eval_index
from contam_cli.engine.fuzzy import FuzzyConfig, build_fuzzy_index
from contam_cli.engine.fuzzy.shared import OneStream, WithFuzzy, add_both
from contam_cli.engine.match import DocBatch
from contam_cli.engine.options import ScanOptions
from contam_cli.errors import ArgumentError, UsageError
from contam_cli.features.bench.edits import Thesaurus, reword_hard
from contam_cli.features.bench.textmodel import TextModel
from contam_cli.io.model import Locator, Record
from contam_cli.policy import FlagPolicy
from contam_cli.text import Tokenizer, tokenize

FUZZY = FuzzyConfig()


def _leak(seed: int = 7) -> tuple[str, str, list[str], str]:
    """(example, its reworded copy, other texts, a document holding the copy): the copy shares
    no 8-gram with the example (features.bench.edits.reword_hard)."""
    rng = np.random.default_rng(seed)
    model = TextModel.build(rng)
    thesaurus = Thesaurus.build(model, rng)
    drafts = model.drafts(rng, np.array([60, 60, 50, 300, 300]))
    example = drafts[0].text(model)
    copy = reword_hard(drafts[0], model, thesaurus, rng).text(model)
    others = [d.text(model) for d in drafts[1:3]]
    doc = drafts[3].text(model) + " " + copy + " " + drafts[4].text(model)
    return example, copy, others, doc


EXAMPLE, COPY, OTHERS, DOC = _leak()


def _no_shared_ngram(a: str, b: str, n: int) -> bool:
    ta, tb = tokenize(a), tokenize(b)
    grams = {tuple(ta[i : i + n]) for i in range(len(ta) - n + 1)}
    return not any(tuple(tb[i : i + n]) in grams for i in range(len(tb) - n + 1))


def test_a_reworded_leak_the_exact_detector_misses_is_flagged_with_evidence() -> None:
    assert _no_shared_ngram(EXAMPLE, COPY, 8)
    evals = [EXAMPLE, *OTHERS]
    corpus = [DOC, OTHERS[0][:40] + " unrelated words"]
    exact = scan(evals, corpus)
    assert not exact.examples[0].flagged
    found = scan(evals, corpus, fuzzy=FUZZY)
    e = found.examples[0]
    assert e.flagged and [r.rule for r in e.reasons] == ["min-fuzzy"]
    assert e.reasons[0].detector == "fuzzy" and e.reasons[0].source == "corpus"
    assert e.scores["fuzzy"] >= 0.5 and e.fuzzy is not None
    ev = e.fuzzy.evidence
    assert ev is not None and ev.text is not None and ev.text in DOC
    assert DOC[ev.char_start : ev.char_end] == ev.text
    for pair in ev.pairs:  # both sides of every pair are the same token
        et, dt, ea, eb, da, db = pair
        assert tokenize(EXAMPLE[ea:eb]) == tokenize(DOC[da:db])
    assert [x.flagged for x in found.examples[1:]] == [False, False]


def test_a_verbatim_copy_scores_one() -> None:
    r = scan([EXAMPLE], [f"before it. {EXAMPLE} after it."], fuzzy=FUZZY)
    e = r.examples[0]
    assert e.scores["fuzzy"] == pytest.approx(1.0) and e.fuzzy.aligned_fraction == 1.0
    assert e.fuzzy.identity == 1.0
    assert {r.detector for r in e.reasons} == {"ngram", "fuzzy"}


def test_min_fuzzy_none_turns_the_rule_off_and_a_higher_one_does_not_fire() -> None:
    for policy in (FlagPolicy(min_fuzzy=None), FlagPolicy(min_fuzzy=0.99)):
        r = scan([EXAMPLE], [DOC], fuzzy=FUZZY, policy=policy)
        assert not r.examples[0].flagged and r.examples[0].scores["fuzzy"] > 0.5
    assert r.config["policy"]["min_fuzzy"] == 0.99


def test_short_examples_stay_unscorable_and_never_clean() -> None:
    short = " ".join(EXAMPLE.split()[:15])  # scorable at n=13, too short for fuzzy (< 20)
    tiny = " ".join(EXAMPLE.split()[:5])
    r = scan([short, tiny], [DOC], fuzzy=FUZZY)
    a, b = r.examples
    assert a.scores["fuzzy"] is None and a.fuzzy is not None and not a.fuzzy.scorable
    assert a.fuzzy.aligned_fraction is None and a.scores["longest_run"] is not None
    assert all(v is None for v in b.scores.values()) and not b.scorable
    assert r.summary()["unscorable"] == 1 and r.stats["fuzzy_unscorable"] == 2
    doc = orjson.loads(b"".join(_json(r)))
    assert doc["examples"][0]["scores"]["fuzzy"] is None
    assert doc["examples"][0]["details"]["fuzzy"]["aligned_fraction"] is None


def _json(report):  # noqa: ANN001, ANN202
    from contam_cli.report import iter_json

    return iter_json(report)


def test_off_the_exact_report_is_unchanged_and_on_it_only_adds() -> None:
    evals = [EXAMPLE, *OTHERS]
    off = scan(evals, [DOC]).to_dict()
    on = scan(evals, [DOC], fuzzy=FUZZY).to_dict()
    assert "fuzzy" not in off["config"] and "min_fuzzy" not in off["config"]["policy"]
    assert [m["name"] for m in on["methods"]] == [m["name"] for m in off["methods"]] + ["fuzzy"]
    for a, b in zip(off["examples"], on["examples"]):
        assert b["details"]["ngram"] == a["details"]["ngram"]
        assert {k: v for k, v in b["scores"].items() if k != "fuzzy"} == a["scores"]
        assert [r for r in b["reasons"] if r["detector"] == "ngram"] == a["reasons"]


def _corpus_files(d: Path, docs: list[str]) -> list[Path]:
    half = len(docs) // 2
    out = []
    for name, part in (("a.jsonl", docs[:half]), ("b.jsonl", docs[half:])):
        if part:
            (d / name).write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in part))
            out.append(d / name)
    return out


@settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    order=st.permutations(list(range(6))),
    split=st.integers(200, 3000),
    chunk=st.integers(64, 4096),
)
def test_results_are_identical_for_any_jobs_and_chunk_size(
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    order: list[int],
    split: int,
    chunk: int,
) -> None:
    pieces = [DOC, COPY, OTHERS[0], OTHERS[1], EXAMPLE[:200], DOC[: len(DOC) // 2]]
    files = _corpus_files(tmp_path_factory.mktemp("c"), [pieces[k] for k in order])
    monkeypatch.setattr(shards_module, "SHARD_BYTES", split)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", split)
    evals = [EXAMPLE, *OTHERS]
    one = scan(evals, files, fuzzy=FUZZY, jobs=1, hash_corpus=False).to_dict()
    assert one["examples"][0]["flagged"]
    for jobs, chunk_bytes in ((2, 1 << 20), (3, chunk), (1, chunk)):
        other = scan(evals, files, fuzzy=FUZZY, jobs=jobs, chunk_bytes=chunk_bytes)
        assert other.to_dict()["examples"] == one["examples"]


def test_byte_range_shards_give_file_lines_and_records_to_the_fuzzy_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [f"filler line {i} with a few other words" for i in range(300)]
    lines[200] = DOC
    f = tmp_path / "big.jsonl"
    f.write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in lines))
    monkeypatch.setattr(shards_module, "SHARD_BYTES", 4000)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", 4000)
    for jobs in (1, 2):
        ev = scan([EXAMPLE], [f], fuzzy=FUZZY, jobs=jobs).examples[0].fuzzy.evidence
        assert ev is not None and (ev.path, ev.line, ev.record) == (str(f), 201, 200)
        assert ev.doc_id == "201"  # a whole read's id for a record without one: its line


def test_each_batch_is_tokenized_once(monkeypatch: pytest.MonkeyPatch) -> None:
    tk = Tokenizer()
    calls = []
    real = tk.tokens
    monkeypatch.setattr(tk, "tokens", lambda docs: calls.append(docs) or real(docs))
    index = build_eval_index([EXAMPLE], 13)
    fuzzy = build_fuzzy_index([EXAMPLE], config=FUZZY)
    acc = new_accumulator(index, ["s"], False, fuzzy)
    assert isinstance(acc, WithFuzzy)
    rec = Record("d", DOC, Locator("c.jsonl", 1))
    batch = DocBatch(0, [DOC.encode()], np.zeros(1, np.int64), lambda d: rec)
    add_both(acc, index, fuzzy, tk, batch)
    assert len(calls) == 1 and acc.fuzzy.best_h[0, 0] > 0
    assert acc.documents.tolist() == [1] and acc.fuzzy.documents.tolist() == [1]
    stream = real([b"x y"])
    assert OneStream(tk, [b"x y"], stream).tokens([b"x y"]) is not stream  # another list
    assert type(new_accumulator(index, ["s"], False)) is Accumulator


def test_a_fuzzy_merge_needs_fuzzy_parts() -> None:
    index = build_eval_index([EXAMPLE], 13)
    acc = new_accumulator(index, ["s"], False, build_fuzzy_index([EXAMPLE], config=FUZZY))
    with pytest.raises(TypeError):
        acc.merge(new_accumulator(index, ["s"], False))


def test_what_the_fuzzy_detector_refuses(tmp_path: Path) -> None:
    with pytest.raises(ArgumentError, match="one-shot"):
        scan((t for t in [EXAMPLE]), [DOC], fuzzy=FUZZY)
    idx = tmp_path / "idx"
    with pytest.raises(UsageError, match="not --index"):
        scan([EXAMPLE], index=idx, fuzzy=FUZZY)
    with pytest.raises(ArgumentError, match="FuzzyConfig"):
        ScanOptions(fuzzy={"max_gap": 3})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="min-fuzzy"):
        FlagPolicy(min_fuzzy=1.5)
