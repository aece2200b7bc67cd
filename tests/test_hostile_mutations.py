"""The twelfth hostile round (docs/robustness.md, round 12): what a mutation fuzz of cubins,
executables, Triton cache entries, parameter blocks and Nsight exports found. Each input is
built here, small, from its bytes; each bound is proved by what was done (calls counted,
characters built), not by the time taken."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.kernel import demangle as demangle_module
from shmem_cli.trace.kernel.cubin import read_cubin
from shmem_cli.trace.kernel.demangle import MAX_DEPTH, Budget, demangle
from shmem_cli.trace.triton.ttgir import ttgir_params

from .hostile import refused, shmem


def _sub(k: int) -> str:
    """The Itanium substitution naming the k-th earlier component: S_, S0_, ..., SZ_, S10_."""
    if k == 0:
        return "S_"
    digits, k, out = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", k - 1, ""
    while True:
        out, k = digits[k % 36] + out, k // 36
        if k == 0:
            return f"S{out}_"


def _tripling(levels: int) -> str:
    """f<a, f<f, f>, a<a, a>, ...>(): each level's template argument repeats an earlier one three
    times, so ``levels`` of 12 mangled characters spell 3^(levels/2 + 2) demangled ones."""
    return "_Z1fI1a" + "".join(f"{_sub(k)}I{_sub(k)}{_sub(k)}E" for k in range(levels)) + "Ev"


def _cubin(names: list[bytes], info: bytes | None = None) -> bytes:
    """A cubin (EM_CUDA, sm_90, ABI 7) of entry functions with these names in one section of
    code (16 bytes), and nothing else; with ``info``, the first kernel's ``.nv.info.<name>``
    section holds those bytes, at :func:`_info_at`."""
    strtab = b"\0.shstrtab\0.strtab\0.symtab\0"
    if info is not None:
        strtab += b".nv.info." + names[0] + b"\0"
    text_name = len(strtab)
    strtab += b".text\0"
    text_index = 4 if info is None else 5
    strings = strtab + b"".join(n + b"\0" for n in names)
    symtab = bytes(24)
    at = len(strtab)
    for n in names:  # FUNC, CUDA entry, in the code section
        symtab += struct.pack("<IBBHQQ", at, 0x12, 0x10, text_index, 0, 16)
        at += len(n) + 1
    sym_at = 64 + len(strings) + (-(64 + len(strings)) % 8)
    info_at = sym_at + len(symtab)
    text_at = info_at + len(info or b"")
    text_at += -text_at % 16
    sh_at = text_at + 16
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    head[8] = 7
    struct.pack_into("<H", head, 18, 190)
    struct.pack_into("<I", head, 0x30, 0x5A055A)
    struct.pack_into("<Q", head, 0x28, sh_at)
    struct.pack_into("<HHH", head, 0x3A, 64, text_index + 1, 1)
    sections = bytes(64)
    sections += struct.pack("<IIQQQQIIQQ", 1, 3, 0, 0, 64, len(strings), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 11, 3, 0, 0, 64, len(strings), 0, 0, 1, 0)
    sections += struct.pack("<IIQQQQIIQQ", 19, 2, 0, 0, sym_at, len(symtab), 2, 0, 8, 24)
    if info is not None:  # SHT_LOPROC + 0 (0x70000000), as ptxas writes .nv.info sections
        sections += struct.pack("<IIQQQQIIQQ", 27, 0x70000000, 0, 0, info_at, len(info), 3, 0, 4, 0)
    sections += struct.pack("<IIQQQQIIQQ", text_name, 1, 0x6, 0, text_at, 16, 3, 0, 16, 0)
    body = bytes(head) + strings
    body += bytes(sym_at - len(body)) + symtab + (info or b"")
    body += bytes(text_at - len(body)) + bytes(16)  # the code (never disassembled here)
    return body + sections


def _info_at(names: list[bytes]) -> int:
    """The file offset of the ``.nv.info`` section :func:`_cubin` writes for ``names``."""
    strings = 64 + 27 + len(b".nv.info." + names[0]) + 1 + len(b".text\0")
    strings += sum(len(n) + 1 for n in names)
    return strings + (-strings % 8) + 24 * (len(names) + 1)


def _count_types(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    real, calls = demangle_module._Parser.type, [0]

    def counted(self: Any) -> str:
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(demangle_module._Parser, "type", counted)
    return calls


# --- kernel names the small demangler reads ------------------------------------------------


def test_a_pointer_nested_5000_deep_stays_mangled(monkeypatch: pytest.MonkeyPatch) -> None:
    """``_Z1fPPPP...i`` (5,000 P): a RecursionError (a traceback from --list-params of a
    700-byte cubin); now the name stays as it is after MAX_DEPTH nested types."""
    calls = _count_types(monkeypatch)
    name = "_Z1f" + "P" * 5000 + "i"
    assert demangle(name) == name
    assert calls[0] == MAX_DEPTH + 1  # the type past the bound is refused, nothing deeper


def test_a_name_that_repeats_itself_is_bounded_by_the_budget() -> None:
    """29 levels (325 characters) spell 3^16.5, about 74 million: a 728-byte cubin held
    --list-params for minutes. The characters built stop at the budget (the last piece is at
    most three earlier ones), and the name stays mangled."""
    name = _tripling(29)
    budget = Budget(1 << 20)
    assert demangle(name, budget) == name
    assert -(3 << 20) <= budget.left < 0


def test_names_that_demangle_within_the_bounds() -> None:
    assert demangle("_Z7colreadILi32EEvPfPKfi") == "void colread<32>(float*, float const*, int)"
    assert demangle("_Z1f" + "P" * 20 + "i") == "f(int" + "*" * 20 + ")"
    # S_ is the template f, S0_ the type a (GNU c++filt spells the name, with a parameter
    # list added, 'void f<a, f<f, f>, a<a, a> >()')
    assert demangle(_tripling(2)) == "void f<a, f<f, f>, a<a, a>>()"


@pytest.mark.slow
def test_one_budget_serves_every_name_of_a_cubin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fifty kernels each named to spell about 3^15 characters: the cubin's names share one
    budget, so the characters built for all of them are those of one name's bound."""
    spent: list[int] = []
    real_init = Budget.__init__

    def recorded(self: Budget, left: int = demangle_module.MAX_WORK) -> None:
        real_init(self, left)
        spent.append(left)

    monkeypatch.setattr(Budget, "__init__", recorded)
    names = [_tripling(24) + "i" * k for k in range(50)]
    path = tmp_path / "names.cubin"
    path.write_bytes(_cubin([n.encode() for n in names]))
    info = read_cubin(path, use_tools=False)
    assert len(spent) == 1  # one budget for the file
    assert len(info.kernels) == 50
    assert sum(k.mangled == k.signature for k in info.kernels) >= 40  # most stay mangled


