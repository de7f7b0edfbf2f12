"""Text: one definition of "the same words" (normalization, tokens) and their stable hashes."""

from __future__ import annotations

from contam_cli.io.packed import PackedTexts, doc_lengths
from contam_cli.text.hashing import HASH_NAME, fmix64, hash_tokens, ngram_hash, token_hash
from contam_cli.text.normalize import (
    DEFAULT_NORM,
    SEGMENTED_RANGES,
    NormConfig,
    counted_as_one_token,
    is_segmented,
    normalize,
    token_range,
    token_span_array,
    token_spans,
    tokenize,
    word_token_edge,
)
from contam_cli.text.stream import TokenStream, WordLayout
from contam_cli.text.tables import fast_table
from contam_cli.text.tokenizer import Tokenizer, ngram_hashes

__all__ = [
    "DEFAULT_NORM",
    "HASH_NAME",
    "SEGMENTED_RANGES",
    "NormConfig",
    "PackedTexts",
    "TokenStream",
    "Tokenizer",
    "WordLayout",
    "counted_as_one_token",
    "doc_lengths",
    "fast_table",
    "fmix64",
    "hash_tokens",
    "is_segmented",
    "ngram_hash",
    "ngram_hashes",
    "normalize",
    "token_hash",
    "token_range",
    "token_span_array",
    "token_spans",
    "tokenize",
    "word_token_edge",
]
