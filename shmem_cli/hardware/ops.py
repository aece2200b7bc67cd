"""The shared-memory ops: one vocabulary for the spec, the trace, the engine, verify, outputs.

An *op* is a kind of shared-memory instruction with its own lane rule: ``load`` (LDS),
``store`` (STS), ``atomic`` (ATOMS), ``ldmatrix`` (LDSM), ``stmatrix`` (STSM) and
``cp_async`` (LDGSTS). Each :class:`Op` says everything the rest of shmem needs to know
about it, so that adding one is one entry here (and its lane rule, if it is new, in
:mod:`shmem_cli.hardware.engine` with the architecture's numbers):

* its name, which is also its key in every JSON output and a spec's ``op:`` value
  (where ``in_spec``: cp.async is only seen in compiled code);
* the SASS opcodes that are this op (the trace front end, ``shmem verify``'s check of
  the compiled kernel and the emulator's up-front pass all ask :func:`op_of_opcode`);
* whether its lanes give the row addresses of 8x8 matrices (``matrix``: one phase
  per matrix) and whether it is an atomic (its lanes' combining is the atomic class's);
* what a lane moves (``widths``: bytes per lane) and what it does to memory (``verb``);
* the Nsight Compute counters that measure it (requests, wavefronts, and the two
  counters shown beside them), for ``shmem verify`` and the measured tests.

The atomic operations a spec may name (:data:`ATOMICS`) are listed here too, each with
its engine class (how its lanes combine: the class's rule is the architecture
profile's) and the SASS spellings nvcc emits for it.
"""

from __future__ import annotations

from ..plumbing.frozen import frozen

__all__ = [
    "ARBITRATION_COUNTER",
    "DSHARED_COUNTERS",
    "DSHARED_SECTORS_COUNTER",
    "launch_counters",
    "MISC_COUNTER",
    "ATOMICS",
    "ATOMIC_NAMES",
    "DEFAULT_ATOMIC",
    "DEFAULT_OP",
    "GLOBAL_OR_LOCAL_OPCODES",
    "MATRIX_OPS",
    "OPS",
    "OP_NAMES",
    "SHARED_OPCODES",
    "SOURCE_COLUMNS",
    "SPEC_OPS",
    "AtomicKind",
    "Counters",
    "Op",
    "atomic",
    "atomic_class_of_sass",
    "get",
    "op_of_opcode",
    "register",
    "unregister",
    "sass_width",
    "unit_counters",
]


@frozen
class Counters:
    """The Nsight Compute counters that measure an op (names without ``.sum``)."""

    requests: str  # warp instructions with at least one active lane
    # the op's wavefronts in the shared-memory pipe; None: no counter of its own
    wavefronts: str | None
    # the same instructions counted with warps whose lanes are all predicated off; None
    # where that counter also counts other ops' instructions
    all_requests: str | None = None
    conflicts: str | None = None  # the bank-conflict counter it is counted under


def unit_counters(unit: str) -> Counters:
    """The counters of an l1tex shared-memory op unit (``ld``, ``st``, ``atom``)."""
    return Counters(
        requests=f"smsp__sass_inst_executed_op_shared_{unit}",
        wavefronts=f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{unit}",
        all_requests=f"smsp__inst_executed_op_shared_{unit}",
        conflicts=f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{unit}",
    )


@frozen
class Op:
    """One kind of shared-memory instruction and everything said about it."""

    name: str  # the spec's op: value and the key in JSON outputs
    sass: tuple[str, ...]  # base opcodes (no modifiers) that are this op, e.g. ("LDS",)
    verb: str  # what a lane does to shared memory: "reads", "writes" or "updates"
    widths: tuple[int, ...]  # bytes per lane it can move (a matrix op: one 16-byte row)
    counters: Counters
    matrix: bool = False  # lanes 8m..8m+7 give the row addresses of 8x8 matrix m
    atomic: bool = False  # a read-modify-write: its lanes combine as its atomic class says
    in_spec: bool = True  # a spec may name it (cp.async comes only from compiled code)
    # the spec op that describes it where a spec may not name it (lint compares a traced
    # cp.async with a spec's store of its width)
    described_as: str | None = None
    #: a copy from global memory (cp.async): costed from both of its sides (the measured
    #: rule of hardware/async_copy.py), like a store of its width without the global side
    copy: bool = False
    #: its lanes give shared-memory addresses; False: it reads its operands through
    #: descriptors (wgmma) and its family records each request's measured wavefronts
    lane_addressed: bool = True
    #: a wide form (.64, .128) exists only where ptxas proves the address aligned: a
    #: layout change that breaks the alignment splits it into narrower accesses
    splits: bool = False
    #: generic opcodes (``LD``, ``ST``, ``ATOM``: a -G build's accesses through pointers)
    #: whose lanes in the CTA's own shared window are this op: counted by Nsight as its
    #: requests with the wavefronts of its own opcode (measured: tests/data/trace/debug_builds)
    generic: tuple[str, ...] = ()

    @property
    def spec_op(self) -> str:
        """The spec op a traced instruction of this op is compared with."""
        return self.name if self.in_spec else (self.described_as or self.name)

    @property
    def phase_word(self) -> str:
        """What a phase of this op is called in reports: a matrix, or a phase."""
        return "matrix" if self.matrix else "phase"


