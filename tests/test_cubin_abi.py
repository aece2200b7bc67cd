"""The SM of a cubin in both ELF layouts (ABI version 7 and 8), sm_90 and sm_90a.

The expected targets are what cuobjdump 13.5 printed for each file (tests/data/cubin_abi).
"""

from __future__ import annotations

import pytest

from shmem_cli.trace.kernel.binary_formats.elf_arch import cubin_arch
from shmem_cli.trace.kernel.cubin import read_cubin

from .conftest import TEST_DATA

DATA = TEST_DATA / "cubin_abi"

CUOBJDUMP = {
    "abi7_ptxas12.4_sm_80.cubin": ("sm_80", "sm_80"),
    "abi7_ptxas12.4_sm_90.cubin": ("sm_90", "sm_90"),
    "abi7_ptxas12.4_sm_90a.cubin": ("sm_90", "sm_90a"),
    "abi7_ptxas12.8_sm_90a.cubin": ("sm_90", "sm_90a"),
    "abi8_ptxas13.0_sm_90.cubin": ("sm_90", "sm_90"),
    "abi8_ptxas13.0_sm_90a.cubin": ("sm_90", "sm_90a"),
    "abi8_ptxas13.0_sm_100a.cubin": ("sm_100", "sm_100a"),
}


@pytest.mark.parametrize("name", sorted(CUOBJDUMP))
def test_each_layout_reads_as_cuobjdump_reads_it(name: str) -> None:
    info = read_cubin(DATA / name, use_tools=False)
    assert (info.arch, info.target_name) == CUOBJDUMP[name]
    assert [k.name for k in info.kernels] == ["k"]


def test_the_fields_of_each_layout() -> None:
    # ABI 7: SM in bits 0-7, 'a' in bit 11; bits 8-15 are flags (0x05, 0x0d), not an SM
    assert cubin_arch(7, 0x5A0D5A, None).name == "sm_90a"
    assert cubin_arch(7, 0x5A055A, None).name == "sm_90"
    # ABI 8: SM in bits 8-15, 'a' in bit 3 (LLVM's EF_CUDA_ACCELERATORS) or in .nv.compat
    assert cubin_arch(8, 0x9005A04, None).name == "sm_90"
    assert cubin_arch(8, 0x6005A0C, None).name == "sm_90a"
    compat_a = bytes([2, 9, 1, 0, 2, 2, 1, 0])  # EIFMT_BVAL records: accelerator target = 1
    assert cubin_arch(8, 0x6005A04, compat_a).name == "sm_90a"
    assert cubin_arch(8, 0x6005A04, bytes([2, 9, 0, 0])).name == "sm_90"


def test_an_abi7_triton_entry_is_no_longer_refused_as_sm_13() -> None:
    # Triton 3.6's own ptxas (12.8) writes ABI 7 (e_flags 0x5a0d5a): its metadata says 90
    entry = next((TEST_DATA / "triton" / "jit36" / "cache_abi7").glob("*/softmax_rows.cubin"))
    info = read_cubin(entry, use_tools=False)
    assert (info.arch, info.target_name) == ("sm_90", "sm_90a")


def test_a_sm_100_cubin_s_mercury_copies_of_its_sections_are_read() -> None:
    # ptxas 13 writes, for sm_100 on, a .nv.merc.* section over the very bytes of another
    # (readelf -S: .nv.merc.nv.constant.user at 0xd38, 0x40 bytes, as .nv.constant3; and
    # .nv.merc.nv_debug_ptx_txt as .nv_debug_ptx_txt): a kernel with a __constant__ table or
    # built with -lineinfo was refused as "sections ... overlap"
    info = read_cubin(DATA / "merc_ptxas13.0_sm_100.cubin", use_tools=False)
    assert (info.arch, info.target_name) == ("sm_100", "sm_100")
    assert [k.name for k in info.kernels] == ["table"]
