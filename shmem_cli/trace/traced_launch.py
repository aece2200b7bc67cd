"""The launch as it was traced, for the report and the JSON: the block, grid and cluster,
the arguments given, made up (zero-filled buffers) or left at 0, the ``__constant__``
values and device memory set, the global memory it touched undescribed, and how the grid
was covered (:class:`GridCoverage`: every block, blocks proven alike, or a sample).
"""

from __future__ import annotations

from typing import Any

from ..plumbing.frozen import frozen


@frozen
class GridCoverage:
    """How a grid was traced: ``whole`` (every block ran), ``alike`` (the blocks were proven
    to behave alike: the first ran and stands for all) or ``sample`` (the whole grid would
    not fit the budget: blocks spread over it ran, and only those are counted)."""

    mode: str
    blocks: int  # of the grid
    run: int  # blocks that ran
    proof: str | None = None  # alike: what was checked
    differs: str | None = None  # the first decision that depends on the block, if any
    sampled: str | None = None  # sample: why, and which blocks

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "blocks": self.blocks,
            "blocks_run": self.run,
            "proof": self.proof,
            "differs": self.differs,
            "sampled": self.sampled,
        }

    def text(self) -> str:
        """What a reader needs to know in one sentence."""
        if self.mode == "alike":
            return self.proof or ""
        if self.mode == "sample":
            why = f" ({self.differs})" if self.differs else ""
            return f"sampled grid: {self.sampled}; the totals count only those blocks{why}"
        return f"every one of the {self.blocks:,} blocks ran ({self.differs})"


@frozen
class LaunchInfo:
    """The launch as traced, for the report."""

    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    blocks_traced: int
    dynamic_smem: int
    static_smem: int
    arguments: tuple[tuple[str, str], ...]  # (parameter label, value as given or defaulted)
    zero_filled: tuple[str, ...]  # pointer parameters given a made-up, zero-filled buffer
    defaulted: tuple[str, ...]  # by-value parameters nobody gave (0)
    constants: tuple[tuple[str, str], ...] = ()  # __constant__ variables set: (name, value)
    unset_constants: tuple[str, ...] = ()  # __constant__ variables read but never set (0)
    # global memory the launch did not describe that the kernel touched: its regions, and
    # the lanes that read bytes of it never written (zeros)
    undescribed: tuple[str, ...] = ()
    undescribed_reads: int = 0
    memory: tuple[tuple[int, int, str], ...] = ()  # --memory: (address, bytes, file or values)
    coverage: GridCoverage | None = None  # a grid of more than one block: how it was traced
    cluster: tuple[int, int, int] = (1, 1, 1)  # the thread-block cluster the CTAs ran in

    def to_json(self) -> dict[str, Any]:
        """Its keys of the kernel's JSON object, in their order there."""
        return {
            "block": list(self.block),
            "grid": list(self.grid),
            "cluster": list(self.cluster),
            "blocks_traced": self.blocks_traced,
            "grid_coverage": None if self.coverage is None else self.coverage.to_json(),
            "dynamic_smem": self.dynamic_smem,
            "static_smem": self.static_smem,
            "arguments": {label: value for label, value in self.arguments},
            "zero_filled_buffers": list(self.zero_filled),
            "defaulted_arguments": list(self.defaulted),
            "constants": {name: value for name, value in self.constants},
            "unset_constants": list(self.unset_constants),
            "undescribed_memory": {
                "regions": list(self.undescribed),
                "unwritten_reads": self.undescribed_reads,
                "given": [
                    {"address": f"0x{a:x}", "bytes": n, "from": source}
                    for a, n, source in self.memory
                ],
            },
        }
