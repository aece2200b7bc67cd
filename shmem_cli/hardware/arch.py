"""The architecture profile: every hardware rule shmem applies, in one place.

The rules are those measured on an NVIDIA H200 (sm_90) with Nsight Compute; the
evidence is in docs/hardware-model.md and tests/data/. In short:

* 32 banks of 4 bytes; bank = (byte address / 4) % 32.
* A warp instruction is split into *phases* of lanes, each phase moving at most
  128 bytes: 1-, 2- and 4-byte accesses form one phase (the whole warp), 8-byte
  accesses two (half-warps), 16-byte accesses four (quarter-warps). ldmatrix /
  stmatrix use one phase per 8x8 matrix (lanes 8m..8m+7 give its row addresses).
* Within a phase, lanes reading the same 4-byte word share it (broadcast); the
  phase costs as many wavefronts as the most distinct words any one bank must
  deliver. A phase with no active lane costs nothing. A request costs the sum of
  its phases.
* Loads of 8 and 16 bytes whose active lanes come in equal pairs (lane n and n^1
  read the same address wherever both are active, or lane n and n^2) pack two
  lanes into one return slot: their phases are twice as wide (the whole warp for
  8 bytes, half-warps for 16 bytes). Stores never merge.
* Atomics: atomicAdd(p, 1) compiles to ATOMS.POPC.INC, which combines lanes on
  one address like a load. Other integer atomics (ATOMS.ADD/MIN/MAX/...) make
  each lane its own bank access; an atomicAdd on a warp-uniform address costs one
  wavefront because the compiler reduces the warp and one lane adds (a spec's
  ``atomic: add``); atomicExch/CAS never combine.
"""

from __future__ import annotations

from dataclasses import field

from ..plumbing.frozen import frozen
from . import ops
from .ops import OP_NAMES


@frozen
class AtomicRule:
    """How the lanes of one atomic class share the banks (the engine's rules 5 and 7)."""

    name: str  # the class: a value of ops.AtomicKind.atomic_class
    combines: bool  # lanes on one word share one bank access, as a load's do
    uniform_in_one: bool  # a warp-uniform address is reduced in one wavefront
    passes: int = 1  # passes over the same banks (a compare-and-swap: compare, then swap)
    # each pass serves one wavefront per phase: the lanes whose word is not the first one
    # their bank holds in the phase are not served (a spin: they fail and try again)
    first_wavefront_only: bool = False


#: the atomic classes measured on the H200: ATOMS.POPC.INC combines like a load;
#: ATOMS.ADD (and MIN, MAX, ...) does not ("add": a warp-uniform address in one wavefront
#: is the compiler's reduction of an atomicAdd to one lane, for specs; the trace charges
#: every ATOMS.ADD/MIN/... as "exch", tests/data/trace/semantics); EXCH never combines;
#: ATOMS.CAS costs two passes of an exchange and ATOMS.CAST.SPIN two passes of a load's
#: first wavefront per phase (rule 7a of the engine; tests/data/trace/atomloops: lanes on
#: two words of one bank take two executions); a generic 64-bit atomic that shared memory
#: declines ("declined": ``ATOM.E.MIN.S64 P0``, see ``generic_shared_atomics_64``) one pass of
#: that first wavefront per phase (tests/data/trace/probes2: 2 a warp, lanes on 32 words, on
#: one word or in pairs)
MEASURED_ATOMICS = (
    AtomicRule("inc", combines=True, uniform_in_one=False),
    AtomicRule("add", combines=False, uniform_in_one=True),
    AtomicRule("exch", combines=False, uniform_in_one=False),
    AtomicRule("cas", combines=False, uniform_in_one=False, passes=2),
    AtomicRule(
        "cas_spin", combines=True, uniform_in_one=False, passes=2, first_wavefront_only=True
    ),
    AtomicRule("declined", combines=True, uniform_in_one=False, first_wavefront_only=True),
)