_ELEMENT_WIDTHS = (1, 2, 4, 8, 16)
_LD, _ST = unit_counters("ld"), unit_counters("st")

#: the ops shmem has measured rules for, in the order reports list them
_BUILT_IN: tuple[Op, ...] = (
    Op("load", ("LDS",), "reads", _ELEMENT_WIDTHS, _LD, splits=True, generic=("LD",)),
    Op("store", ("STS",), "writes", _ELEMENT_WIDTHS, _ST, splits=True, generic=("ST",)),
    Op(
        "atomic",
        ("ATOMS",),
        "updates",
        (4, 8, 16),
        unit_counters("atom"),
        atomic=True,
        generic=("ATOM",),
    ),
    Op(
        "ldmatrix",
        ("LDSM",),
        "reads",
        (16,),
        Counters("smsp__sass_inst_executed_op_ldsm", _LD.wavefronts, conflicts=_LD.conflicts),
        matrix=True,
    ),
    Op(
        "stmatrix",
        ("STSM",),
        "writes",
        (16,),
        Counters(
            "smsp__sass_inst_executed_op_shared_stsm", _ST.wavefronts, conflicts=_ST.conflicts
        ),
        matrix=True,
    ),
    Op(
        "cp_async",
        ("LDGSTS",),
        "writes",
        (4, 8, 16),
        # no wavefront counter of its own: the shared total less the other ops' parts
        Counters(
            "smsp__sass_inst_executed_op_ldgsts",
            None,
            all_requests="smsp__inst_executed_op_ldgsts",
            conflicts="l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts",
        ),
        in_spec=False,
        described_as="store",
        copy=True,
    ),
    Op(
        "wgmma",
        # HGMMA reads its operands through descriptors, not lane addresses: its family
        # (trace/wgmma.py) records it with the measured rule, so no opcode maps here
        (),
        "reads",
        (16,),
        Counters(
            "smsp__sass_inst_executed_op_shared_gmma",
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma",
        ),
        in_spec=False,
        lane_addressed=False,
    ),
    Op(
        "tma",
        # TMA and bulk copies (UTMALDG, UTMASTG, UBLKCP) move a box or a block between global
        # and shared memory outside the LSU pipe: one request per issue, no LSU wavefronts;
        # the async-proxy family (trace/emulator/ops/async_proxy.py) records them
        (),
        "writes",
        (16,),
        Counters("smsp__sass_inst_executed_op_tma", None),
        in_spec=False,
        lane_addressed=False,
    ),
)

# The registry. Every table below is a list kept up to date in place by register() and
# unregister(), so that a module that imported one sees an op registered later.

#: every op, in the order reports list them (trace totals, JSON keys)
OPS: list[Op] = []
OP_NAMES: list[str] = []
#: the ops a spec may name, in order (the schema's op enum)
SPEC_OPS: list[str] = []
MATRIX_OPS: list[str] = []
#: every SASS base opcode that is a shared-memory op
SHARED_OPCODES: list[str] = []
_BY_NAME: dict[str, Op] = {}
_BY_OPCODE: dict[str, Op] = {}
_BY_GENERIC: dict[str, Op] = {}


