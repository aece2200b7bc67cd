"""A ranked sweep as JSON: the one writer for a spec's sweep (``shmem sweep SPEC``) and a
compiled kernel's (``shmem sweep KERNEL.cu --define``).

Each front end hands its variants over as :class:`RankedVariant` records (what the
variant set, its :class:`~shmem_cli.model.Totals` or the error that stopped it, its
shared memory and whether it fits, and the keys only that front end has); the document
is the same shape for both (docs/sweep.md)::

    {"schema_version": 1, "file", "name", "sweep": [...], "smem_limit_bytes",
     "variants": [{"index", <settings>, "wavefronts", "ideal_wavefronts",
                   "excess_wavefronts", "max_ways", "verdict", "cycles", "smem_bytes",
                   "extra_bytes", "fits", "error", <the front end's own keys>}, ...],
     "best": {"index", <settings>, "wavefronts", "extra_bytes"} | null}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from ...model import Totals
from ...plumbing.errors import ShmemError
from ...plumbing.frozen import frozen

#: what a compiled sweep's variants are ranked by first (``--rank``): their wavefronts, or
#: wavefronts per ideal wavefront (where a ``--define`` changes the work, not only the layout)
RANKS = ("wavefronts", "per-ideal")

#: a variant's figures, in this order (null for a variant without a result)
VARIANT_KEYS = (
    "wavefronts",
    "ideal_wavefronts",
    "excess_wavefronts",
    "max_ways",
    "verdict",
    "cycles",
)


@frozen
class RankedVariant:
    """One variant of a sweep as it is ranked and written."""

    index: int
    settings: Mapping[str, Any]  # what the variant set, as JSON keys ({"pad": 1}, {"defines"})
    totals: Totals | None  # None: the variant has no result
    smem_bytes: int | None
    extra_bytes: int | None
    fits: bool
    error: ShmemError | None = None
    details: Mapping[str, Any] = field(default_factory=dict)  # written after "error"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index, **self.settings}
        if self.totals is None:
            out.update(dict.fromkeys(VARIANT_KEYS))
        else:
            out.update(self.totals.json(*VARIANT_KEYS))
        out.update(smem_bytes=self.smem_bytes, extra_bytes=self.extra_bytes, fits=self.fits)
        err = self.error
        out["error"] = (
            None
            if err is None
            else {"message": err.message, "line": err.line, "column": err.column}
        )
        out.update(self.details)
        return out


def sweep_json(
    *,
    file: str,
    name: str | None,
    sweep: Sequence[str],
    smem_limit: int,
    variants: Sequence[RankedVariant],
    best: RankedVariant | None,
) -> dict[str, Any]:
    """The document of a ranked sweep (``sweep``: each axis described)."""
    return {
        "schema_version": 1,
        "file": file,
        "name": name,
        "sweep": list(sweep),
        "smem_limit_bytes": smem_limit,
        "variants": [v.to_json() for v in variants],
        "best": None
        if best is None or best.totals is None
        else {
            "index": best.index,
            **best.settings,
            "wavefronts": best.totals.wavefronts,
            "extra_bytes": best.extra_bytes,
        },
    }
