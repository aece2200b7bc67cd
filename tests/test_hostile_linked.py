"""Hostile cubins against what the trace links and runs of a module (issue 29's code): the
device functions of a ``-G`` build linked after the kernel, calls through function pointers
and virtual tables, the module's global data. Real cubins of the debug-build lab
(tests/data/trace/debug_builds) are patched at their ELF fields, here by a reader of this
file's own: a relocation's addend far past its function (nvdisasm's time grows with it: 2^32
bytes took it over a minute, 2^40 hours), a virtual table entry into the middle of a function
or naming the kernel, a relocation section whose symbol table is a section of zeros; and
small SASS programs that call without end. Each ends with a located error and exit status 2,
no traceback, in seconds and under 1 GiB (:func:`tests.hostile.refused`). What bounds the
work is proved where it can be (the refusal's message, the sections parsed, the passes over
the code counted); the rest keeps :data:`tests.conftest.HANG_S`, a liveness guard.
"""

from __future__ import annotations

import os
import struct
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmem_cli.cuda import sass
from shmem_cli.cuda.sass_link import link, linked_function
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator import execute, mufu
from shmem_cli.trace.emulator.state import Launch, TraceError
from shmem_cli.trace.kernel.constants import read_constants
from shmem_cli.trace.kernel.cubin import read_cubin

from .conftest import HANG_S, TEST_DATA, TRACE_DATA, needs_nvdisasm
from .hostile import refused, shmem

LAB = TRACE_DATA / "debug_builds"
DEBUG = LAB / "debug_builds.g.sm_90.cubin"
WORDS = LAB / "inputs" / "words.bin"


class _Cubin:
    """A cubin's bytes, patched at its section headers and relocations (ELF64, little
    endian: section header 64 bytes at e_shoff, a RELA entry offset, info, addend)."""

    def __init__(self, path: Path) -> None:
        self.data = bytearray(path.read_bytes())
        (self.shoff,) = struct.unpack_from("<Q", self.data, 0x28)
        shnum, shstrndx = struct.unpack_from("<HH", self.data, 0x3C)
        names_at = self.header(shstrndx)[4]
        self.names = []
        for i in range(shnum):
            start = names_at + self.header(i)[0]
            self.names.append(self.data[start : self.data.index(0, start)].decode())

    def header(self, i: int) -> list[int]:
        return list(struct.unpack_from("<IIQQQQIIQQ", self.data, self.shoff + 64 * i))

    def set_header(self, name: str, field: int, value: int) -> None:
        """Field 4 is sh_offset, 5 sh_size, 6 sh_link."""
        i = self.names.index(name)
        h = self.header(i)
        h[field] = value
        struct.pack_into("<IIQQQQIIQQ", self.data, self.shoff + 64 * i, *h)

    def set_addend(self, section: str, entry: int, addend: int) -> None:
        at = self.header(self.names.index(section))[4] + 24 * entry
        struct.pack_into("<q", self.data, at + 16, addend)

    def set_symbol(self, section: str, entry: int, symbol: int) -> None:
        at = self.header(self.names.index(section))[4] + 24 * entry
        (info,) = struct.unpack_from("<Q", self.data, at + 8)
        struct.pack_into("<Q", self.data, at + 8, (symbol << 32) | (info & 0xFFFF_FFFF))

    def write(self, tmp: Path) -> Path:
        path = tmp / "patched.cubin"
        path.write_bytes(bytes(self.data))
        return path


# the virtual table of Row (.nv.global.init) has Row::at at 0x10: its relocation is entry 0
_VTABLE = ".rela.nv.global.init"
# walk's return address (32@lo/hi((_Z4walkPKiii + .L@srel))): entries 0 and 1
_RETURN = ".rela.text._Z4walkPKiii"


