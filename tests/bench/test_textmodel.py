"""The shared synthetic text model and the edits that disguise leaks."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from contam_cli.features.bench import edits, generate, plants
from contam_cli.features.bench.textmodel import (
    FUNCTION_WORDS,
    N_FUNCTION,
    TextModel,
    TextParams,
)
from contam_cli.text import tokenize

SMALL = TextParams(
    vocab_size=3000,
    n_phrases=250,
    word_zipf=1.0,
    phrase_zipf=0.5,
    phrase_words=(3, 6),
    phrase_rate=0.75,
    filler_words=(1, 1),
    filler_after_phrase=False,
)


@pytest.fixture(scope="module")
def model() -> TextModel:
    return TextModel.build(np.random.default_rng(5), SMALL)


def test_vocabulary(model: TextModel) -> None:
    assert len(model.words) == 3000 == len(set(model.words))
    assert model.words[:N_FUNCTION] == list(dict.fromkeys(FUNCTION_WORDS))
    assert model.words[0] == "the"
    lengths = [len(w) for w in model.words[N_FUNCTION:] if w.isascii()]
    assert lengths[:50] != lengths[-50:] and np.mean(lengths[:200]) < np.mean(lengths[-200:])


def test_zipf_frequencies(model: TextModel) -> None:
    ids = model.stream(np.random.default_rng(1), 200_000)
    counts = np.bincount(ids, minlength=len(model.words))
    assert counts[0] == counts.max()  # "the"
    top, tail = counts[:10].sum(), counts[1000:].sum()
    assert top > tail > 0


def test_phrases(model: TextModel) -> None:
    assert len(model.phrase_len) == 250
    assert model.phrase_len.min() == 3 and model.phrase_len.max() == 6
    ids = model.stream(np.random.default_rng(2), 5000).tolist()
    long_phrases = [tuple(model.phrase(p).tolist()) for p in range(250) if model.phrase_len[p] >= 5]
    seen = {tuple(ids[i : i + n]) for n in (5, 6) for i in range(len(ids) - n + 1)}
    assert sum(p in seen for p in long_phrases) > 20  # collocations recur
    only = TextModel.build(np.random.default_rng(5), replace(SMALL, phrase_rate=1.0))
    words = set(only.stream(np.random.default_rng(2), 2000).tolist())
    assert words <= set(only.phrase_flat.tolist())  # nothing but phrases


def test_non_ascii_share(model: TextModel) -> None:
    rng = np.random.default_rng(3)
    ids = model.stream(rng, 100_000)
    share = np.mean([not model.words[i].isascii() for i in ids.tolist()])
    assert 0.01 < share < 0.04
    ascii_only = TextModel.build(np.random.default_rng(5), replace(SMALL, non_ascii_share=0.0))
    assert all(w.isascii() or "’" in w for w in ascii_only.words)


def test_same_rng_same_model() -> None:
    a = TextModel.build(np.random.default_rng(9), SMALL)
    b = TextModel.build(np.random.default_rng(9), SMALL)
    c = TextModel.build(np.random.default_rng(10), SMALL)
    assert a.words == b.words and np.array_equal(a.phrase_flat, b.phrase_flat)
    assert a.words != c.words


def test_drafts_render_like_render(model: TextModel) -> None:
    lengths = np.array([40, 70, 55])
    drafts = model.drafts(np.random.default_rng(4), lengths)
    rng = np.random.default_rng(4)
    texts = model.render(model.stream(rng, int(lengths.sum())), lengths, rng)
    assert [d.text(model) for d in drafts] == texts
    assert [len(d.ids) for d in drafts] == lengths.tolist()
    assert texts[0][0].isupper() or texts[0][0] == "“"
    assert texts[0].endswith((".", "?", ".”"))


def test_generate_uses_the_shared_model() -> None:
    assert generate.TEXT == TextParams()
    assert generate.TEXT.vocab_size == 30_000 and generate.TEXT.phrase_words == (3, 8)


def test_normalize_plain_uses_the_project_tokenizer(model: TextModel) -> None:
    rng = np.random.default_rng(6)
    for text in model.prose(rng, np.full(30, 60)) + ["“Ｃafé’s” ﬁx—日本語。", "ΟΔΟΣ, οδος"]:
        plain = plants.normalize_plain(text)
        assert tokenize(plain) == tokenize(text)
        assert plain == plain.lower() and "  " not in plain and not set(plain) & set(",.;“”’—")


def test_synonyms(model: TextModel) -> None:
    thesaurus = edits.Thesaurus.build(model, np.random.default_rng(1))
    syn = thesaurus.syn
    ranks = np.arange(len(syn))
    assert not np.any(syn == ranks)
    assert np.all((syn < N_FUNCTION) == (ranks < N_FUNCTION))
    assert np.abs(syn - ranks).max() < 8
    assert sorted(syn.tolist()) == ranks.tolist()  # a permutation


def test_substitute_replaces_a_share(model: TextModel) -> None:
    thesaurus = edits.Thesaurus.build(model, np.random.default_rng(1))
    draft = model.drafts(np.random.default_rng(7), np.array([80]))[0]
    out = edits.substitute(draft, thesaurus, np.random.default_rng(8), 0.25)
    assert np.sum(out.ids != draft.ids) == 20
    assert np.array_equal(out.form, draft.form)
    assert len(out.text(model).split(" ")) == len(draft.text(model).split(" "))


def test_reword_hard(model: TextModel) -> None:
    thesaurus = edits.Thesaurus.build(model, np.random.default_rng(1))
    rng = np.random.default_rng(9)
    for draft in model.drafts(rng, rng.integers(40, 121, size=30)):
        out = edits.reword_hard(draft, model, thesaurus, rng)
        before, after = tokenize(draft.text(model)), tokenize(out.text(model))
        assert not edits.ngrams(before, 8) & edits.ngrams(after, 8)
        assert edits.ngrams(before, 3) & edits.ngrams(after, 3)  # still recognisably the same
        changed = np.mean(
            [
                thesaurus.tokens[a] != thesaurus.tokens[b]
                for a, b in zip(out.ids.tolist(), draft.ids.tolist())
            ]
        )
        assert 0.25 <= changed <= 0.35


def test_light_edit_keeps_tokens(model: TextModel) -> None:
    rng = np.random.default_rng(10)
    texts = model.prose(rng, np.full(50, 60))
    edited = [edits.light_edit(t, rng) for t in texts]
    assert all(tokenize(e) == tokenize(t) for e, t in zip(edited, texts))
    assert all(e != t for e, t in zip(edited, texts))
    assert any(ord(c) >= 0xFF01 for e in edited for c in e)  # some full-width forms
    assert edits.light_edit("日本語", rng) == "日本語"  # touching tokens keep touching


def test_rewrap(model: TextModel) -> None:
    rng = np.random.default_rng(11)
    text = model.prose(rng, np.array([90]))[0]
    wrapped = edits.rewrap(text, rng)
    assert tokenize(wrapped) == tokenize(text)
    assert wrapped.replace("\n", " ") == text
    assert all(6 <= len(line.split(" ")) <= 10 for line in wrapped.split("\n")[:-1])