@frozen
class ArchProfile:
    """Numbers and rules of one GPU architecture's shared memory."""

    name: str
    measured_on: str  # the GPU whose Nsight Compute counters these rules reproduce
    banks: int = 32
    bank_bytes: int = 4
    phase_bytes: int = 128
    max_threads: int = 1024
    max_block_dims: tuple[int, int, int] = (1024, 1024, 64)
    # the most shared memory one block may have, static and dynamic together (the H200's
    # 228 KiB per SM less the 1 KiB each block's reserved): the one bound --dynamic-smem,
    # a spec's kernel.dynamic_smem, a Triton entry's shared and the layouts are checked by
    smem_per_block: int = 227 * 1024
    # shared memory the driver reserves in front of a kernel's own: the kernel's variables
    # start this many bytes into its .nv.shared.<name> section in code for sm_<N> from
    # reserved_smem_from_sm on (ptxas 12.8 and later also add a .nv.shared.reserved.0
    # section saying so; ptxas 12.4, Triton 3.2-3.3's, reserves the same bytes silently)
    reserved_smem_bytes: int = 1024
    reserved_smem_from_sm: int = 90
    # the launch's constant bank 0: where the kernel parameters start (a cubin states its
    # own, EIATTR_PARAM_CBANK) and where the parameters' generic address is kept
    param_base: int = 0x210
    param_address_offset: int = 0x198
    # the launch's thread-block cluster in constant bank 0, where nvcc's code reads the
    # %cluster_* registers (CUDA 13, sm_90): 1 for a cluster launch at 0x140, the cluster's
    # CTAs per axis (3 x u32) at 0x144, their inverses (3 x f32) at 0x150, the clusters of
    # the grid per axis at 0x15c, the CTAs of a cluster at 0x188
    cluster_bank: tuple[int, int, int, int, int] = (0x140, 0x144, 0x150, 0x15C, 0x188)
    warp_size: int = 32
    # warp reconvergence (issue 29, measured: tests/data/trace/converge): a thread that
    # executes one of these is *yielded*, and a convergence barrier (BSYNC) does not wait
    # for it (NANOSLEEP with or without .SYNCS)
    yield_opcodes: tuple[str, ...] = ("YIELD", "NANOSLEEP")
    # ldmatrix/stmatrix: one phase per 8x8 matrix, whose rows come from this many lanes
    matrix_rows: int = 8
    ldmatrix_row_bytes: int = 16
    # pair merge: the ops whose phases are twice as wide when lane n and lane n^d give
    # equal addresses wherever both are active, for some d of pair_merge_distances
    pair_merge_ops: tuple[str, ...] = (ops.LOAD.name,)
    pair_merge_distances: tuple[int, ...] = (1, 2)
    # (bank conflicts in a merged phase or not: Nsight's per-op counters on 1,709 measured
    # launches, tests/data/trace/pairs3 to pairs9; its per-instruction source counters count
    # such a phase unmerged: docs/hardware-model.md 3)
    # cycle floors (bytes per lane, cycles): an access of that width (not a matrix op)
    # spends at least that many cycles on each of its phases, active or not
    cycle_floors: tuple[tuple[int, int], ...] = ((16, 1),)
    atomic_rules: tuple[AtomicRule, ...] = MEASURED_ATOMICS
    # the 64-bit operations a generic atomic's fast path (``ATOM.E.<op>.64 P0, ...``, the
    # kernel's LDS.64/ATOMS.CAST.SPIN.64 loop behind it) applies on the CTA's own shared
    # memory: an integer ADD (tests/data/trace/debug_builds; a double's ADD.F64 is declined,
    # tests/data/trace/genatom) and EXCH are done, P0 set; the others
    # (MIN.S64 and XOR.64 measured, tests/data/trace/probes2; MAX.S64, MIN.64, MAX.64,
    # AND.64 and OR.64, tests/data/trace/probes3) are declined: P0 false, the value
    # untouched, a request of the "declined" class, and the loop does the work
    generic_shared_atomics_64: tuple[str, ...] = ("ADD", "EXCH", "CAS")
    # capabilities: the ops whose rules this profile holds (the engine refuses others)
    ops: tuple[str, ...] = field(default_factory=lambda: tuple(OP_NAMES))
    # cp.async (LDGSTS.E, not .BYPASS) reads its source from L1: one wavefront serves at
    # most this many distinct 128-byte global lines (tests/data/trace/measured.json)
    l1_line_bytes: int = 128
    async_copy_lines_per_wavefront: int = 4
    # the GPU measured (H200): its SMs and what one SM holds at once, for the occupancy a
    # launch reaches (whether it fills the GPU: docs/hardware-model.md, whole grids)
    sms: int = 132
    threads_per_sm: int = 2048
    blocks_per_sm: int = 32
    smem_per_sm: int = 228 * 1024
    registers_per_sm: int = 65536
    register_unit: int = 256  # registers are allocated per warp in units of this many
    # distributed shared memory (another CTA's, in a cluster): a remote access has no
    # shared wavefronts; it moves this many bytes a sector over the crossbar, one per
    # distinct sector its lanes touch (docs/hardware-model.md, 9d); a store whose bytes in a
    # sector neither lie within one of its halves of this many bytes nor fill it beside
    # another filled sector of that CTA in the same line of the last many bytes moves two
    dsmem_sector_bytes: int = 32
    dsmem_store_half_bytes: int = 16
    dsmem_store_line_bytes: int = 128

    @property
    def capability(self) -> int:
        """The compute capability as one number: 90 for sm_90 (Triton's GPUTarget)."""
        return int(self.name.removeprefix("sm_").rstrip("af"))

    def smem_limit(self) -> str:
        """The per-block bound in words, for an error that refuses more."""
        kib = self.smem_per_block // 1024
        return (
            f"an {self.name} block has at most {self.smem_per_block:,} bytes ({kib} KiB) of "
            f"shared memory, static and dynamic together (the {self.measured_on}'s "
            f"{self.smem_per_sm // 1024} KiB per SM, {self.reserved_smem_bytes // 1024} KiB of "
            "each block's reserved for the driver)"
        )

    def atomic_rule(self, atomic_class: str) -> AtomicRule:
        """The rule of an atomic class (ValueError for a class this profile lacks)."""
        for rule in self.atomic_rules:
            if rule.name == atomic_class:
                return rule
        raise ValueError(f"{self.name} has no rule for atomic class {atomic_class!r}")

    def cycle_floor(self, size: int) -> int | None:
        """The fewest cycles a phase of a ``size``-byte access takes, None for no floor."""
        for width, cycles in self.cycle_floors:
            if width == size:
                return cycles
        return None

    def resident_blocks(self, threads: int, smem: int, registers: int) -> int:
        """Blocks of ``threads`` threads, ``smem`` bytes of shared memory (the reserved part
        included) and ``registers`` registers a thread that one SM holds at once."""
        warps = -(-threads // self.warp_size)
        by_regs = self.registers_per_sm // max(1, self._warp_registers(registers) * warps)
        by_smem = self.smem_per_sm // smem if smem else self.blocks_per_sm
        by_threads = self.threads_per_sm // max(1, warps * self.warp_size)
        return max(0, min(self.blocks_per_sm, by_threads, by_smem, by_regs))

    def most_threads(self, registers: int) -> int:
        """The largest block (whole warps) whose threads' ``registers`` registers each (as
        allocated: per warp, in :attr:`register_unit` s) one SM holds: CUDA refuses more."""
        return self.registers_per_sm // self._warp_registers(registers) * self.warp_size

    def _warp_registers(self, registers: int) -> int:
        """The registers a warp of threads using ``registers`` each is allocated (whole
        :attr:`register_unit` s)."""
        units = -(-max(1, registers) * self.warp_size // self.register_unit)
        return units * self.register_unit

    def lanes_per_phase(self, size: int) -> int:
        """How many lanes share one phase for an access of ``size`` bytes."""
        if size <= self.bank_bytes:
            return self.warp_size
        return max(1, self.phase_bytes // size)


SM90 = ArchProfile(name="sm_90", measured_on="H200")

#: Every profile by name: the architectures whose rules were measured. The schema's
#: ``arch`` enum is this registry's keys.
PROFILES: dict[str, ArchProfile] = {p.name: p for p in (SM90,)}

#: The architecture of a spec or a trace that names none (written here only).
DEFAULT_ARCH = SM90.name


def most_smem_per_block() -> int:
    """The largest per-block shared memory of any profile: what a size given before the
    kernel's architecture is known may be (the kernel's own profile then checks it)."""
    return max(p.smem_per_block for p in PROFILES.values())


def register(profile: ArchProfile) -> ArchProfile:
    """Add a measured architecture: specs may name it (the schema's ``arch`` enum is built
    from :data:`PROFILES` when first asked for) and code compiled for it is costed with its
    rules. ValueError when the name is taken."""
    if profile.name in PROFILES:
        raise ValueError(f"architecture {profile.name} is registered already")
    PROFILES[profile.name] = profile
    return profile


def unregister(name: str) -> None:
    """Remove the profile called ``name`` (one added for a while, e.g. by a test); the
    default architecture stays."""
    if name != DEFAULT_ARCH:
        PROFILES.pop(name, None)


def rules_for(arch: str) -> ArchProfile:
    """The profile that costs code compiled for ``arch``: its own where its rules were
    measured, else the default's, which :func:`rules_note` then states."""
    return PROFILES.get(arch, PROFILES[DEFAULT_ARCH])


def rules_note(arch: str) -> str | None:
    """None when ``arch`` is costed with its own measured rules; else the words saying
    whose rules cost it, for every report of such code."""
    if arch in PROFILES:
        return None
    used = rules_for(arch)
    return (
        f"costed with the {used.name} ({used.measured_on}-measured) rules "
        f"(none were measured for {arch})"
    )


def unmeasured_arch(arch: str) -> str:
    """Why a spec may not name ``arch``, with the fix."""
    known = ", ".join(f"{p.name} (measured on an {p.measured_on})" for p in PROFILES.values())
    return (
        f"no shared-memory rules were measured for {arch}; shmem models {known}: "
        f"leave arch out or write arch: {DEFAULT_ARCH}"
    )
