"""Benchmark tooling: a deterministic synthetic corpus and eval set with planted leaks.

The generator lives in :mod:`contam_cli.features.bench.generate` (``generate(out, mb, ...)``, or
``python -m contam_cli.features.bench.generate``); ``scripts/bench_scan.py`` runs it and measures
``contam scan`` against ``wc -w``, the reference scanner and peers on the same files.
"""

from __future__ import annotations
