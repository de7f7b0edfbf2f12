"""The n-gram LM's model file, read and checked whole before any of it is used.

``contam probe train-lm`` writes an ``.npz`` archive (:meth:`NgramLM.save
<contam_cli.detectors.providers.ngram_lm.NgramLM.save>`) of these arrays, V the vocabulary's
size and n the order:

* ``header`` (uint8): UTF-8 JSON, ``format`` ``contam-ngram-lm``, ``version`` 1, the config
  (``order``, ``min_count``, ``boundary``, ``norm``) and ``tokens``, ``data_sha256``;
* ``vocab`` (uint8): the V tokens in UTF-8, one per line, ``<unk> <s> </s>`` first;
* ``p1`` (float64, V): the unigram distribution (0 for ``<s>`` only, summing to 1);
* ``moments`` (float64, 2): its E[log p] and E[(log p)²];
* per order k = 2..n, ``k{k}_ctx_keys`` (int64, C, strictly increasing, each context's id in
  the order below · V + a token), ``k{k}_gamma`` ``k{k}_m1`` ``k{k}_m2`` (float64, C) and
  ``k{k}_keys`` (int64, N, strictly increasing, context id · V + token), ``k{k}_prob``
  (float64, N).

Anything else, a truncated archive, a file that is no archive at all, a missing array or one of
another size or type, is an :class:`~contam_cli.errors.InputError` naming the file and what is
wrong, never an IndexError while scoring.
"""

from __future__ import annotations

import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson

from contam_cli.errors import InputError
from contam_cli.io.formats import StrPath

__all__ = ["BOUNDARIES", "FORMAT", "LEVEL_FIELDS", "SPECIALS", "VERSION", "ModelFile", "read"]

FORMAT, VERSION = "contam-ngram-lm", 1
SPECIALS = ("<unk>", "<s>", "</s>")
BOUNDARIES = ("document", "line", "sentence")
LEVEL_FIELDS = ("ctx_keys", "gamma", "m1", "m2", "keys", "prob")
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
_DAMAGED = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)


@dataclass(frozen=True, eq=False)
class ModelFile:
    """A model file's contents, checked: the header, the vocabulary, the unigram distribution
    and its two moments, and per order 2..n the arrays of :data:`LEVEL_FIELDS`."""

    header: dict[str, Any]
    vocab: list[str]
    p1: np.ndarray
    moments: tuple[float, float]
    levels: list[tuple[np.ndarray, ...]]


def read(path: StrPath) -> ModelFile:
    """Read and check the model file at `path`; InputError for anything train-lm did not
    write."""
    arrays = _arrays(path)

    def bad(message: str) -> InputError:
        return InputError(path, f"not a usable {FORMAT} model: {message}")

    header = _header(arrays.get("header"), bad)
    order = header["order"]
    names = {"header", "vocab", "p1", "moments"}
    names |= {f"k{k}_{f}" for k in range(2, order + 1) for f in LEVEL_FIELDS}
    missing, extra = sorted(names - arrays.keys()), sorted(arrays.keys() - names)
    if missing:
        raise bad(f"the array {missing[0]!r} is missing")
    if extra:
        raise bad(f"unexpected array {extra[0]!r} (a {order}-gram model has no such array)")
    vocab = _vocab(arrays["vocab"], bad)
    v = len(vocab)
    p1 = _typed(arrays, "p1", np.float64, bad, v)
    if not (np.all(np.isfinite(p1)) and np.all(p1 >= 0) and p1[1] == 0 and np.all(p1[2:] > 0)):
        raise bad("'p1' holds values that are not probabilities (0 for <s> only)")
    if abs(float(p1.sum()) - 1.0) > 1e-6:
        raise bad(f"'p1' sums to {float(p1.sum())!r}, not 1")
    moments = _typed(arrays, "moments", np.float64, bad, 2)
    _finite(moments, "moments", bad)
    levels, contexts = [], 1
    for k in range(2, order + 1):
        levels.append(_level(arrays, k, v, contexts, bad))
        contexts = len(levels[-1][0])
    m1, m2 = moments.tolist()
    return ModelFile(header, vocab, p1, (m1, m2), levels)


