"""The launch as it was traced, for the report and the JSON: the block, grid and cluster,
the arguments given, made up (zero-filled buffers) or left at 0, the ``__constant__``
values and device memory set, the global memory it touched undescribed, and how the grid
was covered (:class:`GridCoverage`: every block, blocks proven alike, or a sample); the
arguments line (:func:`describe_arguments`) and the note on TMA copies through maps of zero
bytes (:func:`zero_map_note`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    from .kernel.launch import LaunchPlan


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
    #: where the parameters have no names (labelled by position): why, once (its note)
    unnamed: str | None = None

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
            "unnamed_parameters": self.unnamed,
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


def describe_arguments(plan: LaunchPlan) -> tuple[tuple[str, str], ...]:
    """(parameter label, value) for the report: given values, buffers, defaults."""
    values: dict[int, tuple[str, str]] = {}
    for arg in plan.arguments:
        values[arg.param.ordinal] = (arg.param.label, arg.text)
    for buf in plan.buffers:
        what = (
            f"zero-filled buffer ({buf.size:,} B)"
            if buf.synthetic
            else f"@{buf.source} ({buf.size:,} B)"
        )
        values[buf.param.ordinal] = (buf.param.label, what)
    for arg in plan.arguments:
        if not arg.given and "CUtensorMap" in (arg.param.type or ""):
            values[arg.param.ordinal] = (
                arg.param.label,
                "zero bytes: tensor map not given, a TMA through it moves no data",
            )
    maps: dict[int, list[str]] = {}
    for tm in plan.tensor_maps:
        maps.setdefault(tm.param.ordinal, []).append(tm.describe())
    if plan.param_image is not None:  # the maps a host program's parameter block holds
        from ..cuda.launch.tensormap import describe
        from .kernel.param_block import tensor_maps_in

        for at, found in tensor_maps_in(plan.param_image, plan.kernel.param_base):
            for p in plan.params:
                if p.offset <= at < p.offset + p.size:
                    inner = f" at +{at - p.offset}" if at > p.offset else ""
                    text = f"tensor map{inner}: {describe(found)} (from {plan.param_source})"
                    maps.setdefault(p.ordinal, []).append(text)
    for f in sorted(plan.fields, key=lambda f: f.offset):  # values at offsets, and the rest
        maps.setdefault(f.param.ordinal, []).append(f.describe())
    for ordinal in {f.param.ordinal for f in plan.fields}:
        maps[ordinal].append(f"the rest: {values[ordinal][1]}")
    for ordinal, texts in maps.items():
        label = next(p.label for p in plan.params if p.ordinal == ordinal)
        values[ordinal] = (label, "; ".join(texts))
    return tuple(values[k] for k in sorted(values))


def zero_map_note(plan: LaunchPlan, skipped: list[tuple[Any, int]]) -> str | None:
    """The note of a launch whose TMA copies went through tensor maps of zero bytes, else
    None: of a parameter block (``--params``; a host program that ran without a GPU could not
    encode them), or of parameters not given (a map inside a struct, as CuTe's TMA copy atoms
    hold theirs, is no ``CUtensorMap`` parameter the arguments line could name)."""
    copies = sum(n for ins, n in skipped if ins.opcode.startswith("UTMA"))
    if not copies:
        return None
    said = (
        f"{copies:,} TMA instruction execution(s) (not modelled, above) went through a tensor "
        "map of zero bytes and moved no data"
    )
    if plan.param_image is None:
        holders = [a.param.label for a in plan.arguments if not a.given and a.param.size >= 128]
        where = (
            f"; parameter(s) {', '.join(holders)}, not given (0), can hold one" if holders else ""
        )
        return (
            f"{said}{where}: give each map with --arg KEY=tensormap:..., or "
            "KEY+OFFSET=tensormap:... for one inside a struct (a CuTe TMA copy atom holds its "
            "map at +0), or the host program's whole parameter block with --params "
            "(docs/trace.md, 'Tensor maps'; docs/recipes.md)"
        )
    return (
        f"{said}: the maps in {plan.param_source} were never "
        "encoded. A host program run without a GPU cannot encode them (cuTensorMapEncodeTiled "
        "is the driver's; CUTLASS then prints 'Failed to initialize the TMA descriptor'): "
        "build it with docs/examples/tensormap_standin.h (docs/recipes.md, 'Without a GPU') "
        "and dump the block again, or give each map with --arg (KEY=tensormap:..., or "
        "KEY+OFFSET=tensormap:... for one inside a struct: docs/trace.md, 'Tensor maps')"
    )
