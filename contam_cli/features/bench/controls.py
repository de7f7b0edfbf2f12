"""Control texts for the labelled benchmark: written like its examples, planted nowhere.

Calibration (``contam calibrate``) and the probe's percentiles need text known to be outside the
corpus and like the eval set. For a :class:`~contam_cli.features.bench.labelled.LabelledSet`
that is text drawn from the SAME text model (vocabulary, phrase pool, punctuation) with the
examples' lengths, from a random stream of its own: so controls share innocent phrases with the
corpus exactly as clean examples do, and no control is ever planted.

>>> from contam_cli.features.bench.labelled import generate_labelled
>>> s = generate_labelled(1, n_clean=2, n_per_kind=1, kinds=("verbatim",))
>>> texts = control_texts(s, 3)
>>> len(texts), texts == control_texts(s, 3), set(texts) & {e.text for e in s.examples}
(3, True, set())
"""

from __future__ import annotations

import numpy as np

from contam_cli.features.bench import labelled
from contam_cli.features.bench.labelled import LabelledSet
from contam_cli.features.bench.textmodel import TextModel

__all__ = ["CONTROL_STREAM", "control_texts", "text_model"]

CONTROL_STREAM = 0xC0417
"""Mixed with the set's seed into the controls' random stream (which the generator never uses)."""


def text_model(data: LabelledSet) -> TextModel:
    """The text model the set was generated with (deterministic from its parameters)."""
    # NOTE: the generator's own construction, so the model cannot drift from the one it used.
    return labelled._Ctx.make(data.params).model


def control_texts(data: LabelledSet, k: int) -> list[str]:
    """`k` texts of the set's text model and example lengths, none of them in its corpus."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"the number of controls must be an integer >= 1, got {k!r}")
    model = text_model(data)
    rng = np.random.default_rng([data.params.seed, CONTROL_STREAM])
    low, high = data.params.example_words
    lengths = rng.integers(low, high + 1, size=k)
    return [draft.text(model) for draft in model.drafts(rng, lengths)]
