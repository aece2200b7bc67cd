"""The emulator's opcode table: which base opcodes the families in ``trace/emulator/ops/`` register.

The list below was written down before the families were split into smaller modules;
a family module that stops being loaded, or a decorator lost on the way, shows here
as a missing opcode.
"""

from __future__ import annotations

from shmem_cli.trace.emulator import decode

_OPCODES = """
    ACQBULK ARRIVES ATOM ATOMG ATOMS B2R BAR BMSK BPT BRA BREAK BREV BSSY BSYNC CALL
    CCTL CCTLL CGAERRBAR CS2R DADD DEPBAR DFMA DMNMX DMUL DSETP ELECT ENDCOLLECTIVE ERRBAR
    EXIT F2F F2FP F2I FADD FADD32I FCHK FENCE FFMA FFMA32I FLO FMNMX FMUL FMUL32I FRND FSEL
    FSET FSETP HADD2 HFMA2 HGMMA HMMA HMNMX2 HMUL2 HSETP2 I2F I2FP I2I I2IP IABS IADD IADD3
    IGMMA IMAD IMMA IMNMX IMUL ISETP JMP KILL LD LDC LDG LDGDEPBAR LDGSTS LDL LDS LDSM LEA
    LOP3 MATCH MEMBAR MOV MOV32I MUFU NANOSLEEP NOP P2R PLOP3 PMTRIG POPC PRMT QGMMA QSPC R2P
    R2UR RED REDG REDUX RET S2R S2UR SEL SGXT SHF SHFL SHL SHR ST STG STL STS STSM SYNCS
    UBLKCP UBLKPF UBLKRED UBMSK UBREV UCGABAR_ARV UCGABAR_WAIT UFLO UIABS UIADD UIADD3 UIMAD
    UIMNMX UIMUL UISETP ULDC ULEA ULOP3 UMOV UP2R UPLOP3 UPOPC UPRMT UR2P USEL USGXT USHF
    USHL USHR UTMACCTL UTMACMDFLUSH UTMALDG UTMAPF UTMAREDG UTMASTG USETMAXREG UVIADD UVIMNMX
    VIADD VIMNMX VOTE
    VOTEU WARPGROUP WARPGROUPSET WARPSYNC YIELD
"""
REGISTERED = _OPCODES.split()


def test_every_family_registers_the_same_opcodes() -> None:
    registered = set(decode.registered())
    assert sorted(registered) == sorted(REGISTERED)


def test_every_builder_lives_in_an_ops_module() -> None:
    modules = {fn.__module__ for fn in decode.registered().values()}
    assert modules and all(m.startswith("shmem_cli.trace.emulator.ops.") for m in modules), modules
