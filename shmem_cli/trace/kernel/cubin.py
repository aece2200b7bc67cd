"""Kernel metadata read from a cubin (a CUDA ELF file), with the standard library only.

For every entry function (``__global__`` kernel): its mangled and demangled names, its
parameters (``EIATTR_KPARAM_INFO``: ordinal, byte offset, size), where they sit in constant
bank 0 (``EIATTR_PARAM_CBANK``: base offset and size), and its static shared memory (the size
of its ``.nv.shared.<mangled>`` section).

The ``.nv.info.<mangled>`` sections are sequences of attribute records: a format byte, an
attribute byte, then either a 16-bit value (formats 1-3) or a 16-bit length and that many bytes
(format 4, ``EIFMT_SVAL``). Only the attributes named above are read; the others are skipped
by their length. A kernel with a large parameter block (1,000 pointers) has its parameters in
``EIATTR_KPARAM_INFO_V2`` records instead: the same fields, the size a plain number.

The file is read whole but bounded (:data:`MAX_CUBIN_BYTES`, a regular file only), and every
offset and count in it is checked against the bytes there are before it is used: a file that
claims more than it holds is "not a valid cubin", never a traceback.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from pathlib import Path

from ...hardware.arch import DEFAULT_ARCH, rules_for
from ...plumbing.bounded_read import read_bounded
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ..ncu.names import matching
from .binary_formats.elf import EM_CUDA, SHF_EXECINSTR, SHT_NOBITS, Elf, Entry
from .binary_formats.elf_arch import CubinArch, cubin_arch
from .choices import USE_FRAGMENT, kernel_forms, kernel_list

#: the largest cubin read (a regular file; the same bound as a cubin a tool writes)
MAX_CUBIN_BYTES = 64 << 20
EIFMT_SVAL = 4
EIATTR_PARAM_CBANK = 0x0A
EIATTR_KPARAM_INFO = 0x17
EIATTR_CBANK_PARAM_SIZE = 0x19
EIATTR_KPARAM_INFO_V2 = 0x45
EIATTR_CTA_PER_CLUSTER = 0x3D  # __cluster_dims__(x, y, z): three 32-bit sizes
EIATTR_MAX_THREADS = 0x05  # __launch_bounds__ (.maxntid x, y, z): the most threads a block
#: .reqntid x, y, z (Triton writes it: num_warps x 32, 1, 1): the one block CUDA launches it with
EIATTR_REQNTID = 0x10
EIATTR_REGCOUNT = 0x2F  # in .nv.info: a function's symbol index and its registers a thread
MAX_PARAMS = 32_768  # a parameter block is at most 32,764 bytes
BANK_BYTES = 1 << 16  # constant bank 0, which holds the parameter block
MAX_ATTRIBUTES = 1 << 20  # records of one .nv.info section (real ones: a few dozen + params)
#: code of a cubin disassembled whole; past it, only the traced kernel's section
WHOLE_CODE = 8 << 20
#: the most code of one kernel (its SASS text is then about 8 MiB: cuda.sass's bound)
MAX_KERNEL_CODE = 4 << 20
Dims = tuple[int, int, int]


@frozen
class KernelParam:
    """One kernel parameter: its 0-based position, byte offset in the parameter block, size."""

    ordinal: int
    offset: int
    size: int
    name: str | None = None  # from the CUDA source, where it was found


@frozen
class Kernel:
    """An entry function of a cubin and what a launch needs to know about it."""

    mangled: str
    name: str  # demangled, without return type and parameter list: MatrixMulCUDA<32>
    signature: str  # the whole demangled name: void MatrixMulCUDA<32>(float*, ...)
    params: tuple[KernelParam, ...]
    param_base: int  # offset of the parameter block in constant bank 0 (arch.param_base)
    param_bytes: int  # size of the parameter block
    shared_section_bytes: int  # size of .nv.shared.<mangled> (0 without one)
    reserved_shared_bytes: int  # the part of it reserved for the driver (sm_90: 1 KiB)
    code_bytes: int
    # __cluster_dims__ of the source (EIATTR_CTA_PER_CLUSTER), None without
    cluster_dims: tuple[int, int, int] | None = None
    symbol: int = -1  # its index in the symbol table (nvdisasm -fun), -1 when not known
    arch: str = DEFAULT_ARCH  # the cubin's SM (sm_90): its profile bounds the shared memory
    # registers a thread (EIATTR_REGCOUNT), 0 when not known; with __launch_bounds__'s most
    # threads a block (EIATTR_MAX_THREADS), None without: what a launch's block may be
    registers: int = 0
    max_threads: tuple[int, int, int] | None = None
    # the block its PTX requires (.reqntid: EIATTR_REQNTID), None without: CUDA launches it
    # with exactly this block, and a launch that gives none takes it
    required_block: tuple[int, int, int] | None = None

    @property
    def static_shared_bytes(self) -> int:
        """The kernel's own ``__shared__`` variables (the section less the reserved part)."""
        return max(0, self.shared_section_bytes - self.reserved_shared_bytes)

    @property
    def dynamic_shared_base(self) -> int:
        """Shared-window offset where ``extern __shared__`` memory starts: after the section."""
        return self.shared_section_bytes or self.reserved_shared_bytes