def _reindex() -> None:
    OP_NAMES[:] = [op.name for op in OPS]
    SPEC_OPS[:] = [op.name for op in OPS if op.in_spec]
    MATRIX_OPS[:] = [op.name for op in OPS if op.matrix]
    SHARED_OPCODES[:] = [opcode for op in OPS for opcode in op.sass]
    _BY_NAME.clear()
    _BY_NAME.update((op.name, op) for op in OPS)
    _BY_OPCODE.clear()
    _BY_OPCODE.update((opcode, op) for op in OPS for opcode in op.sass)
    _BY_GENERIC.clear()
    _BY_GENERIC.update((opcode, op) for op in OPS for opcode in op.generic)


def register(op: Op) -> Op:
    """Add ``op`` to the vocabulary (after the others); ValueError when its name or one of
    its opcodes is taken. The engine costs it only under a profile that lists it in its
    ``ops`` (hardware/arch.py)."""
    taken = [o for o in op.sass if o in _BY_OPCODE]
    if op.name in _BY_NAME or taken:
        raise ValueError(f"op {op.name!r}: its name or opcode(s) {taken} are taken")
    OPS.append(op)
    _reindex()
    return op


def unregister(name: str) -> None:
    """Remove the op called ``name`` (one added for a while, e.g. by a test)."""
    OPS[:] = [op for op in OPS if op.name != name]
    _reindex()


for _op in _BUILT_IN:
    register(_op)

#: the ops other modules name, for the code that builds or names one (``ops.LOAD.name``)
LOAD, STORE, WGMMA = _BY_NAME["load"], _BY_NAME["store"], _BY_NAME["wgmma"]
#: the op of a spec's access that names none
DEFAULT_OP = LOAD.name
#: the SASS base opcodes that move global or local memory through the L1TEX pipe (LDGSTS:
#: its global side), which a measured verification kernel must not run before its access
GLOBAL_OR_LOCAL_OPCODES: tuple[str, ...] = (
    *("LDG", "STG", "LDL", "STL", "LD", "ST"),
    *("ATOM", "ATOMG", "RED", "REDG", "LDGSTS"),
)


# --- counters that are no one op's --------------------------------------------------------

#: the kernel-wide bank-arbitration counter (passes no op's address causes; verify subtracts it)
ARBITRATION_COUNTER = "l1tex__data_bank_conflicts_type_arbitration"
#: op_misc's wavefronts: warps' ends, CTA barriers, fences (shmem_cli/hardware/misc.py)
MISC_COUNTER = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc"
#: the remote (distributed shared memory) accesses: warp requests of each kind, and the
#: 32-byte sectors they moved over the crossbar (shmem_cli/hardware/dsmem.py)
DSHARED_COUNTERS = tuple(f"smsp__sass_inst_executed_op_dshared_{u}" for u in ("ld", "st", "atom"))
DSHARED_SECTORS_COUNTER = "l1tex__m_xbar2l1tex_read_sectors_mem_dshared"


def launch_counters() -> frozenset[str]:
    """Every per-launch counter ``--compare`` reads from a raw page: each op's requests and
    wavefronts, and those above."""
    ops = {c for op in OPS for c in (op.counters.requests, op.counters.wavefronts) if c}
    extra = (ARBITRATION_COUNTER, MISC_COUNTER, DSHARED_SECTORS_COUNTER, *DSHARED_COUNTERS)
    return frozenset((*ops, *extra))


@frozen
class SourceColumns:
    """The columns of Nsight Compute's source page (``--page source --csv``) per SASS
    instruction: executions (warps with an active lane), shared wavefronts, their ideal."""

    executed: str = "Instructions Executed"
    wavefronts: str = "L1 Wavefronts Shared"
    ideal: str = "L1 Wavefronts Shared Ideal"

    @property
    def all(self) -> tuple[str, str, str]:
        return (self.executed, self.wavefronts, self.ideal)


SOURCE_COLUMNS = SourceColumns()


def get(name: str) -> Op:
    """The op called ``name`` (KeyError for a name that is no op)."""
    return _BY_NAME[name]


def op_of_opcode(opcode: str) -> Op | None:
    """The op a SASS base opcode (``LDS``, ``LDSM``; no modifiers) is, None for other code."""
    return _BY_OPCODE.get(opcode)


def op_of_generic(opcode: str) -> Op | None:
    """The op a generic base opcode (``LD``, ``ST``, ``ATOM``) is where its lanes land in the
    CTA's own shared window, None for an opcode that is no op's generic form."""
    return _BY_GENERIC.get(opcode)


# --- what a lane moves, as SASS spells it -----------------------------------------------