# --- .nv.info records ----------------------------------------------------------------------

SVAL = 4
KPARAM_INFO, CBANK_PARAM_SIZE = 0x17, 0x19


def _record(attr: int, payload: bytes, claimed: int | None = None) -> bytes:
    size = len(payload) if claimed is None else claimed
    return struct.pack("<BBH", SVAL, attr, size) + payload


def _param(ordinal: int, offset: int, size: int) -> bytes:
    return _record(KPARAM_INFO, struct.pack("<IHHI", 0, ordinal, offset, size << 18))


def test_an_attribute_record_too_short_for_its_value_is_refused_at_its_offset(
    tmp_path: Path,
) -> None:
    """EIATTR_CBANK_PARAM_SIZE written as a 0-byte SVAL record (ptxas writes a 2-byte value):
    a struct.error traceback from --list-params; now "not a valid cubin" at the record's byte
    in the file (the third record: two parameter records of 16 bytes before it)."""
    names = [b"k"]
    info = _param(0, 0, 8) + _param(1, 8, 4) + _record(CBANK_PARAM_SIZE, b"")
    path = tmp_path / "short.cubin"
    path.write_bytes(_cubin(names, info))
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    at = _info_at(names) + 32
    assert err.value.message == (
        f"not a valid cubin: the EIATTR_CBANK_PARAM_SIZE record at byte {at:#x} holds 0 "
        "bytes; it takes 2"
    )
    assert err.value.path == str(path)


