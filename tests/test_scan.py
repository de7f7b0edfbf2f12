"""scan(): the reference fixtures, exact runs, and invariants that users rely on."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from conftest import CD, DECONTAM
from hypothesis import given, settings
from hypothesis import strategies as st

from contam_cli import ArgumentError, FlagPolicy, Record, scan, text_fingerprint
from contam_cli.io.model import Locator
from contam_cli.text import tokenize

CORPUS = CD / "examples" / "corpus"


def by_id(report):  # noqa: ANN001, ANN201
    return {e.id: e for e in report.examples}


@pytest.mark.parametrize("n", range(3, 21))
def test_contamination_detector_example_at_every_n(n: int) -> None:
    r = by_id(scan(CD / "examples" / "benchmark.jsonl", [CORPUS], n=n))
    for q in ("q1", "q2"):
        assert (r[q].overlap_fraction, r[q].longest_run, r[q].flagged) == (1.0, 23, True)
    for q in ("q3", "q4", "q5"):
        assert (r[q].overlap_fraction, r[q].longest_run, r[q].flagged) == (0.0, 0, False)


def test_contamination_detector_zscores_and_evidence() -> None:
    r = by_id(scan(CD / "examples" / "benchmark.jsonl", [CORPUS]))
    assert r["q1"].zscore == pytest.approx(1.2247, abs=1e-4)
    assert r["q3"].zscore == pytest.approx(-0.8165, abs=1e-4)
    ev = r["q1"].evidence
    assert ev is not None and ev.path.endswith("doc_contaminated.txt") and ev.line == 3
    doc = (CORPUS / "doc_contaminated.txt").read_text(encoding="utf-8")
    assert doc[ev.char_start : ev.char_end] == ev.text
    assert tokenize(ev.text) == tokenize(
        "The capital of Australia is Canberra, which was purpose built as a compromise between "
        "Sydney and Melbourne after federation in nineteen oh one"
    )


def test_n25_leaves_only_the_long_example_scorable() -> None:
    r = by_id(scan(CD / "examples" / "benchmark.jsonl", [CORPUS], n=25))
    assert [k for k, e in r.items() if e.scorable] == ["q3"]
    assert r["q1"].overlap_fraction is None and r["q1"].longest_run is None


@pytest.mark.parametrize("corpus", ["train.txt", "train.jsonl", "train_chat.jsonl"])
def test_decontam_example(corpus: str) -> None:
    report = scan(DECONTAM / "eval.jsonl", [DECONTAM / corpus], n=8)
    got = {e.id: (e.longest_run, e.matched_ngrams, e.total_ngrams) for e in report.flagged}
    assert got == {"0": (14, 7, 7), "2": (21, 14, 14), "4": (15, 8, 8)}
    # (decontam's "index 52 n-grams" counts the training side: 7 + 14 + 8 + 23 = 52.)
    assert report.stats["eval_ngrams_distinct"] == 7 + 9 + 14 + 7 + 8 + 8


def test_mixed_edge_cases() -> None:
    r = by_id(scan(CD / "derived" / "mixed_examples.jsonl", [CORPUS]))
    assert list(r) == ["s1", "2", "7", "c1"]  # missing id -> line number; integer id -> str
    assert not r["s1"].scorable and not r["s1"].flagged and r["s1"].n_tokens == 2
    assert r["2"].flagged and r["7"].flagged and r["2"].eval_line == 2 and r["7"].eval_line == 4
    assert r["c1"].overlap_fraction == pytest.approx(0.286, abs=1e-3) and r["c1"].longest_run == 14
    r5 = by_id(scan(CD / "derived" / "mixed_examples.jsonl", [CORPUS], n=5))
    assert (
        r5["c1"].overlap_fraction == pytest.approx(0.667, abs=1e-3) and r5["c1"].longest_run == 14
    )


def test_runs_are_never_chained_across_documents() -> None:
    r = scan(["A B C D"], ["A B C", "B C D"], n=3)
    assert r.examples[0].longest_run == 3
    assert r.examples[0].overlap_fraction == 1.0


def test_runs_are_never_chained_across_distant_positions() -> None:
    r = scan(["A B C D"], ["A B C x x x B C D"], n=3)
    assert r.examples[0].longest_run == 3


def test_longest_run_picks_the_longest_copy() -> None:
    ex = "one two three four five six seven eight nine ten"
    corpus = ["zero one two three four", "x four five six seven eight nine ten y"]
    e = scan([ex], corpus, n=3).examples[0]
    assert e.longest_run == 7 and e.evidence.text == "four five six seven eight nine ten"
    assert e.evidence.record == 1 and e.evidence.eval_token == 3


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(str.upper, id="upper"),
        pytest.param(lambda t: "  ".join(t.split()), id="double-spaces"),
        pytest.param(lambda t: t.replace(",", " ,").replace(".", " ;"), id="punctuation"),
        pytest.param(
            lambda t: t.translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)}), id="full-width"
        ),
        pytest.param(lambda t: t.replace(" ", "\n"), id="newlines"),
    ],
)
def test_light_edits_still_found(edit) -> None:  # noqa: ANN001
    text = (CD / "examples" / "benchmark.jsonl").read_text(encoding="utf-8").splitlines()[0]
    example = text.split('"text": "')[1].rstrip('"}')
    e = scan([example], ["prefix words " + edit(example) + " suffix words"]).examples[0]
    assert e.overlap_fraction == 1.0 and e.longest_run == len(tokenize(example))


def test_sources_are_kept_apart() -> None:
    ex = "alpha beta gamma delta epsilon zeta eta theta"
    r = scan([ex], {"train": ["alpha beta gamma delta"], "test": [ex]}, n=3).examples[0]
    assert r.best_source == "test" and r.matched_sources == ("train", "test")
    assert r.per_source["train"].longest_run == 4 and r.per_source["test"].longest_run == 8


def test_zscore_rule_is_off_by_default_and_applies_only_with_a_match() -> None:
    exs = ["w0 w1 w2 w3 w4 common phrase here now", "a b c d", "e f g h", "i j k l", "m n o p"]
    corpus = ["x common phrase here now y"]
    assert not scan(exs, corpus, n=3).contaminated
    flagged = scan(exs, corpus, n=3, policy=FlagPolicy(min_overlap=None, min_run=None, zscore=1.5))
    assert [e.id for e in flagged.flagged] == ["0"]
    assert flagged.examples[0].reasons[0].rule == "zscore"


def test_generator_corpus_is_streamed() -> None:
    def docs():  # noqa: ANN202
        yield from (f"filler text number {i}" for i in range(1000))
        yield "the leaked example sits right here in the middle"

    e = scan(["the leaked example sits right here"], docs(), n=3).examples[0]
    assert e.longest_run == 6 and e.evidence.record == 1000


def test_records_and_dict_records_are_accepted_but_a_mapping_is_not_an_eval_set() -> None:
    rec = Record("x1", "one two three four", Locator("mem"))
    assert scan([rec], ["one two three four"], n=2).examples[0].id == "x1"
    got = scan([{"id": "k", "question": "one two three"}], ["one two three"], n=2).examples[0]
    assert got.id == "k" and got.overlap_fraction == 1.0
    with pytest.raises(ArgumentError, match="mapping"):
        scan({"k": "one two three"}, ["one two three"], n=2)


WORDS = st.sampled_from("the cat sat on a mat with hat bat rat".split())
DOC = st.lists(WORDS, min_size=0, max_size=25).map(" ".join)


def _key(report):  # noqa: ANN001, ANN202
    return [
        (e.id, e.overlap_fraction, e.longest_run, e.matched_ngrams, e.flagged)
        for e in report.examples
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(DOC, min_size=1, max_size=6),
    st.lists(DOC, min_size=1, max_size=12),
    st.integers(2, 5),
    st.integers(0, 2**32 - 1),
)
def test_results_independent_of_chunking_and_corpus_order(evals, corpus, n, seed) -> None:  # noqa: ANN001
    base = scan(evals, corpus, n=n, chunk_bytes=1 << 20)
    shuffled = list(corpus)
    random.Random(seed).shuffle(shuffled)
    assert _key(scan(evals, shuffled, n=n, chunk_bytes=1)) == _key(base)
    assert _key(scan(evals, corpus, n=n, chunk_bytes=37)) == _key(base)


@settings(max_examples=60, deadline=None)
@given(DOC, st.lists(DOC, max_size=4), st.integers(1, 6))
def test_example_inside_the_corpus_is_found_whole(example, others, n) -> None:  # noqa: ANN001
    toks = tokenize(example)
    e = scan([example], [*others, "zz " + example + " zz"], n=n).examples[0]
    if len(toks) < n:
        assert not e.scorable
    else:
        assert e.overlap_fraction == 1.0 and e.longest_run == len(toks)


def test_files_and_paths(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.jsonl").write_text(
        '{"text": "one two three four five"}\n', encoding="utf-8", newline="\n"
    )
    (tmp_path / "e.jsonl").write_text(
        '{"id": "a", "text": "two three four"}\n', encoding="utf-8", newline="\n"
    )
    r = scan(tmp_path / "e.jsonl", [tmp_path / "c"], n=3)
    assert r.examples[0].evidence.path == str(tmp_path / "c" / "a.jsonl")
    assert r.examples[0].evidence.line == 1
    assert r.inputs["eval"][0]["records"] == 1 and len(r.inputs["eval"][0]["sha256"]) == 64


def test_compiled_and_numpy_paths_give_identical_reports() -> None:
    pytest.importorskip("numba")
    for n in (3, 5, 13):
        base = scan(CD / "derived" / "mixed_examples.jsonl", [CORPUS], n=n, accel=False)
        fast = scan(CD / "derived" / "mixed_examples.jsonl", [CORPUS], n=n, accel=True)
        assert fast == base


def test_fingerprints_survive_reordering_and_light_edits_and_ignore_the_source() -> None:
    a = "Alpha beta gamma delta epsilon zeta"
    corpus = [a]
    one = scan([a, "unrelated words here too"], corpus, n=3).examples[0]
    other = scan(
        ["unrelated words here too", "ALPHA, beta; gamma delta epsilon zeta!"], corpus, n=3
    ).examples[1]
    assert one.fingerprint == other.fingerprint
    elsewhere = scan([a], {"test": corpus}, n=3).examples[0]
    assert elsewhere.fingerprint == one.fingerprint == text_fingerprint(a)
    assert text_fingerprint(a, source="test") != one.fingerprint


def test_json_array_with_lone_surrogate_escape_scans(tmp_path: Path) -> None:
    ev = tmp_path / "eval.json"
    ev.write_text(
        '[{"id": "a", "text": "one two three\\ud800 four five six"}]',
        encoding="utf-8",
        newline="\n",
    )
    e = scan(ev, ["x one two three four five six y"], n=3).examples[0]
    assert e.overlap_fraction == 1.0 and e.longest_run == 6
