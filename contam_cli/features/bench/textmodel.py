"""The synthetic text model shared by the benchmark generators (throughput and labelled).

A vocabulary of English function words (the most frequent ranks) and syllable-built words
(shorter words more frequent), drawn with Zipf probabilities; an optional share of occurrences
carry non-ASCII letters (accents, some in NFD form, Greek, ligatures, full-width forms, U+212B),
so a normalizing scanner has work to do. Text is built from a shared PHRASE POOL: real prose is
made of recurring collocations, and that is what makes innocent n-gram overlap between unrelated
texts. (A benchmark whose words are drawn independently has almost none, and every detector
scores a perfect AUC on it.) :class:`TextParams` holds what each front end chooses: vocabulary
and pool sizes, Zipf exponents, phrase lengths and how often phrases are used.

Rendering adds sentences of 5-24 words (capitalized starts, full stops, question marks, a few
quoted sentences), commas, em dashes, semicolons and possessives. :meth:`TextModel.layout` and
:meth:`TextModel.compose` split rendering into drawing the punctuation and joining the pieces,
so edited word ids can be rendered again with the same punctuation.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass

import numpy as np

__all__ = ["N_FUNCTION", "Draft", "Sampler", "TextModel", "TextParams"]

FUNCTION_WORDS = """
the of and to a in is that it was for on as with he be at by they this had from or not but have
are his an were which one all we there her she been when can their if will would who so no out
up what said them about more into some only could then its than time other two my first these
may over also any new like after our your him most did way made many before very through much
me must well down should where such because just how each those even back still here between
off own both under while might never same last us every again few around until always often
once since why yet upon among toward across against during without within however another
don't it's isn't can't won't didn't doesn't that's there's they're you're we're don’t it’s
""".split()
N_FUNCTION = len(dict.fromkeys(FUNCTION_WORDS))

ONSETS = (
    "",
    "",
    *"b bl br c ch cl cr d dr f fl fr g gl gr h j k l m n p ph pl pr qu r s sc sh "
    "sk sl sm sn sp st str sw t th tr v w wh z".split(),
)
NUCLEI = tuple("a a e e i o u ai au ay ea ee ei ie oa oi oo ou y".split())
CODAS = (
    "",
    "",
    "",
    "",
    *"b ck d ft g k l ld lt m mp n nd ng nk nt p r rd rm rn rt s sh sp ss st t th x".split(),
)
ENDINGS = ("",) * 10 + tuple("s ed ing er est ly ness ment ful less ity ous ive al ist ion".split())

ACCENTS = {
    "a": "áàâäåã",
    "e": "éèêë",
    "i": "íìîï",
    "o": "óòôöøõ",
    "u": "úùûü",
    "c": "ç",
    "n": "ñ",
    "y": "ý",
}
GREEK_ONSETS = ("", *"β γ δ θ κ λ μ ν ξ π ρ σ τ φ χ ψ ζ".split())
GREEK_VOWELS = tuple("α ε η ι ο υ ω ά έ ή ί ό ύ ώ αι ου ει".split())
LIGATURES = {"ffi": "ﬃ", "ffl": "ﬄ", "fi": "ﬁ", "fl": "ﬂ", "ff": "ﬀ"}
NON_ASCII_STYLES = ("accent", "nfd", "greek", "ligature", "fullwidth", "angstrom")
NON_ASCII_WEIGHTS = (55, 10, 20, 6, 6, 3)

# Word forms, then the suffix (punctuation plus separator) that follows each word.
PLAIN, CAP, QUOTE_CAP = 0, 1, 2
SUFFIXES = (" ", ", ", "—", "; ", "’s ", ". ", "? ", ".” ")
SPACE, COMMA, DASH, SEMI, POSS, STOP, QUESTION, QUOTE_STOP = range(8)
# Suffix of a word inside a sentence, by a uniform draw from 1000 cells: 5.5% comma, 0.5% em
# dash, 0.4% semicolon, 1% possessive (content words only), the rest a plain space.
MID_SUFFIX_TABLE = np.repeat(
    np.array([COMMA, DASH, SEMI, POSS, SPACE], dtype=np.int64), [55, 5, 4, 10, 926]
)
QUOTE_RATE = 0.04
QUESTION_RATE = 0.08

HIRAGANA = np.arange(0x3041, 0x3094, dtype=np.uint32)
KATAKANA = np.append(np.arange(0x30A1, 0x30F7, dtype=np.uint32), 0x30FC)
HAN_RANGE = (0x4E00, 0x9FA6)
CJK_PUNCT = np.array([0xFF0C, 0x3001, 0x3002], dtype=np.uint32)  # ， 、 。


@dataclass(frozen=True)
class TextParams:
    """What a front end chooses about its text. The defaults are the throughput generator's."""

    vocab_size: int = 30_000
    n_phrases: int = 20_000
    word_zipf: float = 1.05
    phrase_zipf: float = 0.8
    phrase_words: tuple[int, int] = (3, 8)
    """Phrase lengths in words, both ends included."""
    non_ascii_share: float = 0.02
    """Share of word occurrences (by Zipf probability) written with non-ASCII letters."""
    phrase_rate: float = 0.5
    """Probability that a segment of the word stream is a phrase (else a run of filler words)."""
    filler_words: tuple[int, int] = (1, 6)
    """Lengths of a run of filler words, both ends included."""
    filler_after_phrase: bool = True
    """A phrase is always followed by filler (no two phrases touch)."""