def _reserved_shared_bytes(elf: Elf) -> int:
    """The bytes at the front of each .nv.shared.<name> section that are the driver's:
    a .nv.shared.reserved.* section says so; code for sm_90 on reserves them even without
    one (ptxas 12.4 writes none: an empty kernel's section is then 1 KiB, not 0)."""
    target = arch_of(elf)
    profile = rules_for(target.base)
    named = any(s.name.startswith(".nv.shared.reserved.") for s in elf.sections)
    reserves = named or target.sm >= profile.reserved_smem_from_sm
    return profile.reserved_smem_bytes if reserves else 0


@frozen
class CubinInfo:
    path: str
    arch: str  # sm_90: the SM, whose rules cost the code (sm_90a's are sm_90's)
    kernels: tuple[Kernel, ...]
    target: str | None = None  # sm_90a where the cubin is the architecture-specific variant
    code_bytes: int = 0  # of every executable section: what nvdisasm would go through

    @property
    def target_name(self) -> str:
        """The cubin's target as cuobjdump names it (``sm_90a``), else :attr:`arch`."""
        return self.target or self.arch


def _attributes(body: bytes, path: str = "", start: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """(file offset, attribute, value bytes) records of an ``.nv.info`` section that starts at
    byte ``start`` of the file, one at a time (a section of millions of records is refused
    past :data:`MAX_ATTRIBUTES`, never held whole; a record that claims more bytes than the
    section has left, or holds fewer than an attribute read takes (:data:`_READ`), is refused
    at its offset)."""
    pos = count = 0
    while pos + 4 <= len(body):
        count += 1
        if count > MAX_ATTRIBUTES:
            raise ShmemError(
                f"not a valid cubin: a kernel's .nv.info holds more than {MAX_ATTRIBUTES:,} "
                "attribute records",
                path=path,
                code="invalid-kernel",
            )
        fmt, attr = body[pos], body[pos + 1]
        (value,) = struct.unpack_from("<H", body, pos + 2)
        at = start + pos
        pos += 4
        if fmt == EIFMT_SVAL:
            if pos + value > len(body):
                raise ShmemError(
                    f"not a valid cubin: the .nv.info record at byte {at:#x} claims {value:,} "
                    f"bytes; its section has {len(body) - pos:,} left",
                    path=path,
                    code="invalid-kernel",
                )
            record = body[pos : pos + value]
            pos += value
        else:
            record = struct.pack("<H", value)
        if attr in _READ and len(record) < _READ[attr][1]:
            name, needed = _READ[attr]
            raise ShmemError(
                f"not a valid cubin: the {name} record at byte {at:#x} holds {len(record)} "
                f"bytes; it takes {needed}",
                path=path,
                code="invalid-kernel",
            )
        yield at, attr, record


#: the attributes read, with their names and the bytes each needs
_READ = {
    EIATTR_KPARAM_INFO: ("EIATTR_KPARAM_INFO", 12),
    EIATTR_KPARAM_INFO_V2: ("EIATTR_KPARAM_INFO_V2", 12),
    EIATTR_PARAM_CBANK: ("EIATTR_PARAM_CBANK", 8),
    EIATTR_CBANK_PARAM_SIZE: ("EIATTR_CBANK_PARAM_SIZE", 2),
    EIATTR_CTA_PER_CLUSTER: ("EIATTR_CTA_PER_CLUSTER", 12),
    EIATTR_MAX_THREADS: ("EIATTR_MAX_THREADS", 12),
    EIATTR_REQNTID: ("EIATTR_REQNTID", 12),
    EIATTR_REGCOUNT: ("EIATTR_REGCOUNT", 8),
}


@frozen
class _Attributes:
    """What a kernel's .nv.info.NAME says: its parameters, their base and size in constant
    bank 0, and the three sizes a launch is checked against (None where not said)."""

    params: list[KernelParam]
    base: int | None
    size: int | None
    cluster: Dims | None  # __cluster_dims__
    most: Dims | None  # __launch_bounds__ (.maxntid)
    required: Dims | None  # .reqntid


_DIMS = (EIATTR_CTA_PER_CLUSTER, EIATTR_MAX_THREADS, EIATTR_REQNTID)


def _kernel_attributes(body: bytes, path: str = "", start: int = 0) -> _Attributes:
    """A kernel's .nv.info.NAME read (the sizes are checked where a launch uses them)."""
    params: list[KernelParam] = []
    base: int | None = None
    size: int | None = None
    dims: dict[int, Dims] = {}
    for _at, attr, value in _attributes(body, path, start):
        if len(params) > MAX_PARAMS:
            raise ShmemError(
                f"not a valid cubin: a kernel with more than {MAX_PARAMS:,} parameters "
                "(CUDA allows 32,764 bytes of them)",
                path=path,
                code="invalid-kernel",
            )
        if attr == EIATTR_KPARAM_INFO:
            _index, ordinal, offset, flags = struct.unpack_from("<IHHI", value)
            params.append(KernelParam(ordinal, offset, (flags >> 18) & 0x3FFF))
        elif attr == EIATTR_KPARAM_INFO_V2:
            _index, ordinal, offset, size_v2 = struct.unpack_from("<IHHI", value)
            params.append(KernelParam(ordinal, offset, size_v2 & 0xFFFF))
        elif attr == EIATTR_PARAM_CBANK:
            _symbol, base, size = struct.unpack_from("<IHH", value)
        elif attr == EIATTR_CBANK_PARAM_SIZE and size is None:
            (size,) = struct.unpack_from("<H", value)
        elif attr in _DIMS:
            x, y, z = struct.unpack_from("<III", value)
            dims[attr] = (x, y, z)
    _check_params(params, base, size, path, start)
    return _Attributes(
        sorted(params, key=lambda p: p.ordinal),
        base,
        size,
        dims.get(EIATTR_CTA_PER_CLUSTER),
        dims.get(EIATTR_MAX_THREADS),
        dims.get(EIATTR_REQNTID),
    )


def _check_params(
    params: list[KernelParam], base: int | None, size: int | None, path: str, start: int
) -> None:
    """Refuse parameters no compiler writes (each traced as bytes no launch gives): two at one
    position, one past the parameter block, a block past constant bank 0's 64 KiB."""
    end = (base or 0) + (size if size is not None else _end_of(params))
    why, seen = f"its parameter block ends at c[0x0][{end:#x}], past the bank's 64 KiB", set()
    why = why if end > BANK_BYTES else ""
    for p in params:
        if p.ordinal in seen:
            why = f"two parameters at position {p.ordinal}"
        elif size is not None and p.offset + p.size > size:
            stop = p.offset + p.size
            why = f"parameter {p.ordinal} ends at byte {stop:#x}, past the {size}-byte block"
        seen.add(p.ordinal)
    if why:
        raise ShmemError(
            f"not a valid cubin: {why} (.nv.info at byte {start:#x}); rebuild it",
            path=path,
            code="invalid-kernel",
        )


def _register_counts(elf: Elf, path: str) -> dict[int, int]:
    """The registers a thread of each function takes, by its symbol's index (.nv.info's
    EIATTR_REGCOUNT records; a function without one is not in it)."""
    section = elf.by_name.get(".nv.info")
    if section is None or section.type == SHT_NOBITS:
        return {}
    counts: dict[int, int] = {}
    for _at, attr, value in _attributes(elf.body(section), path, section.offset):
        if attr == EIATTR_REGCOUNT:
            symbol, registers = struct.unpack_from("<II", value)
            counts[symbol] = registers
    return counts


def arch_of(elf: Elf) -> CubinArch:
    """The cubin's SM and ``a`` variant from its ELF header (both ABI layouts: elf_arch)."""
    compat = elf.by_name.get(".nv.compat")
    body = elf.body(compat) if compat is not None and compat.type != SHT_NOBITS else None
    return cubin_arch(elf.abi_version, elf.flags, body, elf.path)


def _cuda_elf(path: str | Path) -> Elf:
    data = read_bounded(path, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel")
    elf = Elf(data, str(path))
    if elf.machine != EM_CUDA:
        raise ShmemError(
            "not a cubin (an ELF file for another machine)", path=str(path), code="invalid-kernel"
        )
    return elf


def entry_names(path: str | Path) -> list[str]:
    """The mangled names of the cubin's entry functions: an executable's cubins are
    demangled in one run of cu++filt (:func:`read_cubin`'s ``demangled``), not one each."""
    return [entry.name for entry in _cuda_elf(path).entries()]


def read_cubin(
    path: str | Path, *, use_tools: bool = True, demangled: Mapping[str, str] | None = None
) -> CubinInfo:
    """The entry functions of the cubin at ``path`` and their launch metadata. Names are
    demangled by cu++filt or c++filt when found (``use_tools``), else by :mod:`.demangle`'s
    own small demangler; those in ``demangled`` (found already) are taken from it."""
    from .demangle import Budget, demangle, demangle_all, short_name

    elf = _cuda_elf(path)
    # the driver's reserved shared memory sits in front of the kernel's own static shared
    # memory, inside its .nv.shared.<name> section: the kernel's variables start after it
    reserved = _reserved_shared_bytes(elf)
    first: dict[str, Entry] = {}  # one entry per name (.nv.info read once each)
    for entry in elf.entries():
        first.setdefault(entry.name, entry)
    entries = list(first.items())
    known = demangled or {}
    names = [name for name, _ in entries if name not in known]
    budget = Budget()  # the small demangler's, for all the names of the file
    found = demangle_all(names) if use_tools else {n: demangle(n, budget) for n in names}
    demangled = {**known, **found}
    kernels = []
    target = arch_of(elf)
    registers = _register_counts(elf, str(path))
    for name, entry in entries:
        info_section = elf.by_name.get(f".nv.info.{name}")
        body = elf.body(info_section) if info_section else b""
        start = info_section.offset if info_section else 0
        read = _kernel_attributes(body, str(path), start)
        params, base, size = read.params, read.base, read.size
        shared = elf.by_name.get(f".nv.shared.{name}")
        text = elf.code_of(entry)
        full = demangled.get(name) or name
        kernels.append(
            Kernel(
                mangled=name,
                name=short_name(full),
                signature=full,
                params=tuple(params),
                param_base=base if base is not None else 0,
                param_bytes=size if size is not None else _end_of(params),
                shared_section_bytes=shared.size if shared else 0,
                reserved_shared_bytes=reserved if shared else 0,
                code_bytes=text.size,
                cluster_dims=read.cluster,
                symbol=entry.symbol,
                arch=target.base,
                registers=registers.get(entry.symbol, 0),
                max_threads=read.most,
                required_block=read.required,
            )
        )
    elf.check_function_addresses()  # after each kernel's symbol is checked (code_of)
    code = sum(s.size for s in elf.sections if s.flags & SHF_EXECINSTR and s.type != SHT_NOBITS)
    return CubinInfo(str(path), target.base, tuple(kernels), target.name, code)


def disassembly_scope(info: CubinInfo, kernels: tuple[Kernel, ...]) -> tuple[int, ...]:
    """The functions nvdisasm should go through to give ``kernels``' SASS: all (empty) for a
    cubin of up to :data:`WHOLE_CODE` bytes of code, else only theirs and the functions
    they call (in their sections, or in sections of their own); a kernel of more than
    :data:`MAX_KERNEL_CODE` bytes of code is refused (nvdisasm: about a second per 2 MiB)."""
    for kernel in kernels:
        if kernel.code_bytes > MAX_KERNEL_CODE:
            raise ShmemError(
                f"kernel {shorten(kernel.name)} has {kernel.code_bytes:,} bytes of code (about "
                f"{kernel.code_bytes // 16:,} instructions); shmem traces kernels of at most "
                f"{MAX_KERNEL_CODE >> 20} MiB of code",
                path=info.path,
                code="invalid-kernel",
            )
    if info.code_bytes <= WHOLE_CODE or any(k.symbol < 0 for k in kernels):
        return ()
    return tuple(k.symbol for k in kernels) + _called(info.path, kernels)


def _called(path: str, kernels: tuple[Kernel, ...]) -> tuple[int, ...]:
    """The symbols of the functions ``kernels`` call, and those they call, ... (a ``-G``
    build's device functions, each a section of its own: cuda/sass_link.py links them)."""
    elf = Elf(read_bounded(path, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel"), path)
    own = {k.mangled for k in kernels}
    found = {name: index for k in kernels for name, index in elf.reached(k.mangled)}
    return tuple(index for name, index in found.items() if name not in own)


def read_section(path: str | Path, name: str) -> bytes | None:
    """The bytes of the cubin's section ``name`` (None when it has none or cannot be read)."""
    try:
        data = read_bounded(path, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel")
    except ShmemError:
        return None
    elf = Elf(data, str(path))
    section = elf.by_name.get(name)
    return None if section is None or section.type == SHT_NOBITS else elf.body(section)


def _end_of(params: list[KernelParam]) -> int:
    return max((p.offset + p.size for p in params), default=0)


def find_kernel(info: CubinInfo, query: str | None) -> Kernel:
    """The kernel ``--kernel`` names: its demangled name (``MatrixMulCUDA<32>``), its
    mangled name, its whole signature, its name without template arguments when that is
    unique, or a unique prefix of any of these, else a part of one that only one kernel's
    names contain (``KernelTmaWarpSpecializedCooperative``: what tells a library's
    instantiations apart), or the name as Nsight Compute writes it (casts, ``void``, the
    parameter list; on its raw page without namespaces). None picks the only kernel."""
    kernels = info.kernels
    if not kernels:
        raise ShmemError(
            "the cubin holds no kernel (no __global__ function)",
            path=info.path,
            code="invalid-kernel",
        )
    if query is None:
        if len(kernels) == 1:
            return kernels[0]
        raise ShmemError(
            "the cubin holds several kernels: choose one with --kernel\n"
            f"{kernel_list(kernels, kernels)}\n{USE_FRAGMENT}",
            path=info.path,
            code="invalid-kernel",
        )
    found = matching(query, kernels, kernel_forms)
    if len(found) == 1:
        return found[0]
    if found:
        raise ShmemError(
            f"--kernel {shorten(query)!r} is ambiguous; it matches:\n"
            f"{kernel_list(found, kernels)}\n{USE_FRAGMENT}",
            path=info.path,
            code="invalid-kernel",
        )
    raise ShmemError(
        f"no kernel matches --kernel {shorten(query)!r}; the cubin holds:\n"
        f"{kernel_list(kernels, kernels)}\n{USE_FRAGMENT}",
        path=info.path,
        code="invalid-kernel",
    )
