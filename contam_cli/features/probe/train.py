"""train_lm(): the built-in n-gram language model trained on any corpus contam reads, saved."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contam_cli.detectors.providers.ngram_lm import Boundary, NgramConfig, train
from contam_cli.errors import UsageError
from contam_cli.io.discover import iter_files
from contam_cli.io.extract import TextSpec
from contam_cli.io.inputs import as_record, classify
from contam_cli.io.model import StrPath
from contam_cli.io.output import check_target
from contam_cli.io.readers import iter_corpus
from contam_cli.io.roles import check_roles

__all__ = ["TrainedLM", "train_lm"]


@dataclass(frozen=True)
class TrainedLM:
    """What :func:`train_lm` wrote."""

    path: Path
    config: dict[str, Any]
    """The model's description (order, min_count, boundary, normalization, smoothing...)."""
    documents: int
    tokens: int
    """Predicted training tokens: every normalized token plus one ``</s>`` per sequence."""
    vocab_size: int
    """Distinct tokens kept, with ``<unk>``, ``<s>`` and ``</s>``."""


def train_lm(
    corpus: Any,
    output: StrPath,
    *,
    corpus_spec: TextSpec = TextSpec(),
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    order: int = 3,
    min_count: int = 1,
    boundary: Boundary = "document",
) -> TrainedLM:
    """Train the built-in n-gram LM (:mod:`contam_cli.detectors.providers.ngram_lm`) on
    `corpus` (the input rule; read as scan reads a corpus) and save it to `output`, a ``.npz``
    file that ``--model ngram-lm:OUTPUT`` loads.
    """
    config = NgramConfig(order=order, min_count=min_count, boundary=boundary)
    target = Path(output)
    if target.suffix != ".npz":
        # NOTE: ngram-lm:PATH loads a saved model by this suffix, and trains on anything else.
        raise UsageError(f"{output}: the n-gram LM file must end in .npz (ngram-lm:PATH loads it)")
    given = classify(corpus, what="corpus")
    check_target(target, given.paths)
    # NOTE: --roles naming no turn of a file would train on none of its text: refused.
    files = [f for p in given.paths for f in iter_files(p, tuple(include), tuple(exclude))]
    check_roles(files, corpus_spec.roles, "corpus")
    counted = [0]

    def texts() -> Iterator[str]:
        if given.paths:
            records = iter_corpus(list(given.paths), corpus_spec, include, exclude)
        else:
            assert given.memory is not None
            records = (
                as_record(x, i, "<memory>", corpus_spec, role="corpus")
                for i, x in enumerate(given.memory)
            )
        for record in records:
            counted[0] += 1
            yield record.text

    model = train(texts(), config)
    model.save(target)
    described = model.describe()
    return TrainedLM(target, described, counted[0], int(described["tokens"]), model.vocab_size)
