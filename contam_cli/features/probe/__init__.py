"""The model-based detectors as one feature: ``probe()`` scores an eval set with a model (Min-K%,
Min-K%++, perplexity, zlib, guided prompting), resumably, optionally against known-clean
controls; ``train_lm()`` trains the built-in n-gram LM to probe with."""

from __future__ import annotations

from contam_cli.features.probe.controls import (
    CONTROL_SUFFIX,
    control_percentiles,
    control_stats,
)
from contam_cli.features.probe.methods import (
    ALL_METHODS,
    DEFAULT_METHODS,
    TOKEN_METHODS,
    Plan,
    parse_methods,
)
from contam_cli.features.probe.provider import open_provider, provider_options
from contam_cli.features.probe.run import ProbeProgress, probe
from contam_cli.features.probe.sidecar import sidecar_path
from contam_cli.features.probe.train import TrainedLM, train_lm

__all__ = [
    "ALL_METHODS",
    "CONTROL_SUFFIX",
    "DEFAULT_METHODS",
    "TOKEN_METHODS",
    "Plan",
    "ProbeProgress",
    "TrainedLM",
    "control_percentiles",
    "control_stats",
    "open_provider",
    "parse_methods",
    "probe",
    "provider_options",
    "sidecar_path",
    "train_lm",
]