@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        # a virtual table entry 2^40 bytes past Row::at: nvdisasm would run for hours
        (
            lambda c: c.set_addend(_VTABLE, 0, 1 << 40),
            "a relocation of .rela.nv.global.init (at 0x10) writes an address +0x10000000000 "
            "bytes from a function's start, outside its code",
        ),
        (lambda c: c.set_addend(_VTABLE, 0, -(1 << 62)), "-0x4000000000000000 bytes"),
        # a return address 2^36 bytes past walk's code
        (lambda c: [c.set_addend(_RETURN, k, 1 << 36) for k in (0, 1)], "+0x1000000000 bytes"),
        # one byte past the end of Row::at's code (0x300 bytes)
        (lambda c: c.set_addend(_VTABLE, 0, 0x301), "+0x301 bytes"),
        # the virtual table's relocations name a section of zeros as their symbol table
        (
            lambda c: c.set_header(_VTABLE, 6, c.names.index(".nv.global")),
            "not a valid cubin: .rela.nv.global.init names no symbol table",
        ),
        (lambda c: c.set_header(_VTABLE, 6, 60_000), ".rela.nv.global.init names no symbol table"),
    ],
)
def test_a_relocation_outside_its_function_is_refused_before_nvdisasm(
    tmp_path: Path, patch: object, fragment: str
) -> None:
    cubin = _Cubin(DEBUG)
    patch(cubin)  # type: ignore[operator]
    path = cubin.write(tmp_path)
    with pytest.raises(ShmemError) as err:  # by the reader: no tool has seen the cubin
        read_cubin(path, use_tools=False)
    assert fragment in err.value.message
    assert err.value.path == str(path)


def test_a_relocation_at_the_end_of_its_function_is_read(tmp_path: Path) -> None:
    """The check's edge: an address at the end of a function's code (0x300 bytes: the end of
    Row::at) is an address, for the call to refuse, not the reader."""
    cubin = _Cubin(DEBUG)
    cubin.set_addend(_VTABLE, 0, 0x300)
    info = read_cubin(cubin.write(tmp_path), use_tools=False)
    assert any(k.name == "virtual_call" for k in info.kernels)


def _virtual_call(path: Path) -> tuple[str, ...]:
    return ("trace", str(path), "-k", "virtual_call", "-b", "64", f"--arg=1=@{WORDS}", "-f", "json")


@needs_nvdisasm
@pytest.mark.parametrize(
    ("patch", "fragment"),
    [
        # Row::at's entry 0x40 bytes into its code: the call lands in no function's start
        # (virtual_call's 0x1100 bytes of code first, Row::at after it at 0x1100)
        (lambda c: c.set_addend(_VTABLE, 0, 0x40), "calls a function outside it at 0x1140"),
        pytest.param(
            # the entry names the kernel itself (symbol 120 is virtual_call): address 0
            lambda c: c.set_symbol(_VTABLE, 0, 120),
            "calls a function outside it at 0x0",
            marks=pytest.mark.slow,
        ),
    ],
)
@pytest.mark.slow
def test_a_virtual_table_entry_that_is_no_functions_start_is_refused_at_the_call(
    tmp_path: Path, patch: object, fragment: str
) -> None:
    cubin = _Cubin(DEBUG)
    patch(cubin)  # type: ignore[operator]
    path = cubin.write(tmp_path)
    ran = shmem(*_virtual_call(path))
    refused(ran, fragment, "debug_builds.cu:114:1: error:", roots=[LAB])


# --- calls without end ----------------------------------------------------------------------

