"""The SASS reader and check, on a real cuobjdump dump recorded on the H200.

tests/data/verify_sass_h200_lab.txt is ``cuobjdump -sass`` output of the
hardware-truth lab's probe kernels (20 of its 45 functions, trailing NOP padding
removed). The lab's own parser recorded each function's shared-memory opcodes in
tests/data/h200_probe_results.json; ours must read the same.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from shmem_cli.verify import sass_check

from .conftest import TEST_DATA as DATA

DUMP = sass_check.parse_sass((DATA / "verify_sass_h200_lab.txt").read_text())
LAB = {r["name"]: r["sass"] for r in json.loads((DATA / "h200_probe_results.json").read_text())}


def test_every_function_of_the_dump_is_found() -> None:
    assert len(DUMP) == 20
    assert {"a_u64_pairs", "ldsm_x4_same_all", "stsm_x1_plain", "p16_multiwarp"} <= set(DUMP)


@pytest.mark.parametrize("name", sorted(DUMP))
def test_shared_opcodes_agree_with_the_lab_record(name: str) -> None:
    assert sass_check.shared_opcodes(DUMP[name]) == Counter(LAB[name])


def test_instructions_carry_offset_guard_and_opcode() -> None:
    a_u64 = DUMP["a_u64_pairs"]
    assert sass_check.Instruction(0x110, "", "ATOMS.CAST.SPIN.64") in a_u64
    assert sass_check.Instruction(0x140, "@!P0", "BRA") in a_u64
    assert a_u64[0] == sass_check.Instruction(0, "", "LDC")


@pytest.mark.parametrize(
    ("op", "size", "extra", "opcodes"),
    [
        ("load", 16, {}, ("LDS.128",)),
        ("load", 8, {}, ("LDS.64",)),
        ("load", 4, {}, ("LDS",)),
        ("load", 2, {}, ("LDS.U16", "LDS.S16")),
        ("store", 1, {}, ("STS.U8", "STS.S8")),
        ("store", 16, {}, ("STS.128",)),
        ("atomic", 4, {"atomic": "inc"}, ("ATOMS.POPC.INC.32",)),
        ("atomic", 4, {"atomic": "exch"}, ("ATOMS.EXCH",)),
        ("atomic", 4, {"atomic": "cas"}, ("ATOMS.CAS",)),
        ("atomic", 8, {"atomic": "cas"}, ("ATOMS.CAS.64",)),
        ("atomic", 16, {"atomic": "exch"}, ("ATOMS.EXCH.128",)),
        ("ldmatrix", 16, {"matrices": 1}, ("LDSM.16.M88",)),
        ("ldmatrix", 16, {"matrices": 4, "trans": True}, ("LDSM.16.MT88.4",)),
        ("stmatrix", 16, {"matrices": 2}, ("STSM.16.M88.2",)),
    ],
)
def test_expected_instruction_per_access(
    op: str, size: int, extra: dict[str, object], opcodes: tuple[str, ...]
) -> None:
    assert sass_check.expected_instruction(op, size, **extra).opcodes == opcodes  # type: ignore[arg-type]


def test_a_single_intended_instruction_is_measurable() -> None:
    v = sass_check.check(
        DUMP["a_inc1_mod4"], sass_check.expected_instruction("atomic", 4, atomic="inc")
    )
    assert (v.ok, v.found) == (True, "ATOMS.POPC.INC.32")
    assert sass_check.check(
        DUMP["stsm_rows_mod4"], sass_check.expected_instruction("stmatrix", 16, matrices=4)
    ).ok
    assert sass_check.check(DUMP["s_st_conflict"], sass_check.expected_instruction("store", 2)).ok


def test_a_different_width_is_unmeasurable() -> None:
    v = sass_check.check(DUMP["s_st_conflict"], sass_check.expected_instruction("store", 4))
    assert not v.ok
    assert v.reason == "the compiler emitted STS.U16 instead of STS"


def test_a_compare_and_swap_loop_is_not_an_atomic_add() -> None:
    v = sass_check.check(
        DUMP["a_u64_pairs"], sass_check.expected_instruction("atomic", 4, atomic="add")
    )
    assert not v.ok
    assert v.found == "ATOMS.CAST.SPIN.64, LDS.64"


def test_other_shared_traffic_in_the_kernel_is_unmeasurable() -> None:
    # the lab's load kernels store their result to shared memory: one STS beside the LDS.128
    v = sass_check.check(DUMP["ctl_int4_div4"], sass_check.expected_instruction("load", 16))
    assert not v.ok
    assert "STS" in v.reason and v.found == "LDS.128, STS"


def _listing(*lines: str) -> dict[str, list[sass_check.Instruction]]:
    body = "\n".join(
        f"        /*{i * 16:04x}*/                   {text} ;" for i, text in enumerate(lines)
    )
    return sass_check.parse_sass("\t\tFunction : k\n" + body + "\n")


def test_global_traffic_is_allowed_only_after_the_barrier_that_ends_the_region() -> None:
    expected = sass_check.expected_instruction("load", 4)
    good = _listing(
        "S2R R0, SR_TID.X",
        "@P0 LDS R2, [R0]",
        "BAR.SYNC.DEFER_BLOCKING 0x0",
        "STG.E desc[UR4][R2.64], R5",
        "EXIT",
    )
    v = sass_check.check(good["k"], expected)
    assert v.ok and v.predicated
    spill = _listing("STL [R1], R0", "LDS R2, [R0]", "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT")
    assert sass_check.check(spill["k"], expected).reason.startswith(
        "STL at 0x0000 moves global or local memory"
    )
    early = _listing(
        "LDS R2, [R0]", "STG.E desc[UR4][R2.64], R5", "BAR.SYNC.DEFER_BLOCKING 0x0", "EXIT"
    )
    assert not sass_check.check(early["k"], expected).ok


def test_a_kernel_missing_from_the_dump_is_unmeasurable() -> None:
    v = sass_check.check(None, sass_check.expected_instruction("load", 4))
    assert not v.ok and v.reason == "the kernel is not in the SASS dump"


def test_a_dump_s_operands_are_never_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify reads an instruction's offset, guard and opcode only: parsing the operands of a
    64 MiB dump of long operand lists (``LDS R0, R0, ...``) took minutes."""
    from shmem_cli.cuda import sass

    def refused(*_: object) -> None:
        raise AssertionError("an operand was parsed")

    monkeypatch.setattr(sass, "split_operands", refused)
    monkeypatch.setattr(sass, "parse_operand", refused)
    functions = _listing("@!P1 LDS.U16 " + "R0, " * 3000 + "R1", "BAR.SYNC 0x0")
    assert [(i.offset, i.guard, i.opcode) for i in functions["k"]] == [
        (0, "@!P1", "LDS.U16"),
        (16, "", "BAR.SYNC"),
    ]
    assert sass_check.parse_sass((DATA / "verify_sass_h200_lab.txt").read_text()) == DUMP


def test_instructions_past_the_bound_are_an_error_at_their_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """4.4 million one-line NOPs (a 128 KiB gzip) held 1.2 GiB."""
    from shmem_cli.plumbing.errors import ShmemError

    assert sass_check.MAX_INSTRUCTIONS == 1_000_000
    monkeypatch.setattr(sass_check, "MAX_INSTRUCTIONS", 3)
    assert len(_listing("NOP", "NOP", "NOP")["k"]) == 3
    with pytest.raises(ShmemError) as err:
        sass_check.parse_sass("\t\tFunction : k\n" + "/*0000*/ NOP ;\n" * 4, "sass.txt")
    assert "holds more than 3 instructions" in err.value.message
    assert (err.value.path, err.value.line) == ("sass.txt", 5)
