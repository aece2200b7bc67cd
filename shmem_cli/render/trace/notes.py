"""What a trace report says after its tables, kernel by kernel: what each wgmma and TMA
copy read (decoded), the instructions whose shared-memory traffic is not modelled, and the
notes (addresses that depend on data, made-up or missing inputs, a sampled grid, retried
atomics, provisional or inexact figures), most saying what to give to make them exact.

:func:`where`, a row's place, is the one spelling the trace's tables use too.
"""

from __future__ import annotations

from ...plumbing.errors import file_line
from ...trace.result import CP_ASYNC_NOTE, KernelTrace
from ..plain import Block, Column, Styled, Table


def where(file: str | None, line: int | None) -> str:
    """``FILE:LINE``, or ``?`` where the row has no source line."""
    return "?" if line is None else file_line(file, line)


def sibling_note(kernel: KernelTrace) -> str | None:
    """What a ``?`` after a row's line means, with the other lines each such line may be."""
    other: dict[tuple[str, int], set[tuple[str, int]]] = {}
    for a in kernel.accesses:
        if a.site.also:
            other.setdefault((a.file or "", a.line or 0), set()).update(a.site.also)
    if not other:
        return None
    said = "; ".join(
        f"{where(*line)}? may be "
        + ", ".join(f"line {o[1]}" if o[0] == line[0] else where(*o) for o in sorted(others))
        for line, others in sorted(other.items())
    )
    return (
        "a line marked ? is the line table's pick among the calls that inline the same "
        f"library code, which it cannot tell apart ({said}): the library line after it "
        "is right; see docs/trace.md, 'Each row is placed at the innermost line'"
    )


#: said when no row has a source line
NO_LINES = (
    "no instruction has a source line (line ?): the cubin holds no line table; build it with "
    "nvcc -lineinfo (as shmem compiles a .cu) to see the kernel's lines, and its parameter names"
)
#: said after the parameters left at 0 when no shared-memory instruction ran
IDLE_DEFAULTS = (
    ", and no shared-memory instruction ran: a kernel that takes its sizes, pointers or "
    "tensor maps from its parameters (a CUTLASS or FlashAttention Params struct) does no "
    "work with zeros. Give the bytes the host program passed with --params @FILE "
    "(docs/recipes.md), or each parameter with --arg"
)