# f calls itself and never returns (no stack: the return address only in R20:R21); the
# kernel's thread 0 calls f, the others wait after the call
_RECURSION = """\
\t.section\t.text._Z1fv,"ax",@progbits
_Z1fv:
        /*0000*/                   MOV R20, 32@lo((_Z1fv + .L_x_2@srel)) ;
        /*0010*/                   MOV R21, 32@hi((_Z1fv + .L_x_2@srel)) ;
        /*0020*/                   CALL.ABS.NOINC `(_Z1fv) ;
.L_x_2:
        /*0030*/                   RET.ABS.NODEC R20 0x0 ;
\t.section\t.text._Z1kv,"ax",@progbits
_Z1kv:
\t//## File "k.cu", line 5
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;
        /*0020*/                   MOV R20, 32@lo((_Z1kv + .L_x_1@srel)) ;
        /*0030*/                   MOV R21, 32@hi((_Z1kv + .L_x_1@srel)) ;
        /*0040*/               @!P0 CALL.ABS.NOINC `(_Z1fv) ;
.L_x_1:
        /*0050*/                   STS [R0.X4], R0 ;
        /*0060*/                   EXIT ;
"""


@pytest.mark.slow
@pytest.mark.parametrize("threads", [1, 32])
def test_a_recursion_that_never_returns_is_stopped_at_its_depth(threads: int) -> None:
    """With one thread the budget stopped it (131,072 instructions, 3 s); with the others
    waiting, each step ranked the recursing thread by its call sites, kept for every depth:
    64,000 instructions took 55 s and 2.2 GiB, the default budget past the time limit. The
    message proves the depth stopped it; HANG_S (a liveness guard) catches the minutes."""
    fns = {f.name: f for f in sass.parse(_RECURSION)}
    start = time.monotonic()
    with pytest.raises(TraceError) as err:
        execute.run(link(fns["_Z1kv"], fns.get), Launch(block=(threads, 1, 1), static_smem=128))
    assert "calls nest deeper than 4,096" in err.value.message
    assert "a recursion that never returns [CALL.ABS.NOINC `(_Z1fv) at pc 0x00a0]" in str(err.value)
    assert time.monotonic() - start < HANG_S


def _program(body: str) -> sass.Function:
    lines = ['\t.section\t.text._Z1kv,"ax",@progbits', "_Z1kv:", '\t//## File "k.cu", line 7']
    lines += [f"        /*{16 * i:04x}*/  {t} ;" for i, t in enumerate(body.strip().splitlines())]
    (fn,) = sass.parse("\n".join(lines))
    return fn


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        # a RET with no call, to an address that is no instruction (0x12345, 0x8: inside one)
        ("MOV R20, 0x12345\nRET.ABS.NODEC R20 0x0\nEXIT", "return address is not an instruction"),
        ("MOV R20, 0x8\nRET.ABS.NODEC R20 0x0\nEXIT", "return address is not an instruction"),
        # a RET with no call back to the kernel's start: the same state again, at once
        ("MOV R20, RZ\nRET.ABS.NODEC R20 0x0\nEXIT", "can never end"),
        # a jump table's entry past the function, before it, and a BRX with nothing after it
        ("MOV R4, 0x1000\nBRX R4 -0x20\nEXIT", "a jump table's target is not an instruction"),
        ("MOV R4, -0x1000\nBRX R4 -0x20\nEXIT", "a jump table's target is not an instruction"),
        ("MOV R4, 0x0\nBRX R4 -0x20", "(no instruction after it)"),
        # a jump table's entry that is the BRX itself: a spin
        ("MOV R4, 0x0\nBRX R4 -0x10\nEXIT", "can never end"),
        # calls to the kernel itself: by its name (no return: the depth), by a register
        ("CALL.ABS.NOINC `(_Z1kv)\nEXIT", "calls nest deeper than 4,096"),
        ("MOV R4, RZ\nMOV R5, RZ\nCALL.ABS.NOINC R4\nEXIT", "calls a function outside it at 0x0,"),
        # calls past the code: the largest address, the largest relative offset
        ("MOV R4, -0x1\nMOV R5, -0x1\nCALL.ABS.NOINC R4\nEXIT", "at 0xffffffffffffffff,"),
        ("MOV R8, 0x7fffffff\nCALL.REL.NOINC R8 `(_Z1kv)\nEXIT", "outside it at 0x7fffffff,"),
        # a convergence barrier moved to another barrier: not a form ptxas writes
        ("BMOV.32 B0, B1\nEXIT", "BMOV.32 is not modelled"),
    ],
)
def test_control_transfers_out_of_the_code_end_at_the_instruction(body: str, fragment: str) -> None:
    """Each stops at the transfer, with its own reason: a spin run until the instruction
    budget ran out would end with the budget's message, not the fragment."""
    with pytest.raises(TraceError) as err:
        execute.run(_program(body), Launch(block=(32, 1, 1), static_smem=128))
    assert fragment in err.value.message
    assert (err.value.path, err.value.line) == ("k.cu", 7)


