"""Content fingerprints: a stable id for an eval example from its normalized text alone.

A fingerprint identifies *what* an example says, not where it sits: reordering, re-indenting or
re-serializing an eval file, changing case or punctuation, leaves it unchanged; so baselines of
accepted findings survive edits that change nothing of the text. It is computed from the
example's normalized tokens (their stable hashes, :mod:`contam_cli.text.hashing`), so it depends on
the normalization recorded in the report, and never on a line number or a corpus.

A per-source fingerprint (``source`` given) distinguishes the same example found in two sources,
for baselines that accept a finding in one source only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from contam_cli.text.normalize import DEFAULT_NORM, TOKEN_RULE, NormConfig
from contam_cli.text.tokenizer import Tokenizer

__all__ = [
    "content_digests",
    "fingerprint",
    "fingerprints",
    "same_fingerprints",
    "text_fingerprint",
]

_SALT = b"contam-finding/2\0"

#: Earlier token rules -> the current one, where the two give the same tokens (so the same
#: fingerprints) for every text without format characters or combining marks NFKC leaves, all
#: ASCII text among them: "/2" only ignores the one and keeps the other in its word.
_SAME_TOKENS = {"letters-digits+segmented-scripts": TOKEN_RULE}


def same_fingerprints(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Whether fingerprints computed under the normalization `recorded` (as
    :meth:`NormConfig.describe` gave it) are those `current` computes: the same description,
    or one of an earlier token rule whose tokens the current one keeps for text without format
    characters or combining marks. A baseline written before "/2" still applies; an accepted
    finding whose text holds such characters gets a new fingerprint and looks new (the gate
    fails closed), never the other way round.

    >>> old = {"unicode": "NFKC", "casefold": True, "tokens": "letters-digits+segmented-scripts"}
    >>> new = DEFAULT_NORM.describe()
    >>> same_fingerprints(old, new), same_fingerprints(new, old)
    (True, False)
    """
    mine = dict(recorded)
    if _SAME_TOKENS.get(str(mine.get("tokens"))) == current.get("tokens"):
        mine["tokens"] = current.get("tokens")
    return mine == dict(current)


def content_digests(hashes: np.ndarray, counts: np.ndarray) -> list[bytes]:
    """Per document of a token stream, a 16-byte digest of its token hashes.

    `hashes` are the stream's uint64 token hashes and `counts` the tokens of each document, in
    order (documents are consecutive in the stream).
    """
    ends = np.cumsum(counts).tolist()
    data = memoryview(np.asarray(hashes).astype("<u8").tobytes())
    blake2b = hashlib.blake2b
    return [
        blake2b(data[8 * a : 8 * b], digest_size=16).digest() for a, b in zip([0, *ends[:-1]], ends)
    ]


def fingerprint(digest: bytes, source: str | None = None) -> str:
    """The fingerprint of an example with content `digest` (32 hex digits).

    >>> len(fingerprint(b"x" * 16))
    32
    """
    return fingerprints([digest], source)[0]


def fingerprints(digests: Iterable[bytes], source: str | None = None) -> list[str]:
    """``[fingerprint(d, source) for d in digests]``, with less work per digest."""
    # NOTE: copying a hash object primed with the salt costs less than making a new one.
    salted = hashlib.sha256(_SALT)
    tail = b"" if source is None else b"\0" + source.encode("utf-8")
    out = []
    for digest in digests:
        h = salted.copy()
        h.update(digest + tail)
        out.append(h.hexdigest()[:32])
    return out


def text_fingerprint(text: str, norm: NormConfig = DEFAULT_NORM, source: str | None = None) -> str:
    """The fingerprint of `text` under `norm`, as a scan computes it.

    >>> text_fingerprint("The CAT, sat.") == text_fingerprint("the cat sat")
    True
    """
    stream = Tokenizer(norm).tokens([text])
    return fingerprint(content_digests(stream.hashes, np.array([len(stream.hashes)]))[0], source)