def notes(kernel: KernelTrace) -> list[Block]:
    """Warnings under the tables: data-dependent addresses, made-up data, provisional figures."""
    out: list[Block] = []
    launch = kernel.launch
    grid = launch.coverage
    if grid is not None and grid.mode != "whole":  # a whole grid is what was asked
        color = "yellow" if grid.mode == "sample" else "dim"
        out.append(Styled(f"note: {grid.text()}", color))
    if kernel.fills_gpu is not None:
        out.append(Styled(f"note: {kernel.fills_gpu}", "dim"))
    dependent = sum(1 for a in kernel.accesses if a.data_dependent)
    dependent += sum(1 for n in kernel.not_modelled if n.data_dependent)  # a remote access
    if dependent:
        sources = kernel.data_from
        text = Styled(
            f"note: {dependent} instruction(s) (flag 'data') have addresses, lanes or "
            "counts decided by global-memory data"
            + (f" read from {', '.join(sources)}" if sources else ""),
            "yellow",
        )
        # the made-up buffers among those read (all of them where no buffer is named)
        named = {label for s in sources for label in s.removeprefix("one of ").split(", ")}
        zeros = [z for z in launch.zero_filled if z in named] if sources else launch.zero_filled
        if zeros:
            text.append(
                f"; the buffers of parameter(s) {', '.join(zeros)} were zero-filled:"
                " give real data with --arg NAME=@FILE.npy or @FILE.bin",
                "yellow",
            )
        out.append(text)
    if kernel.accesses and all(a.line is None for a in kernel.accesses):
        out.append(Styled(f"note: {NO_LINES}", "dim"))
    if launch.defaulted:
        said = f"note: parameter(s) {', '.join(launch.defaulted)} were not given and are 0"
        # a kernel with no shared memory and no shared-memory instruction does none with
        # any values: the zeros are not why nothing ran
        unshared = not kernel.shared_code and launch.static_smem + launch.dynamic_smem == 0
        if kernel.accesses or kernel.dsmem.requests or unshared:
            out.append(Styled(said, "dim"))
        else:  # nothing ran: the zeros are the likely reason (a library's Params left zero)
            out.append(Styled(said + IDLE_DEFAULTS, "yellow"))
    if kernel.provisional:
        out.append(Styled(f"note: {CP_ASYNC_NOTE}", "cyan"))
    bypass = _free_copies(kernel)
    if bypass:
        out.append(Styled(f"note: {bypass}", "dim"))
    unsure = sibling_note(kernel)
    if unsure:
        out.append(Styled(f"note: {unsure}", "yellow"))
    if kernel.generic_atoms:
        out.append(Styled(f"note: {generic_atoms_note(kernel)}", "dim"))
    contended = [a for a in kernel.accesses if a.cas_retries]
    if contended:
        retries = sum(a.cas_retries for a in contended)
        places = ", ".join(sorted({where(a.file, a.line) for a in contended}))
        out.append(
            Styled(
                f"note: {retries:,} compare-and-swap attempt(s) failed and were retried "
                f"(flag 'contention', at {places}): lanes contending for one address go round "
                "their atomic loop again, and every retry is in the requests and wavefronts of "
                "the loop's rows (its read and its swap). The number of retries is the GPU's "
                "where the warps reach the loop together; where three or more warps contend "
                "for an address, or the warps arrive apart, it changes from run to run on the "
                "GPU itself (docs/hardware-model.md section 5a)",
                "yellow",
            )
        )
    notes = [f"note: {kernel.arch_note}"] if kernel.arch_note else []
    notes += [f"build: cached ({kernel.cached})"] if kernel.cached else []  # --build-cache
    notes += [f"note: {kernel.records_note}"] if kernel.records_note else []
    notes += [f"note: {kernel.clock_note}"] if kernel.clock_note else []
    notes += [f"note: {kernel.wait_note}"] if kernel.wait_note else []
    out += [Styled(text, "dim") for text in notes]
    out += [Styled(text, "yellow") for text in kernel.compiler_warnings]  # "ptxas: ..."
    if kernel.tensor_map_note:
        out.append(Styled(f"note: {kernel.tensor_map_note}", "yellow"))
    if launch.unset_constants:
        out.append(
            Styled(
                f"note: the kernel read __constant__ {', '.join(launch.unset_constants)}, which "
                "neither the cubin initialises nor the launch set: read as 0 (as the driver "
                "loads it), values that depend on it are inexact; give --const NAME=v,...|@FILE",
                "yellow",
            )
        )
    if launch.undescribed:
        shown = ", ".join(launch.undescribed[:4]) + (", ..." if len(launch.undescribed) > 4 else "")
        out.append(
            Styled(
                f"note: the kernel touched global memory the launch did not describe ({shown}): "
                "untouched device memory, reading what the kernel wrote"
                + (", what --memory gave" if launch.memory else "")
                + ", else zeros "
                f"({launch.undescribed_reads:,} lane read(s) of bytes never written; values that "
                "depend on them are inexact)",
                "yellow",
            )
        )
    inexact = sum(a.inexact_requests for a in kernel.accesses)
    if inexact:
        out.append(
            Styled(
                f"note: {inexact} request(s) use an address the emulator could not compute exactly",
                "bold red",
            )
        )
    return out