# --- the module's global data ---------------------------------------------------------------

OPCODES = TRACE_DATA / "opcodes_cuda"


def test_global_data_is_bounded_before_it_is_placed(tmp_path: Path) -> None:
    """CUB's objects of the -G build live in .nv.global (a section of zeros): it may claim
    up to 4 GiB (reserved in the launch's global memory, real only where written)."""
    for size, refused_ in ((1 << 32, False), ((1 << 32) + 1, True), (1 << 40, True)):
        cubin = _Cubin(DEBUG)
        cubin.set_header(".nv.global", 5, size)
        path = cubin.write(tmp_path)
        if not refused_:
            assert read_constants(path, "cub_block").global_sections[".nv.global"] == size
            continue
        with pytest.raises(ShmemError) as err:
            read_constants(path, "cub_block")
        assert f"section .nv.global claims {size:,} bytes; a module's global data is at most " in (
            err.value.message
        )


@needs_nvdisasm
@pytest.mark.parametrize(
    ("addend", "fragment"),
    [
        # the loader's sum wraps at 64 bits: 2^64 - 2^62 plus the section's address
        (-(1 << 62), "error: global access at 0xc000"),
        # 2^63 - 1 plus the address: odd, shown unsigned (it was 0x-7fff...)
        pytest.param(
            (1 << 63) - 1,
            "error: misaligned 16-byte access at address 0x8000",
            marks=pytest.mark.slow,
        ),
    ],
)
@pytest.mark.slow
def test_a_constant_banks_slot_far_from_its_global_data_is_a_located_error(
    tmp_path: Path, addend: int, fragment: str
) -> None:
    """cuda90b's module_data reads double sin's table through the address a relocation of
    bank 4 gives (entry 1: ``__cudart_sin_cos_coeffs`` in .nv.global.init); its addend made
    the slot's address negative (an OverflowError when written) or past 2^64."""
    cubin = _Cubin(OPCODES / "cuda90b.sm_90.cubin")
    cubin.set_addend(".rela.nv.constant4", 1, addend)
    path = cubin.write(tmp_path)
    ran = shmem(
        "trace", str(path), "-k", "module_data", "-b", "64",
        f"--arg=2=@{OPCODES / 'inputs' / 'trig.bin'}", "--no-tables",
    )  # fmt: skip
    refused(ran, "cuda90b.cu:49:1: " + fragment, roots=[OPCODES])


# --- MUFU on every kind of float ------------------------------------------------------------

