"""A seeded, labelled detector benchmark: eval examples, a corpus, and which examples leaked how.

``generate_labelled(seed)`` builds it in memory, deterministically per seed, in about 0.1 s.
Text (:mod:`~contam_cli.features.bench.textmodel`): a 3,000-word Zipf vocabulary and 250 phrases
of 3-6 words; each segment of the word stream is a phrase with probability ``phrase_rate``
(0.75), else one filler word. So unrelated texts share short n-grams (clean examples match about
half of their 5-grams and a seventh of their 8-grams) while 13-gram collisions stay rare.

Examples have 40-120 words (boilerplate ones 80-200). Label 1 kinds, each planted once:

- ``verbatim``: the whole example, inside one of the ``corpus_docs`` ordinary documents;
- ``partial``: a span of 20 words of it, inside an ordinary document;
- ``paraphrased``: 25% of its words (random positions) replaced by their "synonyms"
  (:class:`~contam_cli.features.bench.edits.Thesaurus`), then planted;
- ``light_edit``: case changed (lower, UPPER, Title) on ~30% of tokens, ~3% of ASCII tokens in
  full-width forms, ~25% of the separators between tokens replaced by other punctuation or
  whitespace; :func:`contam_cli.text.tokenize` gives the example's tokens (checked);
- ``rewrapped``: hard-wrapped into lines of 6-10 words joined by newlines;
- ``embedded``: the whole example inside its own long document of 2,000-5,000 words;
- ``chat``: the whole example as (the end of) the user or the assistant turn of a chat record
  ``{"messages": [{"role": "user", ...}, {"role": "assistant", ...}]}`` (clean chat records are
  in the corpus too);
- ``paraphrase_hard``: reworded so that no 8-gram of the example survives (below).

Label 0 kinds: ``clean`` (not planted); ``near_miss``, a span of exactly 12 tokens planted
(shorter than n = 13); ``boilerplate``, an example holding one sentence of 20-30 words that also
appears in 50-200 short corpus documents (licence-like and quote-like sentences, shared by
several examples), which an honest detector should not flag. A planted span sits where the corpus
tokens next to it differ from the example's tokens next to the span, so no match runs past it;
boilerplate sentences sit at sentence boundaries under the same rule.

``paraphrase_hard``, exactly (:func:`~contam_cli.features.bench.edits.reword_hard`). Let the
example be words w[0..W-1]. Edit anchors: p[0] drawn from 0-3, then p[k+1] = p[k] + a gap drawn
from 3-6, while p[k] < W. At an anchor, w[p] and w[p+1] are swapped with probability 0.3 (if
p + 1 < W and the two words tokenize differently), else w[p] is replaced by its synonym (or, if
the synonym tokenizes the same, swapped after all); so at most 5 words in a row are untouched.
The reworded text keeps the example's punctuation and capitalization by position (a possessive
"’s" on a word that became a function word is dropped). It is accepted when 25-35% of the words
tokenize differently and no 8-gram of the example's tokens occurs anywhere among its tokens, else
the edits are drawn again. After planting, the host document must hold no example 8-gram that it
would not hold without the plant (none across the plant's edges), else the plant moves. Innocent
8-gram overlap with other text is left alone, as for clean examples: an 8-gram detector sees
paraphrase_hard examples exactly as it sees clean ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from contam_cli.features.bench import edits, plants
from contam_cli.features.bench.edits import Thesaurus, ngrams
from contam_cli.features.bench.plants import Block, Host
from contam_cli.features.bench.textmodel import Draft, TextModel, TextParams
from contam_cli.io.model import Locator, Record
from contam_cli.text import tokenize

__all__ = [
    "ALL_KINDS",
    "LABEL",
    "NEGATIVE_KINDS",
    "POSITIVE_KINDS",
    "LabelledExample",
    "LabelledParams",
    "LabelledSet",
    "Plant",
    "build_labelled",
    "generate_labelled",
]

POSITIVE_KINDS = tuple(
    "verbatim partial paraphrased light_edit rewrapped embedded chat paraphrase_hard".split()
)
NEGATIVE_KINDS = ("boilerplate", "near_miss")
ALL_KINDS = POSITIVE_KINDS + NEGATIVE_KINDS
LABEL = {"clean": 0, **dict.fromkeys(POSITIVE_KINDS, 1), **dict.fromkeys(NEGATIVE_KINDS, 0)}
HARD_N = 8  # paraphrase_hard: no n-gram of this length survives
_OWN_DOCUMENT = ("clean", "embedded", "chat", "boilerplate")

ChatRecord = dict[str, list[dict[str, str]]]
Document = str | ChatRecord


@dataclass(frozen=True)
class LabelledParams:
    """Everything that shapes a labelled set; ``build_labelled(params)`` is a pure function."""

    seed: int = 0
    n_clean: int = 60
    n_per_kind: int = 20
    kinds: tuple[str, ...] = ALL_KINDS
    corpus_docs: int = 40
    vocab: int = 3000
    phrases: int = 250
    phrase_rate: float = 0.75
    phrase_words: tuple[int, int] = (3, 6)
    word_zipf: float = 1.0
    phrase_zipf: float = 0.5
    non_ascii_share: float = 0.02
    example_words: tuple[int, int] = (40, 120)
    doc_words: tuple[int, int] = (300, 1500)  # ordinary documents (log-uniform): most plants
    long_words: tuple[int, int] = (2000, 5000)
    partial_words: int = 20
    near_tokens: int = 12
    paraphrase_share: float = 0.25
    hard_share: tuple[float, float] = (0.25, 0.35)
    wrap_words: tuple[int, int] = (6, 10)
    boilerplate_words: tuple[int, int] = (80, 200)
    boilerplate_sentences: int = 8  # distinct ones, half licence-like, half quote-like
    sentence_words: tuple[int, int] = (20, 30)
    boilerplate_copies: tuple[int, int] = (50, 200)
    """How many corpus documents hold each boilerplate sentence."""
    boilerplate_hosts: int = 240
    host_words: tuple[int, int] = (40, 160)
    clean_chats: int = 10
    """Chat records without a leak, when there are chat leaks."""

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(ALL_KINDS)
        if unknown:
            raise ValueError(f"unknown kinds: {sorted(unknown)}")
        if min(self.n_clean, self.n_per_kind, self.corpus_docs) < 0 or self.corpus_docs < 1:
            raise ValueError("counts must be non-negative, with at least one corpus document")
        if self.boilerplate_copies[1] > self.boilerplate_hosts:
            raise ValueError("boilerplate_copies cannot exceed boilerplate_hosts")
        if self.example_words[0] < max(self.partial_words, self.near_tokens) + 2:
            raise ValueError("examples must be longer than the planted spans")

    def text_params(self) -> TextParams:
        """The text model: a segment is a phrase (``phrase_rate``) or one filler word."""
        return TextParams(
            self.vocab,
            self.phrases,
            self.word_zipf,
            self.phrase_zipf,
            self.phrase_words,
            self.non_ascii_share,
            self.phrase_rate,
            filler_words=(1, 1),
            filler_after_phrase=False,
        )


@dataclass(frozen=True, slots=True)
class LabelledExample:
    """One eval example: ``label`` 1 if it leaked into the corpus (its ``kind`` says how)."""

    id: str
    text: str
    kind: str
    label: int


@dataclass(frozen=True, slots=True)
class Plant:
    """What went into the corpus for one example: the inserted ``text`` (for boilerplate, the
    shared sentence) and the corpus indices of the documents holding it."""

    text: str
    docs: tuple[int, ...]
    role: str | None = None
    """For ``chat``: the turn holding the example."""


@dataclass(frozen=True)
class LabelledSet:
    """A labelled benchmark: examples (sorted by id), corpus documents and ground truth."""

    params: LabelledParams
    examples: list[LabelledExample]
    corpus: list[Document]
    labels: dict[str, int]
    kinds: dict[str, str]
    plants: dict[str, Plant] = field(default_factory=dict)
    """Every example except the clean ones."""

    def records(self) -> list[Record]:
        """The examples as :class:`~contam_cli.io.model.Record` (no kinds, no labels)."""
        path = f"<labelled seed={self.params.seed}>"
        return [Record(e.id, e.text, Locator(path, record=i)) for i, e in enumerate(self.examples)]

    def corpus_texts(self) -> list[str]:
        """Each document's text; a chat record's turns joined by newlines, as the readers do."""
        return [
            d if isinstance(d, str) else "\n".join(t["content"] for t in d["messages"])
            for d in self.corpus
        ]


def generate_labelled(
    seed: int,
    *,
    n_clean: int = 60,
    n_per_kind: int = 20,
    kinds: tuple[str, ...] = ALL_KINDS,
    corpus_docs: int = 40,
    vocab: int = 3000,
    phrases: int = 250,
    phrase_rate: float = 0.75,
    boilerplate_sentences: int = 8,
    boilerplate_copies: tuple[int, int] = (50, 200),
) -> LabelledSet:
    """The labelled set for ``seed``; every other knob is a :class:`LabelledParams` field.

    >>> s = generate_labelled(1, n_clean=2, n_per_kind=1, kinds=("verbatim", "near_miss"))
    >>> sorted(s.kinds.values()), sorted(s.labels.values())
    (['clean', 'clean', 'near_miss', 'verbatim'], [0, 0, 0, 1])
    """
    # NOTE: LabelledParams's first fields, in order.
    first = (seed, n_clean, n_per_kind, tuple(kinds), corpus_docs, vocab, phrases, phrase_rate)
    return build_labelled(
        LabelledParams(
            *first,
            boilerplate_sentences=boilerplate_sentences,
            boilerplate_copies=boilerplate_copies,
        )
    )


@dataclass
class _Ex:
    """An example while it is built: its text, what to plant, and where the plant went."""

    kind: str
    text: str
    plant: str = ""  # what goes into the corpus ("" for a clean example)
    block: Block = None
    sep: str = " "
    docs: list[int] = field(default_factory=list)
    role: str | None = None


@dataclass(frozen=True)
class _Ctx:
    p: LabelledParams
    model: TextModel
    thesaurus: Thesaurus
    rng: np.random.Generator  # examples and their plants
    doc_rng: np.random.Generator  # corpus text, placement and order

    @classmethod
    def make(cls, p: LabelledParams) -> _Ctx:
        model_ss, syn_ss, ex_ss, doc_ss = np.random.SeedSequence(p.seed).spawn(4)
        model = TextModel.build(np.random.default_rng(model_ss), p.text_params())
        thesaurus = Thesaurus.build(model, np.random.default_rng(syn_ss))
        return cls(p, model, thesaurus, np.random.default_rng(ex_ss), np.random.default_rng(doc_ss))

    def sizes(self, span: tuple[int, int], k: int, log: bool = False) -> np.ndarray:
        """``k`` lengths from ``span``: uniform (examples), or log-uniform (documents)."""
        if log:
            lo, hi = np.log(span[0]), np.log(span[1])
            return np.rint(np.exp(self.doc_rng.uniform(lo, hi, size=k))).astype(np.int64)
        return self.rng.integers(span[0], span[1] + 1, size=k)


def _leak(ctx: _Ctx, kind: str, draft: Draft) -> _Ex:
    """An example of a planted kind (not boilerplate) and what it plants."""
    p, rng, model, text = ctx.p, ctx.rng, ctx.model, draft.text(ctx.model)
    if kind in ("partial", "near_miss"):
        words = text.split(" ")
        if kind == "partial":
            s = int(rng.integers(0, len(words) - p.partial_words + 1))
            e = s + p.partial_words
        else:
            s, e = plants.exact_token_span(words, p.near_tokens, rng)
        host = Host(text)
        return _Ex(kind, text, " ".join(words[s:e]), (host.edges(s)[0], host.edges(e)[1]))
    if kind == "paraphrased":
        plant = edits.substitute(draft, ctx.thesaurus, rng, p.paraphrase_share).text(model)
    elif kind == "paraphrase_hard":
        hard = edits.reword_hard(draft, model, ctx.thesaurus, rng, p.hard_share, HARD_N)
        plant = hard.text(model)
    elif kind == "light_edit":
        plant = edits.light_edit(text, rng)
    elif kind == "rewrapped":
        return _Ex(kind, text, edits.rewrap(text, rng, p.wrap_words), sep="\n")
    else:  # verbatim, embedded, chat
        plant = text
    return _Ex(kind, text, plant)


def _boilerplate(ctx: _Ctx, n: int, first_doc: int) -> tuple[list[_Ex], list[Document]]:
    """``n`` boilerplate examples, and the short documents that also hold their sentences."""
    p, rng = ctx.p, ctx.rng
    lengths = ctx.sizes(p.sentence_words, p.boilerplate_sentences).tolist()
    sentences = [
        (plants.boilerplate_sentence(ctx.model, rng, k, quote=i % 2 == 1), k)
        for i, k in enumerate(lengths)
    ]
    which = rng.permutation(np.arange(n) % len(sentences)).tolist()
    body_words = ctx.sizes(p.boilerplate_words, n) - [sentences[s][1] for s in which]
    examples, blocks = [], [(set[str](), set[str]()) for _ in sentences]
    for s, draft in zip(which, ctx.model.drafts(rng, body_words)):
        text, edges = plants.insert_sentence(draft.text(ctx.model), sentences[s][0], rng)
        for side, tokens in zip(blocks[s], edges):
            side |= tokens
        examples.append(_Ex("boilerplate", text, sentences[s][0]))
    sizes = ctx.sizes(p.host_words, p.boilerplate_hosts, log=True)
    hosts = [Host(t) for t in ctx.model.prose(ctx.doc_rng, sizes)]
    copies = ctx.doc_rng.integers(
        p.boilerplate_copies[0], p.boilerplate_copies[1] + 1, size=len(sentences)
    )
    holders = [
        plants.spread(sentence, hosts, int(k), ctx.doc_rng, block)
        for (sentence, _), block, k in zip(sentences, blocks, copies.tolist())
    ]
    for ex, s in zip(examples, which):
        ex.docs = [first_doc + h for h in holders[s]]
    return examples, [h.render() for h in hosts]


def _chat(ctx: _Ctx, leak: str | None) -> tuple[ChatRecord, str | None]:
    """A chat record; ``leak`` (if any) is, or ends, the user or the assistant turn."""
    rng = ctx.doc_rng
    turn, intro = ctx.model.prose(rng, rng.integers((20, 5), (121, 16)))
    if leak is None:
        texts, role = {"user": intro, "assistant": turn}, None
    else:
        role = "user" if rng.random() < 0.5 else "assistant"
        other = "assistant" if role == "user" else "user"
        texts = {role: f"{intro}\n\n{leak}" if rng.random() < 0.5 else leak, other: turn}
    return {"messages": [{"role": r, "content": texts[r]} for r in ("user", "assistant")]}, role


def _ordinary(ctx: _Ctx, exs: list[_Ex]) -> list[Document]:
    """The ordinary documents with their plants (all kinds but embedded, chat, boilerplate)."""
    sizes = ctx.sizes(ctx.p.doc_words, ctx.p.corpus_docs, log=True)
    main = [Host(t) for t in ctx.model.prose(ctx.doc_rng, sizes)]

    def place(ex: _Ex) -> tuple[int, int]:
        return plants.place_anywhere(main, ex.plant, ctx.doc_rng, ex.block, ex.sep)

    def crosses(ex: _Ex) -> bool:
        h, gap = where[id(ex)]
        return main[h].adds(gap, ngrams(tokenize(ex.text), HARD_N), HARD_N)

    where = {id(ex): place(ex) for ex in exs if ex.kind not in _OWN_DOCUMENT}
    hard = [ex for ex in exs if ex.kind == "paraphrase_hard"]
    for _ in range(100):  # NOTE: checked once all plants are in, as neighbours can be plants
        for ex in (bad := [ex for ex in hard if crosses(ex)]):
            del main[where[id(ex)][0]].inserts[where[id(ex)][1]]
            where[id(ex)] = place(ex)
        if not bad:
            break
    else:
        raise RuntimeError("a paraphrase_hard plant keeps adding 8-grams")  # pragma: no cover
    for ex in exs:
        ex.docs = [where[id(ex)][0]] if id(ex) in where else []
    return [h.render() for h in main]


def _plant_all(ctx: _Ctx, exs: list[_Ex]) -> list[Document]:
    """The corpus before boilerplate: ordinary documents with their plants, long documents
    (one per ``embedded`` example), chat records (leaks and clean ones)."""
    docs = _ordinary(ctx, exs)
    for ex in (e for e in exs if e.kind == "embedded"):
        long = Host(ctx.model.prose(ctx.doc_rng, ctx.sizes(ctx.p.long_words, 1, log=True))[0])
        plants.place_anywhere([long], ex.plant, ctx.doc_rng)
        ex.docs, docs = [len(docs)], [*docs, long.render()]
    chats: list[_Ex | None] = [e for e in exs if e.kind == "chat"]
    chats += [None] * (ctx.p.clean_chats if chats else 0)
    for ex in ctx.doc_rng.permutation(np.array(chats, dtype=object)).tolist():
        record, role = _chat(ctx, None if ex is None else ex.text)
        if ex is not None:
            ex.docs, ex.role = [len(docs)], role
        docs.append(record)
    return docs


def build_labelled(p: LabelledParams) -> LabelledSet:
    """The labelled set described by ``p`` (deterministic)."""
    ctx = _Ctx.make(p)
    kinds = [k for k in ALL_KINDS if k in p.kinds]
    plan = ["clean"] * p.n_clean + [
        k for k in kinds if k != "boilerplate" for _ in range(p.n_per_kind)
    ]
    drafts = ctx.model.drafts(ctx.rng, ctx.sizes(p.example_words, len(plan)))
    exs = [
        _Ex(k, d.text(ctx.model)) if k == "clean" else _leak(ctx, k, d)
        for k, d in zip(plan, drafts)
    ]
    docs = _plant_all(ctx, exs)
    if "boilerplate" in kinds and p.n_per_kind:
        extra, host_docs = _boilerplate(ctx, p.n_per_kind, len(docs))
        exs, docs = exs + extra, docs + host_docs
    doc_order = ctx.doc_rng.permutation(len(docs))
    new_index = np.argsort(doc_order).tolist()
    examples, planted = [], {}
    for i, j in enumerate(ctx.rng.permutation(len(exs)).tolist()):
        ex, eid = exs[j], f"ex{i:04d}"
        examples.append(LabelledExample(eid, ex.text, ex.kind, LABEL[ex.kind]))
        if ex.kind != "clean":
            planted[eid] = Plant(ex.plant, tuple(sorted(new_index[d] for d in ex.docs)), ex.role)
    corpus = [docs[k] for k in doc_order.tolist()]
    labels, kinds_by_id = {e.id: e.label for e in examples}, {e.id: e.kind for e in examples}
    return LabelledSet(p, examples, corpus, labels, kinds_by_id, planted)