#: SASS width modifiers and the bytes per lane they mean; a 4-byte access has none
#: (``F64``, ``S64``: a double or signed 64-bit atomic or reduction, ``ATOMG.E.ADD.F64.RN``,
#: ``REDG.E.MAX.S64``)
WIDTH_MODIFIERS = {
    **{"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "128": 16},
    **{"F64": 8, "S64": 8},
}


def sass_width(mods: tuple[str, ...]) -> tuple[int, bool]:
    """Bytes per lane of a memory instruction's modifiers, and whether a sub-word load
    sign-extends (``LDS.S8``); 4 bytes without a width modifier."""
    for m in mods:
        if m in WIDTH_MODIFIERS:
            return WIDTH_MODIFIERS[m], m in ("S8", "S16")
    return 4, False


# --- atomics ----------------------------------------------------------------------------


@frozen
class AtomicKind:
    """An atomic operation a spec may name, as the engine charges it and nvcc spells it."""

    name: str  # the spec's atomic: value
    atomic_class: str  # the engine's class (how its lanes combine): a key of arch.atomic_rules
    sass: tuple[str, ...]  # the SASS spellings nvcc emits for a 32-bit int (shmem verify)
    sass_ops: tuple[str, ...]  # the ATOMS operation modifiers charged in this class
    in_spec: bool = True  # a spec may name it
    #: the element sizes a spec may give it, in bytes (4 and 8: integers only); nvcc emits
    #: the same SASS with .64 or .128 for the wider ones (ATOMS.EXCH.128)
    widths: tuple[int, ...] = (4,)


#: the atomic operations, in order; those a spec may name are the schema's atomic enum
ATOMICS: tuple[AtomicKind, ...] = (
    # atomicAdd(p, 1): ATOMS.POPC.INC, lanes on one address combine like a load
    AtomicKind("inc", "inc", ("ATOMS.POPC.INC.32",), ("POPC",)),
    # atomicAdd(p, v) and the other arithmetic atomics: every lane its own bank access, a
    # warp-uniform address in one wavefront (the compiler's reduction of the warp to one
    # lane). That class serves specs only: the trace charges every ATOMS it runs of these
    # operations as "exch" (trace/emulator/access_kind.atomic_class)
    AtomicKind(
        "add",
        "add",
        ("ATOMS.ADD", "ATOMS.ADD.32"),
        ("ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR"),
    ),
    # atomicExch: every lane its own bank access; on 8-byte (unsigned long long) and 16-byte
    # elements (any 16-byte type, sm_90) ATOMS.EXCH.64 and .128, lanes in half- and
    # quarter-warps (measured: tests/data/trace/semantics)
    AtomicKind("exch", "exch", ("ATOMS.EXCH",), ("EXCH",), widths=(4, 8, 16)),
    # atomicCAS: ATOMS.CAS (.64, .128 as exch), twice an exchange's cost
    AtomicKind("cas", "cas", ("ATOMS.CAS",), ("CAS",), widths=(4, 8, 16)),
    # seen in compiled code only: the ATOMS.CAST.SPIN of the compare-and-swap loops nvcc
    # emits for float, double, half2 and 64-bit arithmetic atomics
    AtomicKind("cas_spin", "cas_spin", (), ("CAST",), in_spec=False),
    # seen in compiled code only: a generic 64-bit atomic's fast path that shared memory
    # declines (ATOM.E.MIN.S64 P0, ...: arch.generic_shared_atomics_64), its loop doing the work
    AtomicKind("declined", "declined", (), (), in_spec=False),
)

ATOMIC_NAMES: tuple[str, ...] = tuple(a.name for a in ATOMICS if a.in_spec)
#: the atomic of a spec's atomic access that names none
DEFAULT_ATOMIC = "inc"
_ATOMIC_CLASS = {m: a.atomic_class for a in ATOMICS for m in a.sass_ops}


_ATOMIC_BY_NAME = {a.name: a for a in ATOMICS}


def atomic(name: str) -> AtomicKind:
    """The atomic kind called ``name`` (KeyError for a name that is none)."""
    return _ATOMIC_BY_NAME[name]


def atomic_class_of_sass(operation: str) -> str | None:
    """The engine class an ATOMS operation modifier (``POPC``, ``ADD``, ``CAS``) is charged as;
    None for a modifier that is no atomic operation."""
    return _ATOMIC_CLASS.get(operation)