def test_a_record_that_claims_more_than_its_section_holds_is_refused(tmp_path: Path) -> None:
    """A parameter record claiming 500 bytes with 12 left in the section (it was read cut
    short, silently): refused at its offset, with what it claims and what is left."""
    names = [b"k"]
    info = _param(0, 0, 8) + _record(KPARAM_INFO, struct.pack("<IHHI", 0, 1, 8, 4 << 18), 500)
    path = tmp_path / "long.cubin"
    path.write_bytes(_cubin(names, info))
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    at = _info_at(names) + 16
    assert err.value.message == (
        f"not a valid cubin: the .nv.info record at byte {at:#x} claims 500 bytes; its "
        "section has 12 left"
    )


def test_the_records_of_a_well_formed_section_are_read(tmp_path: Path) -> None:
    names = [b"k"]
    info = _param(1, 8, 4) + _param(0, 0, 8) + struct.pack("<BBH", 3, CBANK_PARAM_SIZE, 12)
    path = tmp_path / "ok.cubin"
    path.write_bytes(_cubin(names, info))
    (kernel,) = read_cubin(path, use_tools=False).kernels
    assert [(p.ordinal, p.offset, p.size) for p in kernel.params] == [(0, 0, 8), (1, 8, 4)]
    assert kernel.param_bytes == 12


def test_a_short_record_is_refused_on_the_command_line(tmp_path: Path) -> None:
    names = [b"k"]
    path = tmp_path / "short.cubin"
    path.write_bytes(_cubin(names, _record(CBANK_PARAM_SIZE, b"\x01")))
    ran = shmem("trace", str(path), "--list-params")
    refused(ran, f"{path}: error: not a valid cubin: the EIATTR_CBANK_PARAM_SIZE record at byte")


# --- TTGIR parameters ----------------------------------------------------------------------

_TTGIR = (
    "#loc = loc(unknown)\n"
    "module {\n"
    "  tt.func public @k(%x: !tt.ptr<f32> loc(#loc1),\n"
    "                    %n: TYPE {tt.divisibility = 16 : i32} loc(#loc2)) {\n"
    "    tt.return\n"
    "  }\n"
    "}\n"
)


@pytest.mark.parametrize("ty", ["tuple<i32, i32>", "!tt.ptr<!tt.ptr<f32>>", "x" * 600])
def test_a_parameter_type_shmem_cannot_pass_is_placed_at_its_type(ty: str) -> None:
    """The fuzz's retyped TTGIR parameters were refused naming only the file: now at the
    type's line and column (line 4, after the 20 blanks and '%n: ')."""
    text = _TTGIR.replace("TYPE", ty)
    with pytest.raises(ShmemError) as err:
        ttgir_params(text, "k", Path("k.ttgir"))
    assert err.value.pos is not None
    assert (err.value.pos.line, err.value.pos.column) == (4, 25)
    assert text.splitlines()[3][24:].startswith(ty[:20])
    assert "which shmem cannot pass yet" in err.value.message


def test_the_parameters_of_a_well_formed_signature_are_read() -> None:
    text = _TTGIR.replace("TYPE", "i32")
    params = ttgir_params(text, "k", Path("k.ttgir"))
    assert [(p.name, p.c_type) for p in params] == [("x", "float*"), ("n", "int32_t")]