_F32 = {"+0": 0, "-0": 0x8000_0000, "+inf": 0x7F80_0000, "-inf": 0xFF80_0000, "-1": 0xBF80_0000}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # the PTX ISA's special cases of rcp.approx, rsqrt.approx, sqrt.approx, ex2.approx,
        # lg2.approx, sin.approx (MUFU.SIN of x / 2pi), cos.approx, tanh.approx
        ("RCP", {"+0": "+inf", "-0": "-inf", "+inf": "+0", "-inf": "-0", "-1": "-1"}),
        ("RSQ", {"+0": "+inf", "-0": "-inf", "+inf": "+0", "-inf": "nan", "-1": "nan"}),
        ("SQRT", {"+0": "+0", "-0": "-0", "+inf": "+inf", "-inf": "nan", "-1": "nan"}),
        ("EX2", {"+inf": "+inf", "-inf": "+0", "+0": "+1", "-0": "+1"}),
        ("LG2", {"+0": "-inf", "-0": "-inf", "+inf": "+inf", "-inf": "nan", "-1": "nan"}),
        ("SIN", {"+0": "+0", "-0": "-0", "+inf": "nan", "-inf": "nan"}),
        ("COS", {"+inf": "nan", "-inf": "nan", "+0": "+1", "-0": "+1"}),
        ("TANH", {"+0": "+0", "-0": "-0"}),
    ],
)
def test_mufu_takes_any_bits(name: str, expected: dict[str, str]) -> None:
    """Every sign and exponent with the edge significands, NaNs of every payload and 2^20
    random patterns: uint32 bits back for each, no NumPy warning, NaN for a NaN, and the
    special cases the PTX ISA gives."""
    rng = np.random.default_rng(27)
    exponents = np.arange(512, dtype=np.uint32) << np.uint32(23)
    edges = np.array([0, 1, 2, 0x3F_FFFF, 0x40_0000, 0x40_0001, 0x7F_FFFE, 0x7F_FFFF], np.uint32)
    bits = np.concatenate(
        [(exponents[:, None] | edges).ravel(), rng.integers(0, 1 << 32, 1 << 20).astype(np.uint32)]
    )
    fn = mufu.FUNCTIONS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = np.asarray(fn(bits))
    assert out.dtype == np.uint32 and out.shape == bits.shape
    nan_in = (bits & 0x7F80_0000 == 0x7F80_0000) & (bits & 0x7F_FFFF != 0)
    assert (out[nan_in] & 0x7FFF_FFFF > 0x7F80_0000).all()  # a NaN
    got = dict(zip(_F32, np.asarray(fn(np.array(list(_F32.values()), np.uint32))), strict=True))
    names = {**_F32, "+1": 0x3F80_0000}
    for arg, want in expected.items():
        if want == "nan":
            assert got[arg] & 0x7FFF_FFFF > 0x7F80_0000, (arg, hex(got[arg]))
        else:
            assert got[arg] == names[want], (arg, hex(got[arg]))


# --- a mutation fuzz over the fields the linking reads ---------------------------------------

_FUZZ = int(os.environ.get("SHMEM_FUZZ_EXAMPLES", "40"))
_EDGES = st.sampled_from([0, 1, 7, 0x40, 0x300, 0x1100, (1 << 31) - 1, 1 << 32, 1 << 40, 2**63])
_RELAS = [".rela.nv.global.init", ".rela.text.virtual_call", ".rela.text.fptr", _RETURN]
_SECTIONS = [".nv.global.init", ".nv.global", ".symtab", ".strtab", *_RELAS]


@st.composite
def _mutations(draw: st.DrawFn) -> list[tuple[str, str, int, int]]:
    """Up to four changes: a section header's offset, size or link; a relocation's offset,
    symbol or addend; each a value at an edge or any 64-bit one."""
    value = st.one_of(_EDGES, st.integers(0, 2**64 - 1))
    change = st.one_of(
        st.tuples(st.just("header"), st.sampled_from(_SECTIONS), st.sampled_from([4, 5, 6]), value),
        st.tuples(st.just("rela"), st.sampled_from(_RELAS), st.integers(0, 5), value),
    )
    return draw(st.lists(change, min_size=1, max_size=4))


