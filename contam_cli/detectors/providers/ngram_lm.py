"""The built-in n-gram language model: interpolated modified Kneser–Ney over contam's tokens.

It makes the model-based path testable without weights, and it is a real membership signal:
text that was in the training data scores clearly higher Min-K%++ than fresh text.

* **Tokens** are :func:`contam_cli.text.tokenize` tokens. Each sequence (a document, line or
  sentence: ``NgramConfig.boundary``) is padded with order − 1 ``<s>`` and ends with ``</s>``;
  n-grams never cross a boundary. Unseen tokens (or rarer than ``min_count``) are ``<unk>``;
  the lowest order is interpolated with a uniform distribution, so every token but ``<s>``
  (never predicted) has a probability above 0.
* **Smoothing** (Chen & Goodman 1998, with KenLM's adjusted counts): raw counts at the top
  order, distinct left contexts below it (raw counts for n-grams that start with ``<s>``, which
  cannot be extended left), three discounts per order from count-of-counts.
* **Exact mu and sigma without a vocabulary pass per token.** A context's distribution is
  ``γ·backoff + α`` on its seen followers, so its E[log p] and E[(log p)²] follow from the
  backoff's moments and a sum over the followers only, once per context at training time;
  scoring a token is a few binary searches per order. :meth:`NgramLM.log_distribution` gives
  the full vector (the tests check that both agree).
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, cast, get_args

import numpy as np
import orjson

from contam_cli._version import __version__
from contam_cli.detectors.providers import ngram_lm_file as model_file
from contam_cli.detectors.providers.base import TextScores, provider_cache_dir
from contam_cli.detectors.providers.ngram_lm_file import FORMAT, LEVEL_FIELDS, SPECIALS, VERSION
from contam_cli.errors import ContamError, InputError, UsageError
from contam_cli.io import atomic_writer, iter_corpus, iter_files, sha256_file
from contam_cli.io.formats import StrPath
from contam_cli.text import DEFAULT_NORM, NormConfig, tokenize

__all__ = ["NgramConfig", "NgramLM", "NgramLMProvider", "train"]

Boundary = Literal["document", "line", "sentence"]
UNK, BOS, EOS = 0, 1, 2
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n")


@dataclass(frozen=True, slots=True)
class NgramConfig:
    """How the n-gram LM is trained; recorded in the model file and in reports.

    >>> NgramConfig(order=4).describe()["order"]
    4
    """

    order: int = 3
    """n: the longest n-gram (n − 1 tokens of context), 1 to 6."""
    min_count: int = 1
    """Tokens seen fewer times than this in training become ``<unk>`` (1: keep every token)."""
    boundary: Boundary = "document"
    """Where sequences start and end: each document, each line, or each sentence (after
    . ! ? and at blank lines)."""
    norm: NormConfig = DEFAULT_NORM

    def __post_init__(self) -> None:
        if not 1 <= self.order <= 6:
            raise UsageError(f"ngram-lm: order must be between 1 and 6, got {self.order}")
        if self.min_count < 1:
            raise UsageError(f"ngram-lm: min_count must be at least 1, got {self.min_count}")
        if self.boundary not in get_args(Boundary):
            raise UsageError(f"ngram-lm: boundary must be one of {', '.join(get_args(Boundary))}")

    def describe(self) -> dict[str, Any]:
        return {**asdict(self), "smoothing": "interpolated-modified-kneser-ney"}


@dataclass(frozen=True, eq=False)
class _Level:
    """The n-grams of one order k >= 2, grouped by context (k − 1 tokens), all sorted by key."""

    ctx_keys: np.ndarray
    """Context key = (id of the context's backoff suffix) · V + its first token."""
    gamma: np.ndarray
    """Per context: the mass left to the backoff distribution."""
    m1: np.ndarray
    """Per context: E[log p] of its full next-token distribution (m2: E[(log p)²])."""
    m2: np.ndarray
    keys: np.ndarray
    """n-gram key = context id · V + token."""
    prob: np.ndarray
    """Per n-gram: the full interpolated p(token | context)."""


def _segments(text: str, boundary: Boundary) -> list[str]:
    if boundary == "document":
        return [text]
    return text.splitlines() if boundary == "line" else _SENTENCE_END.split(text)


def _encode(texts: Iterable[str], config: NgramConfig) -> tuple[list[str], np.ndarray, str]:
    """Vocabulary (specials first, then by first appearance), the padded id stream, and the
    sha256 of the training texts."""
    index = {t: i for i, t in enumerate(SPECIALS)}
    pad = [BOS] * (config.order - 1)
    buf, digest = array("q"), hashlib.sha256()
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "little") + data)
        for segment in _segments(text, config.boundary):
            tokens = tokenize(segment, config.norm)
            if tokens:
                buf.extend(pad)
                buf.extend([index.setdefault(t, len(index)) for t in tokens])
                buf.append(EOS)
    stream = np.frombuffer(buf, dtype=np.int64) if buf else np.zeros(0, np.int64)
    if not stream.size:
        raise ContamError("ngram-lm: the training text has no tokens")
    vocab = list(index)
    if config.min_count > 1:
        keep = np.bincount(stream, minlength=len(vocab)) >= config.min_count
        keep[: len(SPECIALS)] = True
        stream = np.where(keep, np.cumsum(keep) - 1, UNK)[stream]
        vocab = [t for t, kept in zip(vocab, keep.tolist()) if kept]
    return vocab, stream, digest.hexdigest()


