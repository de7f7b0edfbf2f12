"""Boilerplate suppression: --ignore-common (document frequency, two passes) and --ignore-from."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import contam_cli.engine.shards as shards_module
from contam_cli import FlagPolicy, ScanOptions, scan
from contam_cli.engine.doc_frequency import DocFrequency, document_frequency
from contam_cli.engine.eval_index import build_eval_index
from contam_cli.engine.executor import InProcess
from contam_cli.engine.shards import Source
from contam_cli.errors import ArgumentError, InputError
from contam_cli.features.bench.boilerplate_set import boilerplate_set
from contam_cli.text import tokenize

WORDS = st.sampled_from("the cat sat on a mat with hat bat rat dog".split())
DOC = st.lists(WORDS, min_size=0, max_size=25).map(" ".join)
LICENCE = "permission is hereby granted free of charge to any person obtaining a copy"


def _ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    t = tokenize(text)
    return {tuple(t[i : i + n]) for i in range(len(t) - n + 1)}


@settings(max_examples=40, deadline=None)
@given(evals=st.lists(DOC, min_size=1, max_size=4), docs=st.lists(DOC, max_size=30))
def test_document_frequency_counts_each_document_once(evals: list[str], docs: list[str]) -> None:
    index = build_eval_index(evals, 2)
    got = document_frequency(index, [Source("c", stream=docs)], ScanOptions(n=2), InProcess())
    in_docs = [_ngrams(d, 2) for d in docs]
    tokens = [tokenize(e) for e in evals]
    # Each occurrence (example, position) of the index names its gram: compare through it.
    places = np.repeat(np.arange(len(index.grams)), index.occ_range(np.arange(len(index.grams)))[1])
    for j, (e, pos) in enumerate(zip(index.occ_ex.tolist(), index.occ_pos.tolist())):
        gram = tuple(tokens[e][pos : pos + 2])
        assert got[places[j]] == sum(gram in d for d in in_docs)


def test_counts_travel_sparse_and_merge_by_addition() -> None:
    a = DocFrequency(1000)
    a.counts[[3, 999]] = [2, 5]
    b = pickle.loads(pickle.dumps(a))
    assert np.array_equal(b.counts, a.counts)
    b.merge(a)
    assert b.counts[3] == 4 and b.counts[999] == 10 and b.counts.sum() == 14


def test_an_ignored_window_splits_the_run_on_paper(tmp_path: Path) -> None:
    # Tokens a..g, n = 3: windows w0 (a b c) .. w4 (e f g). Ignoring w2 (c d e) leaves the
    # stretches w0-w1 (tokens a..d) and w3-w4 (tokens d..g): runs of 2 + 3 - 1 = 4 tokens.
    collection = tmp_path / "boilerplate.txt"
    collection.write_text("c d e", encoding="utf-8", newline="\n")
    plain = scan(["a b c d e f g"], ["x a b c d e f g y"], n=3).examples[0]
    cut = scan(["a b c d e f g"], ["x a b c d e f g y"], n=3, ignore_from=(collection,))
    e = cut.examples[0]
    assert (plain.longest_run, plain.total_ngrams) == (7, 5)
    assert e.longest_run == 4 and e.overlap_fraction == 1.0
    assert e.ngram is not None and (e.ngram.total_ngrams, e.ngram.ignored_ngrams) == (4, 1)
    assert e.evidence is not None and e.evidence.text in ("a b c d", "d e f g")
    assert cut.config["boilerplate"] == {
        "ignore_common": None,
        "ignore_from": [str(collection)],
        "ignored_ngrams": 1,
    }


def _reference(ev: str, docs: list[str], ignored: set[tuple[str, ...]], n: int) -> tuple:
    """(kept distinct, matched distinct, run) by brute force: a run is the longest stretch of
    consecutive kept windows found at consecutive places of one document, plus n - 1 tokens."""
    e = tokenize(ev)
    windows = [tuple(e[i : i + n]) for i in range(len(e) - n + 1)]
    kept = [w not in ignored for w in windows]
    in_docs = set().union(*(_ngrams(d, n) for d in docs)) if docs else set()
    distinct = {w for w, k in zip(windows, kept) if k}
    best = 0
    for d in docs:
        t = tokenize(d)
        for i in range(len(windows)):
            for c in range(len(t) - n + 1):
                k = 0
                while (
                    i + k < len(windows)
                    and kept[i + k]
                    and tuple(t[c + k : c + k + n]) == windows[i + k]
                ):
                    k += 1
                best = max(best, k)
    return len(distinct), len(distinct & in_docs), best + n - 1 if best else 0


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    ev=DOC, docs=st.lists(DOC, min_size=1, max_size=6), junk=st.lists(DOC, min_size=1, max_size=3)
)
def test_ignored_ngrams_match_a_brute_force_reference(
    tmp_path_factory: pytest.TempPathFactory, ev: str, docs: list[str], junk: list[str]
) -> None:
    n = 2
    path = tmp_path_factory.mktemp("coll") / "boilerplate.jsonl"
    path.write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in junk))
    ignored = set().union(*(_ngrams(t, n) for t in junk))
    got = scan([ev], docs, n=n, ignore_from=(path,)).examples[0]
    kept, matched, run = _reference(ev, docs, ignored, n)
    assert got.ngram is not None and got.ngram.total_ngrams == kept
    assert got.ngram.matched_ngrams == matched and (got.longest_run or 0) == run
    assert got.ngram.ignored_ngrams == len(_ngrams(ev, n) & ignored)


def test_common_ngrams_count_neither_toward_overlap_nor_runs() -> None:
    corpus = [f"notice {i}: {LICENCE}" for i in range(25)] + ["the secret answer is forty two"]
    evals = [f"my question quotes {LICENCE} today", "so the secret answer is forty two ok"]
    plain = scan(evals, corpus, n=4)
    cut = scan(evals, corpus, n=4, ignore_common=20)
    assert plain.examples[0].longest_run == 13 and cut.examples[0].longest_run == 0
    assert cut.examples[0].overlap_fraction == 0.0
    e = cut.examples[0].ngram
    # 17 tokens, 14 four-grams: the 10 inside the licence sentence are in 25 documents.
    assert e is not None and e.ignored_ngrams == 10 and e.total_ngrams == 4
    # The real leak is in one document: untouched.
    assert cut.examples[1].longest_run == plain.examples[1].longest_run == 6
    assert cut.config["boilerplate"]["ignore_common"] == 20
    # Above K only: with K = 25 every licence n-gram (in exactly 25 documents) still counts.
    assert scan(evals, corpus, n=4, ignore_common=25).examples[0].longest_run == 13


def test_an_example_of_nothing_but_boilerplate_is_unscorable_with_a_warning() -> None:
    corpus = [f"notice {i}: {LICENCE}" for i in range(25)]
    report = scan([LICENCE, f"{LICENCE} and more words"], corpus, n=4, ignore_common=3)
    only, more = report.examples
    assert only.scorable is False and only.overlap_fraction is None and not only.flagged
    assert more.scorable is True
    assert report.summary()["unscorable"] == 1 and report.summary()["clean"] == 1
    assert any("1 example(s) have every n-gram ignored" in w for w in report.warnings)


def test_a_leak_in_more_than_k_documents_is_clean_only_with_a_warning() -> None:
    # The benchmark is copied onto more pages than K: its n-grams are ignored as common, the
    # few n-grams of its unleaked answer are kept, so it scores 0; the report must say so.
    leak = "the seventeen purple elephants recite ancient poetry about quantum chromodynamics"
    corpus = [f"page {i}: {leak}" for i in range(6)] + ["an unrelated page about gardening"]
    report = scan(
        [f"{leak} answer zebra", "nothing of it is anywhere"], corpus, n=4, ignore_common=5
    )
    e = report.examples[0]
    assert e.scorable and not e.flagged and e.ngram is not None
    assert (e.ngram.ignored_ngrams, e.ngram.total_ngrams) == (7, 2)
    found = [w for w in report.warnings if "most of their n-grams ignored" in w]
    assert found == [
        "1 example(s) have most of their n-grams ignored as boilerplate "
        "(details.ngram.ignored_ngrams): their verdict rests on the few left, and a leak in "
        "more than 5 documents is ignored too"
    ]
    # Half or less ignored, or nothing ignored: no such warning.
    assert not any("most of" in w for w in scan([leak], corpus, n=4).warnings)
    kept = scan(
        [f"{leak} and then eleven more words of text nobody ever wrote"],
        corpus,
        n=4,
        ignore_common=5,
    )
    assert not any("most of" in w for w in kept.warnings)


def test_options_off_leave_the_report_as_it_was() -> None:
    report = scan(["the cat sat on the mat"], ["the cat sat on the mat"], n=3)
    assert "boilerplate" not in report.config
    assert all(e.ngram is not None and e.ngram.ignored_ngrams == 0 for e in report.examples)


def test_option_checks() -> None:
    with pytest.raises(ArgumentError):
        ScanOptions(ignore_common=-1)
    with pytest.raises(ArgumentError):
        ScanOptions(ignore_from="licences")  # type: ignore[arg-type]
    given = ScanOptions(ignore_from=["a", Path("b")])  # type: ignore[arg-type]
    assert given.ignore_from == (Path("a"), Path("b"))
    with pytest.raises(ArgumentError, match="twice"):
        scan(["a b c"], iter(["a b c d"]), n=2, ignore_common=1)
    assert scan(["a b c"], ["a b c d"], n=2, ignore_common=1).examples[0].longest_run == 3


def test_collections_of_any_readable_file(tmp_path: Path) -> None:
    lic = tmp_path / "licences"
    (lic / "sub").mkdir(parents=True)
    (lic / "GPL-3").write_text(
        f"Preamble.\n{LICENCE}\nmore", encoding="utf-8", newline="\n"
    )  # no suffix: plain text
    (lic / "sub" / "templates.jsonl").write_bytes(orjson.dumps({"text": "answer step by step"}))
    (lic / ".hidden").write_bytes(b"\xff\xfe")  # hidden files are skipped
    evals = [f"q1 {LICENCE} end", "please answer step by step now"]
    report = scan(evals, ["unrelated corpus text"], n=4, ignore_from=(lic,))
    a, b = (e.ngram for e in report.examples)
    assert a is not None and b is not None
    assert a.ignored_ngrams == len(_ngrams(LICENCE, 4)) and b.ignored_ngrams == 1
    (lic / "binary.bin").write_bytes(b"\xff\xfe")
    with pytest.raises(InputError, match="binary.bin"):
        scan(evals, ["unrelated corpus text"], n=4, ignore_from=(lic,))
    with pytest.raises(InputError, match="nope"):
        scan(evals, ["unrelated corpus text"], n=4, ignore_from=(tmp_path / "nope",))


def test_boilerplate_benchmark_suppressed_and_every_real_leak_kept(tmp_path: Path) -> None:
    data = boilerplate_set(0)
    files = data.write(tmp_path)
    policy = FlagPolicy(min_run=20)
    kinds = [e.kind for e in data.examples]
    assert {data.holders[e.id] for e in data.examples if e.kind == "boilerplate"} <= set(
        range(50, 201)
    )
    assert {data.holders[e.id] for e in data.examples if e.label} <= {1, 2, 3}
    for common, boiler_flagged in ((None, True), (20, False)):
        report = scan(files["eval"], files["corpus"], policy=policy, ignore_common=common)
        flagged = report.flagged_mask().tolist()
        by_kind = {k: {f for f, kk in zip(flagged, kinds) if kk == k} for k in set(kinds)}
        assert by_kind["boilerplate"] == {boiler_flagged}
        assert by_kind["verbatim"] == by_kind["partial"] == {True}
        assert by_kind["clean"] == {False}
    report = scan(
        files["eval"], files["corpus"], policy=policy, ignore_from=(files["boilerplate"],)
    )
    assert report.flagged_mask().tolist() == [e.label == 1 for e in data.examples]


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(split=st.integers(300, 3000), k=st.integers(0, 4))
def test_ignore_common_is_the_same_with_one_or_two_workers(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, split: int, k: int
) -> None:
    d = tmp_path_factory.mktemp("bp")
    docs = [f"doc {i} says {LICENCE}" if i % 3 else f"doc {i} the cat sat" for i in range(60)]
    for name, part in (("a.jsonl", docs[:25]), ("b.jsonl", docs[25:])):
        (d / name).write_bytes(b"".join(orjson.dumps({"text": t}) + b"\n" for t in part))
    monkeypatch.setattr(shards_module, "SHARD_BYTES", split)
    monkeypatch.setattr(shards_module, "MIN_SHARD_BYTES", split)
    evals = [f"q {LICENCE} x", "doc 7 the cat sat on", "doc 1 says permission is hereby"]
    files = [d / "a.jsonl", d / "b.jsonl"]
    one = scan(evals, files, n=3, jobs=1, ignore_common=k * 10)
    two = scan(evals, files, n=3, jobs=2, ignore_common=k * 10)
    assert two.to_dict() == one.to_dict()
