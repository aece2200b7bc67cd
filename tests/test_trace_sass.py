"""The nvdisasm text parser: typed operands, guards, modifiers, labels and line info."""

from __future__ import annotations

import time

import pytest

from shmem_cli.cuda import sass, sass_operands
from shmem_cli.cuda.sass_operands import Const, Imm, Label, Mem, Reg, Special

from .conftest import HANG_S

LISTING = """
\t.target\tsm_90
//--------------------- .text._Z4demoPfS_ii --------------------------
\t.section\t.text._Z4demoPfS_ii,"ax",@progbits
_Z4demoPfS_ii:
.text._Z4demoPfS_ii:
\t//## File "/src/demo.cu", line 12
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/              @!P0 BRA `(.L_x_0) ;
\t//## File "/src/demo.cu", line 14
        /*0020*/                   LDS.128 R12, [R20+-0x800] ;
.L_x_0:
        /*0030*/                   EXIT ;
.L_x_1:
        /*0040*/                   BRA `(.L_x_1);
.L_x_9:
"""


def one(text: str) -> sass.Instruction:
    return sass.parse_instruction(text, 0x40, "k.cu", 3)


def test_functions_labels_and_lines() -> None:
    (fn,) = sass.parse(LISTING)
    assert fn.name == "_Z4demoPfS_ii"
    assert [i.pc for i in fn.instructions] == [0, 0x10, 0x20, 0x30, 0x40]
    assert fn.labels[".L_x_0"] == 0x30 and fn.labels[".L_x_9"] == 0x50
    assert [(i.file, i.line) for i in fn.instructions][:3] == [
        ("/src/demo.cu", 12),
        ("/src/demo.cu", 12),
        ("/src/demo.cu", 14),
    ]
    bra = fn.instructions[1]
    assert bra.guard == Reg("P", 0, not_=True)
    assert bra.operands == (Label(".L_x_0"),)


def test_opcode_and_modifiers() -> None:
    ins = one("ISETP.GE.U32.AND P0, PT, R5, UR4, PT")
    assert ins.opcode == "ISETP" and ins.mods == ("GE", "U32", "AND")
    assert ins.operands == (Reg("P", 0), Reg("P", 7), Reg("R", 5), Reg("UR", 4), Reg("P", 7))
    assert ins.name == "ISETP.GE.U32.AND"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("R0.reuse", Reg("R", 0)),
        ("RZ", Reg("R", 255)),
        ("URZ", Reg("UR", 63)),
        ("-R3", Reg("R", 3, neg=True)),
        ("~R6", Reg("R", 6, inv=True)),
        ("!UP1", Reg("UP", 1, not_=True)),
        ("|R0|", Reg("R", 0, abs=True)),
        ("-|R2|", Reg("R", 2, neg=True, abs=True)),
        ("R2.H1", Reg("R", 2, sel=("H1",))),
        ("R5.H0_H0", Reg("R", 5, sel=("H0_H0",))),
        ("0x400", Imm("0x400", 0x400, 1024.0)),
        ("-0x800", Imm("-0x800", -0x800, -2048.0)),
        ("c[0x0][0x228]", Const(0, 0x228)),
        ("c[0x0][RZ]", Const(0, 0)),
        ("c[0x3][R2+0x10]", Const(3, 0x10, Reg("R", 2))),
        ("[R8+0x80]", Mem(Reg("R", 8), None, 0x80)),
        ("[R4+-0x800]", Mem(Reg("R", 4), None, -0x800)),
        ("[R9+URZ]", Mem(Reg("R", 9), None, 0)),
        ("[UR4]", Mem(None, Reg("UR", 4), 0)),
        ("[R2.X4+UR4+0x10]", Mem(Reg("R", 2, sel=("X4",)), Reg("UR", 4), 0x10)),
        ("desc[UR8][R8.64]", Mem(Reg("R", 8, sel=("64",)), None, 0, Reg("UR", 8))),
        ("desc[UR4][R2.64+0x4]", Mem(Reg("R", 2, sel=("64",)), None, 4, Reg("UR", 4))),
        ("`(.L_x_0)", Label(".L_x_0")),
        ("SR_TID.X", Special("SR_TID.X")),
        ("SR_CgaCtaId", Special("SR_CgaCtaId")),
    ],
)
def test_operands(text: str, expected: sass_operands.Operand) -> None:
    assert sass_operands.parse_operand(text) == expected


