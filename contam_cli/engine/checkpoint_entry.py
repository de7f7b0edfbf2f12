"""A checkpoint entry's bytes, and reading one back only as contam's own result types.

An entry is :data:`HEADER`, the sha256 of the pickle, then the pickle. The digest catches damage
(a truncated or flipped file), not tampering: whoever can write to a checkpoint directory can
write the digest too, and a plain ``pickle.loads`` runs whatever a pickle names (a REDUCE of
``os.system``). So an entry is unpickled by :class:`_ResultUnpickler`, whose ``find_class``
gives only the globals in :data:`ALLOWED`: the classes of the results of contam's checkpointed
passes and numpy's array reconstruction. Each is looked up by its exact (module, name) pair
before anything is imported, so a dotted name (``contam_cli.engine.checkpoint``, ``os.system``)
is refused as well. A refused entry is a damaged one: :func:`load_entry` raises
:class:`DamagedEntry` and the caller runs the task again, never the entry.

``tests/engine/test_checkpoint_entries.py`` collects the globals of every pass's real entries
and holds :data:`ALLOWED` to them: a new result type fails that test instead of running again on
every resume without a word.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from typing import Any

__all__ = ["ALLOWED", "HEADER", "DamagedEntry", "dump_entry", "load_entry"]

HEADER = b"contam\x00\x01"
"""An entry's first bytes; the sha256 of the pickle follows, then the pickle."""

_RESULTS = {
    "contam_cli.engine.accumulator": ("Accumulator",),  # scan, clean --flagged-only
    "contam_cli.engine.evidence": ("Evidence",),
    "contam_cli.engine.doc_frequency": ("DocFrequency",),  # --ignore-common
    "contam_cli.engine.fuzzy.shared": ("WithFuzzy",),  # --fuzzy
    "contam_cli.engine.fuzzy.accumulator": ("FuzzyAccumulator",),
    "contam_cli.engine.fuzzy.config": ("FuzzyConfig",),
    "contam_cli.engine.fuzzy.evidence": ("FuzzyEvidence",),
    "contam_cli.engine.corpus_index.mapper": ("ItemInfo", "MapResult"),  # index build (map)
    "contam_cli.features.clean.corpus": ("FileStats",),  # corpus clean
}
# NOTE: numpy 2 names its modules numpy._core, numpy 1 numpy.core. A contiguous array pickles
# as _frombuffer (protocol 5); any other array (a view, an object array) as _reconstruct of an
# ndarray; a numpy scalar as scalar. Each makes an array or scalar of its arguments, no more.
_NUMPY = {
    "numpy": ("ndarray", "dtype"),
    **{f"numpy.{core}.numeric": ("_frombuffer",) for core in ("_core", "core")},
    **{f"numpy.{core}.multiarray": ("_reconstruct", "scalar") for core in ("_core", "core")},
}
ALLOWED = frozenset(
    (module, name)
    for table in (_RESULTS, _NUMPY)
    for module, names in table.items()
    for name in names
)
"""The only globals an entry's pickle may name, as (module, name)."""


class DamagedEntry(ValueError):
    """An entry that is not one contam wrote: damaged, foreign, or naming a refused global."""


class _ResultUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED:
            raise DamagedEntry(f"it names {module}.{name}, not one of contam's result types")
        return super().find_class(module, name)


def dump_entry(entry: Any) -> bytes:
    """`entry`'s bytes as an entry file holds them."""
    data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER + hashlib.sha256(data).digest() + data


def load_entry(data: bytes) -> Any:
    """An entry's content, unpickled only when its bytes are the ones written (their sha256) and
    only as the types in :data:`ALLOWED`; :class:`DamagedEntry` otherwise. A damaged entry that
    still unpickled gave another result, or failed in the unpickler with whatever a flipped byte
    made of it (a module name, a size)."""
    start = len(HEADER) + 32
    head, digest, body = data[: len(HEADER)], data[len(HEADER) : start], data[start:]
    if head != HEADER or hashlib.sha256(body).digest() != digest:
        raise DamagedEntry("its bytes differ from their sha256")
    try:
        return _ResultUnpickler(io.BytesIO(body)).load()
    except DamagedEntry:
        raise
    except Exception as exc:  # NOTE: the allowed types' own checks, on a forged entry's values
        raise DamagedEntry(f"it does not unpickle ({type(exc).__name__})") from None