def _arrays(path: StrPath) -> dict[str, np.ndarray]:
    """Every array of the archive, or InputError saying why it cannot be read."""
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise InputError(path, f"cannot read the n-gram LM file: {exc.strerror or exc}") from None
    if magic not in _ZIP_MAGIC:
        raise InputError(
            path, f"not a {FORMAT} model file (.npz) as 'contam probe train-lm' writes"
        )
    arrays: dict[str, np.ndarray] = {}
    name = ""
    try:
        with np.load(path, allow_pickle=False) as data:
            for name in data.files:
                arrays[name] = data[name]
    except _DAMAGED as exc:
        what = f" (array {name!r})" if name else ""
        raise InputError(path, f"truncated or damaged n-gram LM file{what}: {exc}") from None
    return arrays


def _header(raw: np.ndarray | None, bad: Any) -> dict[str, Any]:
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise bad("no 'header' array of bytes")
    try:
        header = orjson.loads(raw.tobytes())
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    if header.get("format") != FORMAT or header.get("version") != VERSION:
        raise bad(f"not a {FORMAT} file of version {VERSION}")
    order, min_count, norm = header.get("order"), header.get("min_count"), header.get("norm")
    if type(order) is not int or not 1 <= order <= 6:
        raise bad(f"its header's order is {order!r}, not 1 to 6")
    if type(min_count) is not int or min_count < 1:
        raise bad(f"its header's min_count is {min_count!r}, not a count of at least 1")
    if header.get("boundary") not in BOUNDARIES:
        raise bad(f"its header's boundary is {header.get('boundary')!r}")
    if not (isinstance(norm, dict) and set(norm) == {"nfkc", "casefold"}) or not all(
        type(x) is bool for x in norm.values()
    ):
        raise bad(f"its header's norm is {norm!r}, not {{'nfkc': bool, 'casefold': bool}}")
    if type(header.get("tokens")) is not int or not isinstance(header.get("data_sha256"), str):
        raise bad("its header lacks the token count or the training data's sha256")
    return header


def _vocab(raw: np.ndarray, bad: Any) -> list[str]:
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise bad("'vocab' is not an array of bytes")
    try:
        vocab = raw.tobytes().decode("utf-8").split("\n")
    except UnicodeDecodeError:
        raise bad("'vocab' is not UTF-8") from None
    if tuple(vocab[: len(SPECIALS)]) != SPECIALS or len(set(vocab)) != len(vocab):
        raise bad("'vocab' does not start with <unk> <s> </s> or repeats a token")
    return vocab


def _typed(arrays: dict[str, np.ndarray], name: str, dtype: Any, bad: Any, size: int | None) -> Any:
    a = arrays[name]
    if a.dtype != dtype or a.ndim != 1 or (size is not None and len(a) != size):
        want = np.dtype(dtype).name + (f"[{size}]" if size is not None else " (one dimension)")
        raise bad(f"{name!r} is {a.dtype.name}{list(a.shape)}, not {want}")
    return a


def _finite(a: np.ndarray, name: str, bad: Any) -> None:
    if not np.all(np.isfinite(a)):
        raise bad(f"{name!r} holds NaN or infinite values")


def _level(
    arrays: dict[str, np.ndarray], k: int, v: int, below: int, bad: Any
) -> tuple[np.ndarray, ...]:
    """Order k's arrays, consistent with each other and with the order below (`below`
    contexts; 1 under the bigrams)."""
    ctx_keys = _typed(arrays, f"k{k}_ctx_keys", np.int64, bad, None)
    c = len(ctx_keys)
    gamma, m1, m2 = (_typed(arrays, f"k{k}_{f}", np.float64, bad, c) for f in ("gamma", "m1", "m2"))
    keys = _typed(arrays, f"k{k}_keys", np.int64, bad, None)
    prob = _typed(arrays, f"k{k}_prob", np.float64, bad, len(keys))
    if not c or not len(keys):
        raise bad(f"order {k} has no n-grams")
    for name, a, limit in ((f"k{k}_ctx_keys", ctx_keys, below), (f"k{k}_keys", keys, c)):
        if a[0] < 0 or np.any(np.diff(a) <= 0) or a[-1] // v >= limit:
            raise bad(f"{name!r} is not increasing or names one of more than {limit} contexts")
    for name, a in ((f"k{k}_gamma", gamma), (f"k{k}_prob", prob)):
        if not (np.all(a > 0) and np.all(a <= 1)):
            raise bad(f"{name!r} holds values that are not probabilities")
    _finite(m1, f"k{k}_m1", bad)
    _finite(m2, f"k{k}_m2", bad)
    return ctx_keys, gamma, m1, m2, keys, prob
