"""``shmem_cli.trace(memory={address: bytes | array | path})``: the values reach the launch as
they are, through the one reader of ``--memory`` (``param_block.read_memory``: range, bound and
overlap checks), with no temporary file between (docs/python.md).

The addresses and figures are worked out by hand: a device range must start at 64 KiB
(0x10000) or above and end by 2^49; two ranges overlap when one starts before the other ends.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.plumbing import fsutil
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.kernel import param_block
from shmem_cli.trace.kernel.param_block import MemoryBytes, read_memory

from .conftest import TRACE_DATA, needs_nvdisasm

BASE = 0x7F12_3400_0000
CUBIN = TRACE_DATA / "grouped" / "grouped.sm_90.cubin"


def given(address: int, data: bytes, loads: list[int] | None = None) -> MemoryBytes:
    """``data`` at ``address``; each load is counted in ``loads``."""

    def load() -> bytes:
        if loads is not None:
            loads.append(address)
        return data

    return MemoryBytes(address, len(data), load, "bytes")


def test_given_bytes_and_texts_are_read_together_in_address_order() -> None:
    got = read_memory((given(BASE + 16, b"\x07" * 4), f"{BASE:#x}=int:1,2"))
    assert [(r.address, r.data, r.source) for r in got] == [
        (BASE, struct.pack("<ii", 1, 2), "int:1,2"),
        (BASE + 16, b"\x07" * 4, "bytes"),
    ]


@pytest.mark.parametrize(
    ("ranges", "said"),
    [
        ((given(0x100, b"1234"),), "memory[0x100]: 0x100..0x104 is not device memory"),
        ((given((1 << 49) - 2, b"1234"),), "is not device memory"),
        ((given(-8, b"1234"),), "memory[-0x8]: -0x8..-0x4 is not device memory"),
        ((given(BASE, b""),), "memory[0x7f1234000000]: bytes holds no bytes"),
        (
            (f"{BASE:#x}=int:1,2,3", given(BASE + 8, b"abcd")),
            # 3 ints: 12 bytes, to BASE + 12, past BASE + 8
            "--memory 0x7f1234000000 (12 B, to 0x7f123400000c) and memory[0x7f1234000008] "
            "overlap; give each byte once",
        ),
    ],
)
def test_given_bytes_get_the_checks_of_the_option(
    ranges: tuple[str | MemoryBytes, ...], said: str
) -> None:
    with pytest.raises(ShmemError) as err:
        read_memory(ranges)
    assert said in err.value.message


def test_bounds_are_checked_before_the_bytes_are_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(param_block, "MAX_FILE_BYTES", 40)
    loads: list[int] = []
    # 24 + 24 = 48 bytes > 40: the second is refused before its bytes are loaded
    with pytest.raises(ShmemError) as err:
        read_memory((given(BASE, bytes(24), loads), given(BASE + 64, bytes(24), loads)))
    assert "memory[0x7f1234000040]: the --memory and --arg @FILE data of the launch is 48" in (
        err.value.message
    )
    assert loads == [BASE]
    with pytest.raises(ShmemError):  # 0x100 is no device address: refused, never loaded
        read_memory((given(0x100, bytes(4), loads),))
    assert loads == [BASE]


def test_too_many_ranges_are_refused_before_any_is_loaded() -> None:
    loads: list[int] = []
    ranges = [given(BASE + 8 * k, bytes(4), loads) for k in range(1025)]
    with pytest.raises(ShmemError) as err:
        read_memory(ranges)
    assert "1,025 device memory ranges are given (--memory); the most is 1024" in err.value.message
    assert loads == []


def _problems() -> bytes:
    """tests/test_trace_memory.py's three groups (M, N, K) with operand pointers."""
    groups = ((64, 1, 1280), (32, 2, 256), (64, 8, 768))
    a, b = 0x7F12_3500_0000, 0x7F12_3600_0000
    return b"".join(
        struct.pack("<iiiiQQ", m, n, k, 0, a + g * 0x10000, b + g * 0x10000)
        for g, (m, n, k) in enumerate(groups)
    )


@needs_nvdisasm
def test_the_api_passes_arrays_without_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import shmem_cli

    written: list[str] = []
    real = fsutil.write_bytes

    def spy(path: Path, data: bytes) -> None:
        written.append(Path(path).name)
        real(path, data)

    monkeypatch.setattr(fsutil, "write_bytes", spy)
    params = tmp_path / "params.bin"
    params.write_bytes(struct.pack("<Qi4xQ", BASE, 3, 0x7F12_3700_0000))
    r = shmem_cli.trace(
        CUBIN,
        block=64,
        grid=4,
        params=params,
        memory={BASE: np.frombuffer(_problems(), dtype=np.uint8)},
    )
    assert written == []  # neither the array nor anything else went through a file
    # 3 problems of 32 bytes; the report names the array, not a file
    assert r.kernel.launch.memory == ((BASE, 96, "NumPy uint8 array"),)
    # 9 tiles of 2 warps, 5 stores each (tests/test_trace_memory.py works them out)
    assert r.totals["store"].wavefronts == 90


@needs_nvdisasm
def test_the_api_refuses_a_bad_range_naming_its_key() -> None:
    import shmem_cli

    with pytest.raises(ShmemError) as err:
        shmem_cli.trace(CUBIN, block=64, memory={0x100: b"1234"})
    assert "memory[0x100]: 0x100..0x104 is not device memory" in err.value.message
    assert err.value.code == "invalid-launch"


@needs_nvdisasm
def test_bytes_given_to_the_api_are_named_by_their_keyword_not_a_deleted_file() -> None:
    """``params=``, ``args=`` and ``consts=`` bytes are handed to the launch through files in
    a folder deleted when the call returns: the result and the errors name them as the call
    gave them (``params (bytes)``, ``args['in'] (bytes)``), never that folder."""
    import shmem_cli

    host = TRACE_DATA / "frontdoor" / "host.sm_90a.cubin"
    block = (TRACE_DATA / "frontdoor" / "inputs" / "params_ld34.bin").read_bytes()
    r = shmem_cli.trace(host, kernel="params_kernel", block=(32, 32), params=block)
    assert r.kernel.launch.arguments == (("0 (p)", "from params (bytes)"),)
    with pytest.raises(ShmemError) as err:  # Params {in, out, n, ld, pad}: 32 bytes
        shmem_cli.trace(host, kernel="params_kernel", block=(32, 32), params=block[:-1])
    assert err.value.message.startswith("--params params (bytes): 31 bytes; params_kernel's ")
    view = TRACE_DATA / "fields" / "view.sm_90.cubin"  # view_reverse(View v, float *out)
    r = shmem_cli.trace(view, block=64, args={"v": [0, 0, 0], "out": bytes(256)})
    assert dict(r.kernel.launch.arguments)["1 (out)"] == "args['out'] (bytes) (256 B)"
    assert "shmem-args" not in str(r.to_json())