def _free_copies(kernel: KernelTrace) -> str | None:
    """Why cp.async rows show requests and no wavefronts: the ``.cg`` copies' rule."""
    free = [
        a
        for a in kernel.accesses
        if a.op == "cp_async" and a.result.requests and not a.result.wavefronts
    ]
    if not free:
        return None
    requests = sum(a.result.requests for a in free)
    # .cg copies that do cost: only their zero-filling executions do, so a row's figure per
    # request is an average (Triton's prefetch past a pipelined loop's end, a masked tail)
    filling = [
        a
        for a in kernel.accesses
        if a.op == "cp_async" and a.result.wavefronts and ".BYPASS" in a.site.opcode
    ]
    others = (
        f" The other {len(filling)} cp.async.cg instruction(s) cost only in the executions "
        "that zero-filled lanes (src-size below 16: a masked tail, or a pipelined loop's "
        "prefetch past its last iteration), so their wavefronts per request average those "
        "with the free ones."
        if filling
        else ""
    )
    return (
        f"{len(free)} cp.async instruction(s) ({requests:,} requests) cost no wavefronts: a "
        "16-byte cp.async.cg (LDGSTS.BYPASS) whose lanes all copy costs the shared-memory pipe "
        "nothing, as the H200 measured (only zero-filled lanes do; docs/trace.md, cp.async)."
        f"{others} Nsight Compute's source view counts each as a store of its width (--compare: "
        "verdict cp.async)"
    )


def generic_atoms_note(kernel: KernelTrace) -> str:
    """What the atomic total holds beside its rows: the generic atomics' op_atom wavefronts."""
    atoms = kernel.generic_atoms
    places = ", ".join(sorted({where(r.file, r.line) for r in atoms}))
    return (
        f"the atomic total holds {sum(r.wavefronts for r in atoms):,} op_atom wavefront(s) that "
        f"no row carries, of generic atomics shared memory did not serve (at {places}: on global "
        "memory, or a float, half2 or bf16x2 add it declined): Nsight Compute's per-op op_atom "
        "counts them, 1 a phase with a lane on (the warp; half-warps for 64-bit lanes; twice "
        "for a compare-and-swap), its source counters do not "
        "(docs/hardware-model.md section 9e)"
    )


def not_modelled_block(kernel: KernelTrace) -> list[Block]:
    if not kernel.not_modelled:
        return []
    remote = any(n.dsmem_sectors is not None for n in kernel.not_modelled)
    calls = any(n.callee is not None for n in kernel.not_modelled)
    data = any(n.data_dependent for n in kernel.not_modelled)
    columns = [Column("line"), Column("sass"), Column("executions", "right")]
    if remote:
        columns.append(Column("dsmem sectors", "right"))
    if calls:
        columns.append(Column("calls"))
    if data:  # a remote access whose addresses global data decided (the notes' flag 'data')
        columns.append(Column("flag"))
    table = Table(columns)
    for n in kernel.not_modelled:
        row = [where(n.file, n.line), n.sass, f"{n.executions:,}"]
        if remote:
            row.append("" if n.dsmem_sectors is None else f"{n.dsmem_sectors:,}")
        if calls:
            row.append(n.callee or "")
        if data:
            row.append("data" if n.data_dependent else "")
        table.add_row(*row)
    head = Styled(
        "not modelled (shared-memory traffic of these instructions is not counted above):",
        "bold yellow",
    )
    out: list[Block] = [head, table]
    for n in kernel.not_modelled:
        if n.callee is not None:
            out.append(
                Styled(
                    f"note: {where(n.file, n.line)} calls {n.callee}, a function outside the "
                    "kernel: stepped over (it touches no shared memory of the kernel); what it "
                    "returns is not modelled, so a request whose address uses it is inexact",
                    "yellow",
                )
            )
    return out


def wgmma_block(kernel: KernelTrace) -> list[Block]:
    """What each wgmma read (its decoded descriptors and the core matrices) and what each TMA
    or bulk copy moved, as the JSON's ``reads``: one row per instruction."""
    rows = [a for a in kernel.accesses if a.reads]
    if not rows:
        return []
    table = Table([Column("line"), Column("pc"), Column("op"), Column("reads / moves")])
    for a in rows:
        table.add_row(where(a.file, a.line), f"0x{a.pc:04x}", a.op, a.reads or "")
    return [Styled("wgmma descriptors and TMA copies, decoded:", "bold"), table]
