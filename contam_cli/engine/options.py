"""ScanOptions: how to scan (everything except the inputs and the flag policy)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contam_cli.engine.fuzzy.config import FuzzyConfig
from contam_cli.errors import ArgumentError
from contam_cli.io.extract import TextSpec
from contam_cli.text import DEFAULT_NORM, HASH_NAME, NormConfig

__all__ = ["ScanOptions"]


@dataclass(frozen=True)
class ScanOptions:
    """How to scan. Every field is checked when the options are made.

    >>> ScanOptions(n=8).describe()["n"]
    8
    """

    n: int = 13
    """n-gram size, in tokens."""
    norm: NormConfig = DEFAULT_NORM
    eval_spec: TextSpec = TextSpec()
    corpus_spec: TextSpec = TextSpec()
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    chunk_bytes: int = 1 << 20
    """Corpus bytes per vectorized chunk (whole documents)."""
    jobs: int = 1
    """Worker processes for corpus shards (0: all cores)."""
    redact: bool = False
    hash_corpus: bool = True
    """Record each corpus file's sha256 in the report (computed beside the scan)."""
    accel: bool | None = None
    """Use the compiled kernels (extra ``fast``): None = when installed and the corpus on disk is
    large enough that loading them pays."""
    ignore_common: int | None = None
    """Boilerplate: eval n-grams found in more than this many distinct corpus documents (all
    sources together) count neither toward overlap nor toward runs (None: off). Costs a first
    pass over the corpus that counts them."""
    ignore_from: tuple[Path, ...] = ()
    """Boilerplate collections (files or directories): eval n-grams found in them never count."""
    fuzzy: FuzzyConfig | None = None
    """The fuzzy detector (reworded leaks), None: off. On, every corpus batch also goes through
    it (tokenized once for both detectors), and the report gains its score, reasons and
    evidence; its flag threshold is the policy's ``min_fuzzy``."""
    eval_cache: Path | None = None
    """A directory where eval indexes are kept and reused, keyed by the eval files' sha256 and
    the options (see :mod:`contam_cli.features.eval_cache`); None: each scan builds its own.
    How fast, not what: the report is the same with or without it."""

    def __post_init__(self) -> None:
        _int("n", self.n, 1)
        _int("jobs", self.jobs, 0)
        _int("chunk_bytes", self.chunk_bytes, 1)
        if self.ignore_common is not None:
            _int("ignore_common", self.ignore_common, 0)
        items = self.ignore_from
        paths = isinstance(items, (list, tuple)) and all(isinstance(p, (str, Path)) for p in items)
        if not paths:
            raise ArgumentError("ignore_from must be a sequence of paths")
        # NOTE: frozen; normalized once here so that equal options compare and describe equal.
        object.__setattr__(self, "ignore_from", tuple(Path(p) for p in self.ignore_from))
        if not isinstance(self.norm, NormConfig):
            raise ArgumentError(f"norm must be a NormConfig, got {type(self.norm).__name__}")
        for name in ("eval_spec", "corpus_spec"):
            if not isinstance(getattr(self, name), TextSpec):
                raise ArgumentError(f"{name} must be a TextSpec")
        if self.eval_cache is not None:
            if not isinstance(self.eval_cache, (str, Path)):
                raise ArgumentError("eval_cache must be a path or None")
            object.__setattr__(self, "eval_cache", Path(self.eval_cache))
        if self.fuzzy is not None and not isinstance(self.fuzzy, FuzzyConfig):
            raise ArgumentError(
                f"fuzzy must be a FuzzyConfig or None, got {type(self.fuzzy).__name__}"
            )

    @property
    def ignores(self) -> bool:
        """Whether boilerplate suppression is on."""
        return self.ignore_common is not None or bool(self.ignore_from)

    def describe(self) -> dict[str, Any]:
        """What a report records of these options (the boilerplate and fuzzy settings only when
        on, so that reports without them keep their bytes; the fuzzy flag threshold is the
        policy's, recorded there).

        >>> ScanOptions(ignore_common=20).describe()["boilerplate"]
        {'ignore_common': 20, 'ignore_from': []}
        >>> ScanOptions(fuzzy=FuzzyConfig()).describe()["fuzzy"]["max_gap"]
        3
        """
        out: dict[str, Any] = {
            "n": self.n,
            "normalization": self.norm.describe(),
            "hash": HASH_NAME,
        }
        if self.ignores:
            out["boilerplate"] = {
                "ignore_common": self.ignore_common,
                "ignore_from": [str(p) for p in self.ignore_from],
            }
        if self.fuzzy is not None:
            settings = self.fuzzy.describe()
            settings.pop("min_fuzzy")
            out["fuzzy"] = settings
        return out


def _int(name: str, value: object, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentError(f"{name} must be an integer >= {least}, got {value!r}")
    if value < least:
        raise ArgumentError(f"{name} must be an integer >= {least}, got {value!r}")