@settings(max_examples=_FUZZ, deadline=None, suppress_health_check=list(HealthCheck))
@given(_mutations(), st.sampled_from(["addend", "symbol", "offset"]))
def test_mutated_link_fields_end_in_a_result_or_a_located_refusal(
    tmp_path_factory: pytest.TempPathFactory,
    changes: list[tuple[str, str, int, int]],
    field: str,
) -> None:
    """What the trace reads of a cubin before nvdisasm and before the launch (its kernels,
    the constant banks, the global data and virtual tables of each kernel, the functions each
    reaches) ends in a result or a ShmemError naming the file, never a hang (HANG_S)."""
    cubin = _Cubin(DEBUG)
    for kind, section, which, value in changes:
        if kind == "header":
            cubin.set_header(section, which, value if which != 6 else value & 0xFFFF_FFFF)
            continue
        offset, size = cubin.header(cubin.names.index(section))[4:6]
        entry = which % max(size // 24, 1)
        if offset + 24 * entry + 24 > len(cubin.data):  # the header moved it off the file
            continue
        if field == "addend":
            cubin.set_addend(section, entry, value - (1 << 63))
        elif field == "symbol":
            cubin.set_symbol(section, entry, value & 0xFFFF_FFFF)
        else:
            struct.pack_into("<Q", cubin.data, offset + 24 * entry, value)
    path = cubin.write(tmp_path_factory.mktemp("fuzz"))
    start = time.monotonic()
    try:
        info = read_cubin(path, use_tools=False)
        for kernel in info.kernels:
            read_constants(path, kernel.mangled)
    except ShmemError as err:
        assert err.path == str(path), err.message
    assert time.monotonic() - start < HANG_S


@pytest.mark.slow
def test_a_kernel_calling_thousands_of_functions_links_in_linear_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A -G kernel that calls 4,000 functions (each of nvdisasm's sections its own): each was
    looked up by a scan of the whole text (30 s for 1 MiB of text), now found in one pass:
    the text is split into sections once, and each section parsed once."""
    from shmem_cli.cuda import sass_link

    splits: list[int] = []
    parsed: list[int] = []
    split, parse = sass_link.function_sections, sass_link.parse

    def split_once(text: str) -> dict[str, str]:
        splits.append(len(text))
        assert len(splits) == 1, "the text was split again, for another function"
        return split(text)

    def measured(text: str) -> list[sass.Function]:
        parsed.append(len(text))
        return parse(text)

    monkeypatch.setattr(sass_link, "function_sections", split_once)
    monkeypatch.setattr(sass_link, "parse", measured)
    n = 4000
    nops = "".join(f"        /*{16 * k:04x}*/                   NOP ;\n" for k in range(1, 9))
    text = "".join(
        f'\t.section\t.text._Z1f{i}v,"ax",@progbits\n_Z1f{i}v:\n'
        f"        /*0000*/                   RET.ABS.NODEC R20 0x0 ;\n{nops}"
        for i in range(n)
    )
    text += '\t.section\t.text._Z1kv,"ax",@progbits\n_Z1kv:\n' + "".join(
        f"        /*{16 * i:04x}*/                   CALL.ABS.NOINC `(_Z1f{i}v) ;\n"
        for i in range(n)
    )
    linked = linked_function(text, "_Z1kv")
    assert linked is not None and len(linked.instructions) == n + 9 * n
    # the functions after the kernel (0x80-aligned: 4,000 calls end at 0xfa00), each 0x90
    # bytes long placed 0x100 apart
    assert linked.labels["_Z1f0v"] == 0xFA00 and linked.labels["_Z1f3999v"] == 0xFA00 + 3999 * 0x100
    assert splits == [len(text)]
    assert len(parsed) == n + 1 and sum(parsed) <= len(text)  # each section once, no more


class _Walked(list[sass.Instruction]):
    """A function's instructions that count the walks over them (each ``for``), failing the
    test past ``limit``: one per decoded instruction is quadratic in the code."""

    def __init__(self, items: list[sass.Instruction], limit: int) -> None:
        super().__init__(items)
        self.walks, self.limit = 0, limit

    def __iter__(self) -> Iterator[sass.Instruction]:
        self.walks += 1
        assert self.walks <= self.limit, f"the code was walked {self.walks:,} times"
        return super().__iter__()


@pytest.mark.slow  # 3-5 s; the other linked-kernel bounds stay fast
def test_thousands_of_indirect_transfers_decode_in_linear_time() -> None:
    """Each call through a register, RET and BRX made its own table of the function's
    addresses when decoded: these 30,000 took 48 s (quadratic in the code), now 1.5 s. The
    code is walked a fixed number of times (about 15), not once for each of them."""
    n = 10_000
    forms = ("CALL.ABS.NOINC R4", "RET.ABS.NODEC R20 0x0", "BRX R4 -0x10")
    body = "EXIT\n" + "\n".join(form for form in forms for _ in range(n)) + "\nEXIT"
    program = _program(body)
    program.instructions = walked = _Walked(program.instructions, 100)
    execute.run(program, Launch(block=(32, 1, 1)))  # decoded whole, run to the EXIT
    assert 0 < walked.walks <= 100


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        # the local window is c[0x0][0x20] (2^49 x 3): 2^40 past it is no window, and
        # 16 KiB past its base is past the thread's local memory
        (
            "LDC.64 R2, c[0x0][0x20]\nIADD3 R3, R3, 0x100, RZ\nST.E desc[UR4][R2.64], RZ\nEXIT",
            "global access at 0x3010000000000: not a device address",
        ),
        (
            "LDC.64 R2, c[0x0][0x20]\nIADD3 R2, R2, 0x4000, RZ\nST.E desc[UR4][R2.64], RZ\nEXIT",
            "local access at 0x4000 beyond 16384 bytes",
        ),
        # 4 bytes below the window: a global address no buffer has
        (
            "LDC.64 R2, c[0x0][0x20]\nIADD3 R2, P0, R2, -0x4, RZ\n"
            "IADD3.X R3, R3, -0x1, RZ, P0, !PT\nLD.E R5, desc[UR4][R2.64]\nEXIT",
            "global access at 0x2fffffffffffc: not a device address",
        ),
        # the window's last 32-bit offset, and a 16-byte load 8 bytes before its end
        ("LDC.64 R2, c[0x0][0x20]\nMOV R2, -0x4\nLD.E R5, desc[UR4][R2.64]\nEXIT", "below the"),
        (
            "LDC.64 R2, c[0x0][0x20]\nIADD3 R2, R2, 0x3ff8, RZ\n"
            "LD.E.128 R4, desc[UR4][R2.64]\nEXIT",
            "misaligned 16-byte access at address 0x3000000003ff8",
        ),
    ],
)
def test_generic_addresses_around_the_local_window_end_at_the_instruction(
    body: str, fragment: str
) -> None:
    with pytest.raises(TraceError) as err:
        execute.run(_program(body), Launch(block=(32, 1, 1)))
    assert fragment in err.value.message
    assert (err.value.path, err.value.line) == ("k.cu", 7)


# --- --params @FILE -------------------------------------------------------------------------

_ABI8 = TEST_DATA / "cubin_abi" / "abi8_ptxas13.0_sm_90.cubin"


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kind", "fragment"),
    [
        # its size against the block's (7a4d417), said from the file's size: nothing read
        ("sparse", "21,474,836,480 bytes; k's parameter block is 12 bytes"),
        pytest.param(
            "fifo", "it is a FIFO (named pipe), not a regular file", marks=pytest.mark.slow
        ),
        pytest.param("folder", "it is a directory", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_a_params_file_is_read_bounded(tmp_path: Path, kind: str, fragment: str) -> None:
    """The ABI-8 cubin's kernel takes 12 bytes of parameters: a 20 GiB sparse file, a FIFO
    no one writes and a folder as --params are refused before anything is read."""
    path = tmp_path / "params.bin"
    if kind == "sparse":
        with path.open("wb") as fh:
            fh.truncate(20 << 30)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    ran = shmem("trace", str(_ABI8), "-b", "32", "--params", f"@{path}", "--no-tables")
    refused(ran, "abi8_ptxas13.0_sm_90.cubin: error: --params", fragment)  # a FIFO: HANG_S
