"""The labelled detector benchmark stays HARD, and its plants are what the labels say.

Overlap is computed here with a tiny exact n-gram function (distinct n-grams of the example's
``contam_cli.text.tokenize`` tokens found among any corpus document's n-grams), so these tests
do not depend on the scan engine.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from contam_cli.features.bench.labelled import (
    ALL_KINDS,
    LABEL,
    LabelledParams,
    LabelledSet,
    build_labelled,
    generate_labelled,
)
from contam_cli.io.model import Record
from contam_cli.text import tokenize

SEED = 11
NS = (5, 8, 13)
Grams = set[tuple[str, ...]]


def grams(tokens: list[str], n: int) -> Grams:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def overlap(text: str, corpus: Grams, n: int) -> float:
    """Matched distinct n-grams / distinct n-grams of ``text``."""
    mine = grams(tokenize(text), n)
    return len(mine & corpus) / len(mine)


@pytest.fixture(scope="module")
def bench() -> LabelledSet:
    return generate_labelled(SEED)


@pytest.fixture(scope="module")
def corpus(bench: LabelledSet) -> dict[int, Grams]:
    docs = [tokenize(t) for t in bench.corpus_texts()]
    return {n: set().union(*(grams(d, n) for d in docs)) for n in NS}


@pytest.fixture(scope="module")
def mean_overlap(bench: LabelledSet, corpus: dict[int, Grams]) -> dict[tuple[str, int], float]:
    values: dict[tuple[str, int], list[float]] = {}
    for e in bench.examples:
        for n in NS:
            values.setdefault((e.kind, n), []).append(overlap(e.text, corpus[n], n))
    return {k: float(np.mean(v)) for k, v in values.items()}


def _of(bench: LabelledSet, kind: str) -> list[tuple[str, str]]:
    """(example text, planted text) of each example of ``kind``."""
    return [(e.text, bench.plants[e.id].text) for e in bench.examples if e.kind == kind]


def test_counts_labels_and_ids(bench: LabelledSet) -> None:
    counts = Counter(e.kind for e in bench.examples)
    assert counts == {"clean": 60, **dict.fromkeys(ALL_KINDS, 20)}
    ids = [e.id for e in bench.examples]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert bench.labels == {e.id: LABEL[e.kind] for e in bench.examples}
    assert bench.kinds == {e.id: e.kind for e in bench.examples}
    assert set(bench.plants) == {e.id for e in bench.examples if e.kind != "clean"}
    assert sum(bench.labels.values()) == 8 * 20
    records = bench.records()
    assert all(isinstance(r, Record) for r in records)
    assert [(r.id, r.text) for r in records] == [(e.id, e.text) for e in bench.examples]


def test_example_lengths(bench: LabelledSet) -> None:
    for e in bench.examples:
        low, high = (80, 200) if e.kind == "boilerplate" else (40, 120)
        assert low - 5 <= len(e.text.split()) <= high, e  # em dashes join a few words


def test_plants_sit_in_the_documents_they_name(bench: LabelledSet) -> None:
    texts = bench.corpus_texts()
    for eid, plant in bench.plants.items():
        assert plant.docs
        assert all(plant.text in texts[d] for d in plant.docs), (bench.kinds[eid], plant)


def test_clean_examples_overlap_innocently(mean_overlap: dict[tuple[str, int], float]) -> None:
    # NOTE: the point of the phrase pool: with independent words, nothing would match at n = 5.
    assert mean_overlap["clean", 5] > 0.15
    assert mean_overlap["clean", 8] > 0.02
    assert mean_overlap["clean", 13] < 0.02


def test_no_clean_example_looks_leaked_at_13(bench: LabelledSet, corpus: dict) -> None:
    clean = [overlap(e.text, corpus[13], 13) for e in bench.examples if e.label == 0]
    assert max(clean) < 0.5


@pytest.mark.parametrize("kind", ["verbatim", "embedded", "chat", "light_edit", "rewrapped"])
def test_whole_leaks_overlap_fully_at_13(bench: LabelledSet, corpus: dict, kind: str) -> None:
    for text, _ in _of(bench, kind):
        assert overlap(text, corpus[13], 13) == 1.0


def test_paraphrased_overlaps_less_than_partial_and_verbatim(mean_overlap: dict) -> None:
    for n in (8, 13):
        assert mean_overlap["paraphrased", n] < mean_overlap["partial", n]
        assert mean_overlap["paraphrased", n] < mean_overlap["verbatim", n] == 1.0
    assert mean_overlap["partial", 13] < 0.5  # a 20-word span of a longer example


def test_light_edit_and_rewrapped_differ_only_in_form(bench: LabelledSet) -> None:
    texts = bench.corpus_texts()
    for kind in ("light_edit", "rewrapped"):
        for text, plant in _of(bench, kind):
            assert plant != text and tokenize(plant) == tokenize(text)
            assert not any(text in t for t in texts)  # only a normalizing scanner finds it
    for _, plant in _of(bench, "rewrapped"):
        lines = plant.split("\n")
        assert len(lines) >= 4 and all(len(line.split()) <= 10 for line in lines)


def test_paraphrase_hard_leaves_no_8_gram(bench: LabelledSet) -> None:
    texts = bench.corpus_texts()
    examples = [e for e in bench.examples if e.kind == "paraphrase_hard"]
    for e in examples:
        plant = bench.plants[e.id]
        mine = grams(tokenize(e.text), 8)
        assert not mine & grams(tokenize(plant.text), 8)
        (d,) = plant.docs
        assert texts[d].count(plant.text) == 1
        without = texts[d].replace(plant.text, " ")
        # Whatever 8-grams of the example the host holds, it holds without the plant too.
        assert mine & grams(tokenize(texts[d]), 8) <= grams(tokenize(without), 8)
        words, reworded = e.text.split(" "), plant.text.split(" ")
        changed = np.mean([tokenize(a) != tokenize(b) for a, b in zip(words, reworded)])
        assert len(words) == len(reworded) and 0.24 <= changed <= 0.36


def test_boilerplate_sentences_are_widespread(bench: LabelledSet) -> None:
    texts = bench.corpus_texts()
    sentences = set()
    for text, sentence in _of(bench, "boilerplate"):
        words = len(sentence.split())
        assert sentence in text and 18 <= words <= 30
        holders = [i for i, t in enumerate(texts) if sentence in t]
        assert 50 <= len(holders) <= 200
        sentences.add(sentence)
    assert len(sentences) == 8
    assert any(s.startswith("“") for s in sentences) and any(s[0].isupper() for s in sentences)
    for e in bench.examples:
        if e.kind == "boilerplate":
            assert tuple(i for i, t in enumerate(texts) if bench.plants[e.id].text in t) == (
                bench.plants[e.id].docs
            )


@pytest.mark.parametrize("kind, tokens", [("near_miss", 12), ("partial", None)])
def test_spans_cannot_extend(bench: LabelledSet, kind: str, tokens: int | None) -> None:
    texts = bench.corpus_texts()
    for e in bench.examples:
        if e.kind != kind:
            continue
        plant = bench.plants[e.id]
        span, toks = tokenize(plant.text), tokenize(e.text)
        if tokens is None:
            assert len(plant.text.split(" ")) == 20
        else:
            assert len(span) == tokens
        starts = [i for i in range(len(toks)) if toks[i : i + len(span)] == span]
        assert starts
        host = grams(tokenize(texts[plant.docs[0]]), len(span) + 1)
        for s in starts:  # the span plus the example's token before or after: not in the host
            assert tuple(toks[max(s - 1, 0) : s + len(span)]) not in host or s == 0
            assert tuple(toks[s : s + len(span) + 1]) not in host or s + len(span) == len(toks)


def test_chat_records(bench: LabelledSet) -> None:
    chats = [d for d in bench.corpus if isinstance(d, dict)]
    assert len(chats) == 20 + 10
    for d in chats:
        assert [t["role"] for t in d["messages"]] == ["user", "assistant"]
    roles: Counter[str] = Counter()
    for e in bench.examples:
        if e.kind == "chat":
            plant = bench.plants[e.id]
            record = bench.corpus[plant.docs[0]]
            assert isinstance(record, dict) and plant.role is not None
            turn = {t["role"]: t["content"] for t in record["messages"]}[plant.role]
            assert turn.endswith(e.text)
            roles[plant.role] += 1
    assert set(roles) == {"user", "assistant"}


def test_embedded_documents_are_long(bench: LabelledSet) -> None:
    texts = bench.corpus_texts()
    for e in bench.examples:
        if e.kind == "embedded":
            (d,) = bench.plants[e.id].docs
            assert len(texts[d].split()) >= 2000 + len(e.text.split()) - 50


def test_same_seed_same_set_other_seed_other_set(bench: LabelledSet) -> None:
    again = generate_labelled(SEED)
    assert again == bench
    other = generate_labelled(SEED + 1)
    assert other.corpus != bench.corpus
    assert [e.text for e in other.examples] != [e.text for e in bench.examples]


def test_fast() -> None:
    t0 = time.perf_counter()
    generate_labelled(SEED + 2)
    assert time.perf_counter() - t0 < 2.0  # NOTE: loose; about 0.1 s on one core


def test_kinds_subset_and_parameters() -> None:
    small = generate_labelled(3, n_clean=5, n_per_kind=3, kinds=("verbatim", "near_miss"))
    assert small.params == LabelledParams(3, 5, 3, ("verbatim", "near_miss"))
    assert generate_labelled(3, phrase_rate=0.5, boilerplate_copies=(60, 70)).params == (
        LabelledParams(seed=3, phrase_rate=0.5, boilerplate_copies=(60, 70))
    )
    assert Counter(small.kinds.values()) == {"clean": 5, "verbatim": 3, "near_miss": 3}
    assert all(isinstance(d, str) for d in small.corpus) and len(small.corpus) == 40
    with pytest.raises(ValueError, match="unknown kinds"):
        generate_labelled(3, kinds=("verbatim", "nope"))
    with pytest.raises(ValueError, match="boilerplate_copies"):
        build_labelled(LabelledParams(boilerplate_copies=(50, 500)))