def _discounts(adjusted: np.ndarray) -> np.ndarray:
    """``[0, D1, D2, D3+]`` from count-of-counts (Chen & Goodman); D(a) = table[min(a, 3)]."""
    n1, n2, n3, n4 = (int(np.count_nonzero(adjusted == j)) for j in range(1, 5))
    fallback = 0.5
    if n1 and n2:
        y = n1 / (n1 + 2 * n2)
        d = [1 - 2 * y * n2 / n1, 2 - 3 * y * n3 / n2, 3 - 4 * y * n4 / n3 if n3 else -1.0]
        if all(0 < dj <= j for j, dj in enumerate(d, start=1)):
            return np.array([0.0, *d])
        # NOTE: tiny or odd data (no n3, say) breaks the formulas; one discount is plain KN.
        fallback = y
    return np.array([0.0, fallback, fallback, fallback])


def _count(stream: np.ndarray, pos: np.ndarray, v: int, order: int) -> list[tuple[Any, ...]]:
    """Per order k >= 2: (context keys, n-gram keys, raw counts, backoff n-gram index)."""
    out: list[tuple[Any, ...]] = []
    cid = np.zeros(len(pos), dtype=np.int64)
    for k in range(2, order + 1):
        ctx_keys, cid = np.unique(cid * v + stream[pos - (k - 1)], return_inverse=True)
        keys, counts = np.unique(cid * v + stream[pos], return_counts=True)
        w = keys % v  # NOTE: a bigram (u, w) backs off to the unigram w, and p1 is dense
        parent = w if k == 2 else np.searchsorted(out[-1][1], (ctx_keys[keys // v] // v) * v + w)
        out.append((ctx_keys, keys, counts, parent))
    return out


def _adjusted(raw: list[tuple[Any, ...]], unigram_raw: np.ndarray, v: int) -> list[np.ndarray]:
    """KN adjusted counts per order 1..n: distinct left contexts below the top order, except
    n-grams starting with <s> (raw counts)."""
    if not raw:
        return [unigram_raw]
    out = [np.bincount(raw[0][3], minlength=v)]
    for (ctx_keys, keys, counts, _), above in zip(raw, raw[1:]):
        left = np.bincount(above[3], minlength=len(keys))
        out.append(np.where(ctx_keys[keys // v] % v == BOS, counts, left))
    return [*out, raw[-1][2]]


def _unigram(adjusted: np.ndarray) -> tuple[np.ndarray, float, float]:
    """p1 (interpolated with a uniform over every token but <s>) and its two log moments."""
    d = _discounts(adjusted)[np.minimum(adjusted, 3)]
    total = float(adjusted.sum())
    p1 = (adjusted - d) / total + float(d.sum()) / total / (len(adjusted) - 1)
    p1[BOS] = 0.0
    lp = np.log(p1, out=np.zeros_like(p1), where=p1 > 0)
    return p1, float(p1 @ lp), float(p1 @ (lp * lp))


def _level(raw: tuple[Any, ...], adj: np.ndarray, prev: tuple[np.ndarray, ...], v: int) -> _Level:
    """Probabilities and exact per-context log moments of one order, from the order below
    (``prev`` = its per-n-gram probabilities and per-context m1, m2)."""
    ctx_keys, keys, _, parent = raw
    prev_prob, prev_m1, prev_m2 = prev
    ctx, n_ctx = keys // v, len(ctx_keys)
    d = _discounts(adj)[np.minimum(adj, 3)]
    total = np.bincount(ctx, weights=adj, minlength=n_ctx)
    gamma = np.bincount(ctx, weights=d, minlength=n_ctx) / total
    q = prev_prob[parent]
    prob = (adj - d) / total[ctx] + gamma[ctx] * q
    lq, lp = np.log(q), np.log(prob)

    def per_ctx(values: np.ndarray) -> np.ndarray:
        return np.bincount(ctx, weights=values, minlength=n_ctx)

    # NOTE: off the followers F, p = γ·q, so Σ_{∉F} p·log p = γ[log γ·(1 − Q) + (M1' − A1)],
    # with Q, A1, A2 the sums of q, q·log q, q·log² q over F; likewise for E[log² p].
    rest = np.clip(1.0 - per_ctx(q), 0.0, None)
    a1, a2 = prev_m1[ctx_keys // v] - per_ctx(q * lq), prev_m2[ctx_keys // v] - per_ctx(q * lq * lq)
    lg = np.log(gamma)
    m1 = gamma * (lg * rest + a1) + per_ctx(prob * lp)
    m2 = gamma * (lg * lg * rest + 2 * lg * a1 + a2) + per_ctx(prob * lp * lp)
    return _Level(ctx_keys, gamma, m1, m2, keys, prob)


class NgramLM:
    """A trained n-gram LM: scores with exact moments, full distributions, greedy completion."""

    def __init__(
        self,
        config: NgramConfig,
        vocab: list[str],
        unigram: tuple[np.ndarray, float, float],
        levels: list[_Level],
        meta: dict[str, Any],
    ) -> None:
        self.config, self.vocab, self.levels, self.meta = config, vocab, levels, meta
        self.p1, self.m1, self.m2 = unigram
        self._index = {t: i for i, t in enumerate(vocab)}
        self.vocab_size = len(vocab)

    def describe(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, **self.config.describe(), **self.meta}

    def encode(self, text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Tokens of ``text``, its padded id stream and the stream positions of its tokens."""
        tokens: list[str] = []
        ids: list[int] = []  # NOTE: each segment padded with order − 1 <s>, as in training
        for segment in _segments(text, self.config.boundary):
            seg = tokenize(segment, self.config.norm)
            if seg:
                tokens.extend(seg)
                ids.extend([BOS] * (self.config.order - 1) + [self._index.get(t, UNK) for t in seg])
        stream = np.array(ids, dtype=np.int64)
        return tokens, stream, np.flatnonzero(stream != BOS)

    def score(self, text: str) -> TextScores:
        """Every token of ``text`` scored given its context (the first given ``<s>``)."""
        tokens, stream, pos = self.encode(text)
        w, v = stream[pos], self.vocab_size
        prob = self.p1[w]
        m1, m2 = np.full(len(pos), self.m1), np.full(len(pos), self.m2)
        cid, alive = np.zeros(len(pos), dtype=np.int64), np.ones(len(pos), dtype=bool)
        for k, level in enumerate(self.levels, start=2):
            key = cid * v + stream[pos - (k - 1)]
            j = np.minimum(np.searchsorted(level.ctx_keys, key), len(level.ctx_keys) - 1)
            alive &= level.ctx_keys[j] == key
            cid = np.where(alive, j, 0)
            gram = cid * v + w
            e = np.minimum(np.searchsorted(level.keys, gram), len(level.keys) - 1)
            seen = alive & (level.keys[e] == gram)
            prob = np.where(seen, level.prob[e], np.where(alive, level.gamma[cid] * prob, prob))
            m1, m2 = np.where(alive, level.m1[cid], m1), np.where(alive, level.m2[cid], m2)
        sigma = np.sqrt(np.clip(m2 - m1 * m1, 0.0, None))
        return TextScores(np.log(prob), m1, sigma, tokens=tuple(tokens))

    def _distribution(self, context: np.ndarray) -> np.ndarray:
        """The full next-token distribution after ``context`` (ids, most recent last)."""
        p, cid, v = self.p1.copy(), 0, self.vocab_size
        for k, level in enumerate(self.levels, start=2):
            key = cid * v + int(context[-(k - 1)])
            j = int(np.searchsorted(level.ctx_keys, key))
            if j == len(level.ctx_keys) or level.ctx_keys[j] != key:
                break
            cid = j
            lo, hi = np.searchsorted(level.keys, [cid * v, (cid + 1) * v])
            p *= level.gamma[cid]
            p[level.keys[lo:hi] % v] = level.prob[lo:hi]
        return p

    def _context(self, tokens: Sequence[str]) -> np.ndarray:
        n = self.config.order - 1
        ids = [self._index.get(t, UNK) for t in tokens[max(0, len(tokens) - n) :]] if n else []
        return np.array([BOS] * (n - len(ids)) + ids, dtype=np.int64)

    def log_distribution(self, context: Sequence[str]) -> np.ndarray:
        """The full next-token log-distribution after the tokens ``context`` (-inf for ``<s>``)."""
        p = self._distribution(self._context(context))
        return np.log(p, out=np.full_like(p, -np.inf), where=p > 0)

    def complete(self, prefix: str, max_tokens: int) -> str:
        """Greedy continuation of ``prefix``: up to ``max_tokens`` tokens joined by spaces,
        stopping at ``</s>`` and never emitting ``<unk>``."""
        segments = [tokenize(s, self.config.norm) for s in _segments(prefix, self.config.boundary)]
        context = self._context([t for s in segments[-1:] for t in s])
        out: list[str] = []
        for _ in range(max_tokens):
            p = self._distribution(context)
            p[[UNK, BOS]] = -1.0
            best = int(np.argmax(p))  # NOTE: ties go to the lowest id: deterministic
            if best == EOS:
                break
            out.append(self.vocab[best])
            context = np.append(context[1:], best) if len(context) else context
        return " ".join(out)

    def save(self, path: StrPath) -> None:
        """Write the model atomically: .npz arrays with an orjson header (format, version...)."""
        header = {**self.describe(), "tool_version": __version__}
        arrays: dict[str, np.ndarray] = {
            "header": np.frombuffer(orjson.dumps(header), dtype=np.uint8),
            "vocab": np.frombuffer("\n".join(self.vocab).encode("utf-8"), dtype=np.uint8),
            "p1": self.p1,
            "moments": np.array([self.m1, self.m2]),
        }
        for k, level in enumerate(self.levels, start=2):
            arrays.update({f"k{k}_{name}": getattr(level, name) for name in LEVEL_FIELDS})
        with atomic_writer(path) as fh:
            cast(Any, np.savez)(fh, **arrays)  # NOTE: numpy's stub mistypes **kwds

    @classmethod
    def load(cls, path: StrPath) -> NgramLM:
        """Read a model written by :meth:`save`, checked whole; InputError for anything else."""
        model = model_file.read(path)
        h = model.header
        config = NgramConfig(h["order"], h["min_count"], h["boundary"], NormConfig(**h["norm"]))
        meta = {key: h[key] for key in ("tokens", "data_sha256")}
        levels = [_Level(*arrays) for arrays in model.levels]
        return cls(config, model.vocab, (model.p1, *model.moments), levels, meta)


def train(texts: Iterable[str], config: NgramConfig = NgramConfig()) -> NgramLM:
    """Train an n-gram LM on ``texts`` (each one document)."""
    vocab, stream, digest = _encode(texts, config)
    v = len(vocab)
    pos = np.flatnonzero(stream != BOS)
    raw = _count(stream, pos, v, config.order)
    adjusted = _adjusted(raw, np.bincount(stream[pos], minlength=v), v)
    p1, m1, m2 = _unigram(adjusted[0])
    prev: tuple[np.ndarray, ...] = (p1, np.array([m1]), np.array([m2]))
    levels = []
    for level_raw, level_adjusted in zip(raw, adjusted[1:]):
        level = _level(level_raw, level_adjusted, prev, v)
        levels.append(level)
        prev = (level.prob, level.m1, level.m2)
    return NgramLM(config, vocab, (p1, m1, m2), levels, {"tokens": len(pos), "data_sha256": digest})


class NgramLMProvider:
    """``ngram-lm:PATH``: a saved model (``.npz``), or a corpus (what ``iter_corpus`` reads)
    trained on first use and cached, keyed by the sha256 of the input files and the config, in
    ``$CONTAM_CACHE_DIR/ngram-lm`` (default ``~/.cache/contam/ngram-lm``)."""

    def __init__(
        self,
        spec: str,
        *,
        order: int = 3,
        min_count: int = 1,
        boundary: Boundary = "document",
        cache_dir: StrPath | None = None,
    ) -> None:
        source = spec.removeprefix("ngram-lm:")
        if not source:
            raise UsageError("ngram-lm: spec needs a model file or a text, e.g. ngram-lm:data.txt")
        self.spec, self.source = f"ngram-lm:{source}", Path(source)
        config = NgramConfig(order, min_count, boundary)
        if self.source.suffix == ".npz":
            self.model = NgramLM.load(self.source)
            if self.model.config.describe() != config.describe() and config != NgramConfig():
                raise UsageError(f"{source}: a saved model keeps the options it was trained with")
        else:
            self.model = _train_cached(self.source, config, cache_dir)

    def describe(self) -> dict[str, Any]:
        return {"provider": "ngram-lm", "source": str(self.source), **self.model.describe()}

    def token_scores(self, texts: Sequence[str]) -> list[TextScores]:
        return [self.model.score(text) for text in texts]

    def complete(self, prefixes: Sequence[str], *, max_tokens: int) -> list[str]:
        return [self.model.complete(prefix, max_tokens) for prefix in prefixes]


def _train_cached(source: Path, config: NgramConfig, cache_dir: StrPath | None) -> NgramLM:
    digest = hashlib.sha256(orjson.dumps([FORMAT, VERSION, config.describe()]))
    for file in iter_files(source):
        name = file.relative_to(source).as_posix() if source.is_dir() else ""
        digest.update(orjson.dumps([name, sha256_file(file)]))
    path = Path(cache_dir or provider_cache_dir("ngram-lm")) / f"{digest.hexdigest()}.npz"
    if path.is_file():
        try:
            return NgramLM.load(path)
        except InputError:
            pass  # NOTE: a damaged or outdated cache entry is rebuilt, never trusted
    model = train((record.text for record in iter_corpus([source])), config)
    model.save(path)
    return model