# ---------------------------------------------------------------------------------------------
# Vocabulary


def _zipf(n: int, s: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    return p / p.sum()


def _syllable_words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` candidate words of 1-3 syllables plus an ending (duplicates possible)."""
    parts = [
        np.array(t, dtype=object)[rng.integers(len(t), size=(3, n))]
        for t in (ONSETS, NUCLEI, CODAS)
    ]
    syl = parts[0] + parts[1] + parts[2]
    k = rng.choice(3, size=n, p=[0.45, 0.45, 0.10])
    words = syl[0] + np.where(k >= 1, syl[1], "") + np.where(k >= 2, syl[2], "")
    words = words + np.array(ENDINGS, dtype=object)[rng.integers(len(ENDINGS), size=n)]
    return words.tolist()


def _base_vocab(rng: np.random.Generator, size: int) -> list[str]:
    """Function words first (the most frequent ranks), then syllable words, shortest first."""
    vocab = dict.fromkeys(FUNCTION_WORDS)
    while len(vocab) < size:
        for w in _syllable_words(rng, size):
            if len(w) >= 2 and len(vocab) < size:
                vocab.setdefault(w)
    words = list(vocab)
    # NOTE: shorter words take the more frequent ranks, as in natural language.
    return words[:N_FUNCTION] + sorted(words[N_FUNCTION:], key=len)


def _accent(word: str, r: random.Random) -> str:
    spots = [i for i, c in enumerate(word) if c in ACCENTS]
    if not spots:
        return word + "é"
    chars = list(word)
    for i in r.sample(spots, k=min(len(spots), r.choice((1, 1, 2)))):
        chars[i] = r.choice(ACCENTS[chars[i]])
    out = "".join(chars)
    return out.replace("ss", "ß", 1) if r.random() < 0.3 else out


def _greek(r: random.Random) -> str:
    word = "".join(r.choice(GREEK_ONSETS) + r.choice(GREEK_VOWELS) for _ in range(r.randint(2, 3)))
    word += r.choice(("", "", "ς", "ν", "ς"))
    return word


def _ligature(word: str, r: random.Random) -> str:
    for plain, lig in LIGATURES.items():
        if plain in word:
            return word.replace(plain, lig, 1)
    return "ﬁ" + word if r.random() < 0.5 else word + "ﬂ"


def _non_ascii(word: str, r: random.Random) -> str:
    """One non-ASCII variant of ``word``; a normalising scanner must tokenise each consistently."""
    style = r.choices(NON_ASCII_STYLES, weights=NON_ASCII_WEIGHTS)[0]
    if style == "nfd":
        return unicodedata.normalize("NFD", _accent(word, r))
    if style == "greek":
        return _greek(r)
    if style == "ligature":
        return _ligature(word, r)
    if style == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "a" <= c <= "z" else c for c in word)
    if style == "angstrom":
        return "\u212b" + word[1:] if word[0] == "a" else "\u212b" + word  # NFKC: Å
    return _accent(word, r)


def _with_non_ascii(
    words: list[str], probs: np.ndarray, rng: np.random.Generator, share: float
) -> list[str]:
    """Give random non-function words non-ASCII letters until they hold ``share`` of
    occurrences."""
    order = N_FUNCTION + rng.permutation(len(words) - N_FUNCTION)
    n = int(np.searchsorted(np.cumsum(probs[order]), share)) + 1 if share > 0 else 0
    r = random.Random(int(rng.integers(2**62)))
    out = list(words)
    for i in order[:n].tolist():
        out[i] = _non_ascii(words[i], r)
    return out


def _capitalized(word: str) -> str:
    # NOTE: not str.capitalize(), which would also lower-case a non-initial U+212B; title case
    # turns a leading "ﬁ" into "Fi", where upper case would give "FI".
    return word[:1].title() + word[1:]


# ---------------------------------------------------------------------------------------------
# Text model


#: Documents composed per step (see TextModel.compose).
_COMPOSE_DOCS = 4096


@dataclass(frozen=True)
class Sampler:
    """Draws from a fixed discrete distribution via a quantised inverse-CDF table (2^21 cells)."""

    table: np.ndarray

    @classmethod
    def from_probs(cls, probs: np.ndarray, bits: int = 21) -> Sampler:
        edges = np.rint(np.cumsum(probs) / probs.sum() * (1 << bits)).astype(np.int64)
        return cls(np.repeat(np.arange(len(probs), dtype=np.int32), np.diff(edges, prepend=0)))

    def draw(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.table[rng.integers(0, len(self.table), size=size, dtype=np.uint32)]


@dataclass(frozen=True)
class Draft:
    """A text as word ids with each word's form and suffix (see :meth:`TextModel.layout`), so
    edited ids can be rendered again with the same punctuation."""

    ids: np.ndarray
    form: np.ndarray
    suffix: np.ndarray

    def text(self, model: TextModel) -> str:
        return model.compose(self.ids, self.form, self.suffix, np.array([len(self.ids)]))[0]

    def with_ids(self, ids: np.ndarray) -> Draft:
        """The same layout with other words; a possessive on a function word is dropped."""
        suffix = self.suffix.copy()
        suffix[(suffix == POSS) & (ids < N_FUNCTION)] = SPACE
        return Draft(ids, self.form, suffix)


@dataclass(frozen=True)
class TextModel:
    """Vocabulary, phrase pool and character tables; renders token ids into documents."""

    params: TextParams
    words: list[str]
    pieces: np.ndarray
    """Object array: ``pieces[(form * len(SUFFIXES) + suffix) * V + id]`` is a word in one of
    its forms (plain, Capitalised, “Capitalised) followed by one of the suffixes."""
    word_sampler: Sampler
    phrase_len: np.ndarray
    phrase_start: np.ndarray
    phrase_flat: np.ndarray
    phrase_sampler: Sampler
    han: np.ndarray
    han_sampler: Sampler
    chars_per_token: float

    @classmethod
    def build(cls, rng: np.random.Generator, params: TextParams | None = None) -> TextModel:
        p = TextParams() if params is None else params
        probs = _zipf(p.vocab_size, p.word_zipf)
        words = _with_non_ascii(_base_vocab(rng, p.vocab_size), probs, rng, p.non_ascii_share)
        caps = [_capitalized(w) for w in words]
        pieces = np.array(
            [
                w + sfx
                for form in (words, caps, ["“" + c for c in caps])
                for sfx in SUFFIXES
                for w in form
            ],
            dtype=object,
        )
        word_sampler = Sampler.from_probs(probs)
        phrase_len = rng.integers(p.phrase_words[0], p.phrase_words[1] + 1, size=p.n_phrases)
        phrase_flat = word_sampler.draw(rng, int(phrase_len.sum()))
        han = HAN_RANGE[0] + rng.permutation(HAN_RANGE[1] - HAN_RANGE[0])[:3000].astype(np.uint32)
        lengths = np.array([len(w) for w in words], dtype=np.float64)
        return cls(
            params=p,
            words=words,
            pieces=pieces,
            word_sampler=word_sampler,
            phrase_len=phrase_len,
            phrase_start=np.cumsum(phrase_len) - phrase_len,
            phrase_flat=phrase_flat,
            phrase_sampler=Sampler.from_probs(_zipf(p.n_phrases, p.phrase_zipf)),
            han=han,
            han_sampler=Sampler.from_probs(_zipf(len(han), 1.0)),
            chars_per_token=float(probs @ lengths) + 1.12,
        )

    def phrase(self, pid: int) -> np.ndarray:
        """The word ids of phrase ``pid``."""
        start = int(self.phrase_start[pid])
        return self.phrase_flat[start : start + int(self.phrase_len[pid])]

    def stream(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` word ids: phrases from the pool (``phrase_rate`` of the segments) and runs of
        filler words drawn from the vocabulary."""
        p = self.params
        n_seg = n // 3 + 64
        while True:
            is_phrase = rng.random(n_seg) < p.phrase_rate
            if p.filler_after_phrase:
                is_phrase[1:] &= ~is_phrase[:-1]
            pid = self.phrase_sampler.draw(rng, n_seg)
            fill = rng.integers(p.filler_words[0], p.filler_words[1] + 1, size=n_seg)
            seg_len = np.where(is_phrase, self.phrase_len[pid], fill)
            if seg_len.sum() >= n:
                break
            n_seg *= 2
        seg = np.repeat(np.arange(n_seg), seg_len)[:n]
        within = np.arange(n) - (np.cumsum(seg_len) - seg_len)[seg]
        src = np.minimum(self.phrase_start[pid[seg]] + within, len(self.phrase_flat) - 1)
        return np.where(is_phrase[seg], self.phrase_flat[src], self.word_sampler.draw(rng, n))

    def drafts(self, rng: np.random.Generator, lengths: np.ndarray) -> list[Draft]:
        """Consecutive texts of ``lengths`` words from one stream, as drafts."""
        ids = self.stream(rng, int(lengths.sum()))
        form, suffix = self.layout(ids, lengths, rng)
        cut = np.cumsum(lengths)[:-1]
        return [Draft(*a) for a in zip(*(np.split(x, cut) for x in (ids, form, suffix)))]

    def prose(self, rng: np.random.Generator, lengths: np.ndarray) -> list[str]:
        """Consecutive texts of ``lengths`` words from one stream."""
        return self.render(self.stream(rng, int(lengths.sum())), lengths, rng)

    def render(self, ids: np.ndarray, lengths: np.ndarray, rng: np.random.Generator) -> list[str]:
        """Punctuated text of consecutive documents of ``lengths`` words each."""
        form, suffix = self.layout(ids, lengths, rng)
        return self.compose(ids, form, suffix, lengths)

    def layout(
        self, ids: np.ndarray, lengths: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each word's form (plain, capitalized, quoted) and suffix, for :meth:`compose`."""
        n = len(ids)
        is_end = np.zeros(n, dtype=bool)
        gaps = np.cumsum(rng.integers(5, 25, size=n // 5 + 2)) - 1
        is_end[gaps[gaps < n]] = True
        is_end[np.cumsum(lengths) - 1] = True
        is_start = np.concatenate(([True], is_end[:-1]))
        sentence = np.cumsum(is_start) - 1
        quoted = (rng.random(int(sentence[-1]) + 1) < QUOTE_RATE)[sentence]
        form = np.where(is_start, np.where(quoted, QUOTE_CAP, CAP), PLAIN)
        return form, self._suffixes(ids, rng, is_end, quoted)

    def compose(
        self, ids: np.ndarray, form: np.ndarray, suffix: np.ndarray, lengths: np.ndarray
    ) -> list[str]:
        """The texts of consecutive documents of ``lengths`` words, from :meth:`layout`."""
        bounds = np.concatenate(([0], np.cumsum(lengths))).tolist()
        out: list[str] = []
        # NOTE: a few thousand documents at a time: the same texts, without temporaries the size
        # of every word at once (gigabytes for a million eval examples).
        for first in range(0, len(bounds) - 1, _COMPOSE_DOCS):
            at = bounds[first : first + _COMPOSE_DOCS + 1]
            lo, hi = at[0], at[-1]
            code = (form[lo:hi] * len(SUFFIXES) + suffix[lo:hi]) * len(self.words) + ids[lo:hi]
            pieces = self.pieces[code].tolist()
            # NOTE: every document ends on a sentence end, whose suffix has one trailing space.
            out += ["".join(pieces[a - lo : b - lo])[:-1] for a, b in zip(at, at[1:])]
        return out

    def _suffixes(
        self, ids: np.ndarray, rng: np.random.Generator, is_end: np.ndarray, quoted: np.ndarray
    ) -> np.ndarray:
        draws = rng.integers(0, len(MID_SUFFIX_TABLE), size=len(ids), dtype=np.uint16)
        suffix = MID_SUFFIX_TABLE[draws]
        suffix[(suffix == POSS) & (ids < N_FUNCTION)] = SPACE
        question = rng.random(int(is_end.sum())) < QUESTION_RATE
        suffix[is_end] = np.where(quoted[is_end], QUOTE_STOP, np.where(question, QUESTION, STOP))
        return suffix

    def cjk_text(self, rng: np.random.Generator, n_chars: int) -> str:
        """Chinese (Han only) or Japanese (hiragana, katakana, kanji) text without spaces."""
        han = self.han[self.han_sampler.draw(rng, n_chars)]
        if rng.random() < 0.5:
            script = rng.choice(3, size=n_chars, p=[0.45, 0.2, 0.35])
            kana = np.where(
                script == 0,
                HIRAGANA[rng.integers(len(HIRAGANA), size=n_chars)],
                KATAKANA[rng.integers(len(KATAKANA), size=n_chars)],
            )
            han = np.where(script == 2, han, kana)
        stops = np.cumsum(rng.integers(6, 30, size=n_chars // 6 + 1)) - 1
        stops = stops[stops < n_chars]
        han[stops] = CJK_PUNCT[rng.integers(len(CJK_PUNCT), size=len(stops))]
        han[-1] = CJK_PUNCT[-1]
        return han.astype("<u4").tobytes().decode("utf-32-le")