def test_float_immediates() -> None:
    ins = one("HFMA2.MMA R4, -RZ, RZ, 0, 5.9604644775390625e-08")
    a, b = ins.operands[3], ins.operands[4]
    assert isinstance(a, Imm) and a.float_value == 0.0
    assert isinstance(b, Imm) and b.float_value == pytest.approx(5.96e-08, rel=1e-3)
    inf = one("FSETP.GTU.FTZ.AND P0, PT, |R0|, +INF , PT").operands[3]
    assert isinstance(inf, Imm) and inf.float_value == float("inf")
    nan = one("MUFU.RSQ R2, -QNAN ").operands[1]
    assert isinstance(nan, Imm) and nan.int_value is None


def test_return_with_label_and_branch_condition() -> None:
    ret = one("RET.REL.NODEC R2 `(_Z4dynkPfi)")
    assert ret.operands == (Reg("R", 2), Label("_Z4dynkPfi"))
    bra = one("@!P1 BRA !P2, `(.L_x_9)")
    assert bra.guard == Reg("P", 1, not_=True)
    assert bra.operands == (Reg("P", 2, not_=True), Label(".L_x_9"))


def test_uniform_guard_and_braces() -> None:
    ins = one("@UP0 DEPBAR.LE SB0, 0x0, {2,1}")
    assert ins.guard == Reg("UP", 0)
    assert ins.operands[0] == Reg("SB", 0)
    assert isinstance(ins.operands[2], sass_operands.Braced)


def test_unknown_syntax_is_an_error_naming_the_text() -> None:
    with pytest.raises(sass_operands.SassSyntaxError) as err:
        one("FOO R1, %weird")
    assert "%weird" in err.value.message and "k.cu:3" in err.value.message


def test_find_function_lists_what_exists() -> None:
    fns = sass.parse(LISTING)
    with pytest.raises(sass_operands.SassSyntaxError, match="_Z4demoPfS_ii"):
        sass.find_function(fns, "nope")


@pytest.mark.parametrize(
    ("tail", "text"),
    [
        # the one regular expression a line was read with backtracked in a run of blanks
        # before a character that ends no instruction: cubic (400 blanks, 70 s), quartic
        # after an annotation (400, 55 s); and quadratic in a run of /* (40,000, 50 s)
        (" " * 400 + "x", "X" + " " * 400 + "x"),
        (' (*"aa"*)' + " " * 400 + "y", 'X (*"aa"*)' + " " * 400 + "y"),
        (" " + "/*" * 40_000 + " ;", "X " + "/*" * 40_000),
    ],
)
def test_a_listing_line_is_read_in_linear_time(tail: str, text: str) -> None:
    start = time.perf_counter()
    ins = sass.parse_line("/*0040*/ X" + tail)
    assert time.perf_counter() - start < HANG_S  # a liveness guard: the old reading took hours
    assert ins is not None and ins.pc == 0x40 and ins.opcode == "X" and ins.text == text


def test_a_listing_line_s_parts_come_off_from_the_right() -> None:
    line = '  /*00a0*/ @!P0 BRA `(.L_x_1) (*"BRANCH_TARGETS .L_x_2"*) ;   /* 0x000fc0000383 */  '
    ins = sass.parse_line(line)
    assert ins is not None and (ins.pc, ins.name) == (0xA0, "BRA")
    assert ins.text == "@!P0 BRA `(.L_x_1)" and ins.guard == Reg("P", 0, not_=True)
    assert sass.parse_head(line) == (0xA0, ins.guard, "BRA")
    for no_instruction in ("/*0000*/", "/*zz*/ NOP ;", "NOP ;", "        /* 0x000fc0000383 */"):
        assert sass.parse_line(no_instruction) is None and sass.parse_head(no_instruction) is None
