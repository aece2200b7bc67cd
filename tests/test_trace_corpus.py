"""What real-world kernels launched as their authors launch them ran into (issues 29 and 30),
each on a kernel of the project's own (tests/data/trace/corpus/kernels/empty_params.cu).

* CuTe kernels, llm.c's bias kernel and FlashAttention-2 take empty classes by value
  (``std::integral_constant``, static shapes, layouts, copy atoms): one byte of the parameter
  block that no instruction reads. The report said they "were not given and are 0", as if
  the user had forgotten them; only parameters the code reads are named now.
* FlashAttention-2 launches ``flash_bwd_convert_dq_kernel(params, nsplits)``: the host
  program dumps ``sizeof(Params)``, 4 bytes short of the block, and ``--params`` refused it.
  A file that ends where a parameter ends now gives the leading parameters, ``--arg`` the
  rest (and one not given is named).
* CuTe's sgemm_2 tutorial at its own sizes ran past the default instruction budget (131,072
  a thread): it is 524,288 now.
* A real run's pointers (``--params``) lie at 0x7fxx_xxxx_xxxx on an x86-64 host, lower as the
  process allocates more: shmem placed its own buffers from 0x7f0000000000, so such a
  pointer was refused as "outside every buffer", or read the made-up buffer it fell into.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "corpus" / "empty_params.sm_90.cubin"


def _trace(*args: str) -> tuple[int, Any]:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-f", "json", *args])
    return res.exit_code, json.loads(res.output) if res.exit_code == 0 else res.output


@needs_nvdisasm
def test_empty_classes_are_not_named_as_forgotten() -> None:
    code, out = _trace("-k", "empty_params", "-b", "64")
    assert code == 0, out
    kernel = out["files"][0]["kernels"][0]
    # Tag and std::integral_constant are one empty byte each; negate (a bool the code
    # reads), n and unused_scale (4 bytes: always named) are values the user may owe
    assert kernel["defaulted_arguments"] == ["3 (negate)", "4 (n)", "5 (unused_scale)"]


@needs_nvdisasm
def test_empty_classes_in_the_text_note() -> None:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-k", "empty_params", "-b", "64"])
    assert res.exit_code == 0, res.output
    assert "parameter(s) 3 (negate), 4 (n), 5 (unused_scale) were not given" in res.output


@needs_nvdisasm
def test_a_real_run_s_pointer_at_0x7f00_is_device_memory(tmp_path: Path) -> None:
    """out = 0x7f0000000000 (what a host process can have) in --params, in from a file: the
    kernel stores 2 * in[63 - i] to out[i] through untouched device memory."""
    params = tmp_path / "params.bin"
    params.write_bytes(struct.pack("<QQ", 0x7F00_0000_0000, 0))
    data = tmp_path / "in.bin"
    np.arange(64, dtype=np.float32).tofile(data)
    code, out = _trace(
        "-k", "through_params", "-b", "64", "--params", f"@{params}", "--arg", f"in=@{data}"
    )
    assert code == 0, out
    kernel = out["files"][0]["kernels"][0]
    # the stores land in untouched device memory at out (one 64 KiB step), nothing read there
    assert kernel["undescribed_memory"]["regions"] == ["0x7f0000000000 (64 KiB)"]
    assert kernel["undescribed_memory"]["unwritten_reads"] == 0
    # in, the made-up buffer, lies above every host address: its 64 floats fill the tile by
    # lanes (one wavefront a warp) and are read back reversed (one wavefront a warp)
    assert [(a["sass"][:3], a["wavefronts"]) for a in kernel["accesses"]] == [
        ("STS", 2),
        ("LDS", 2),
    ]


def _params_file(tmp_path: Path) -> Path:
    """struct Params {float *out; const float *in; int n;}: 24 bytes, as fwrite dumps it."""
    path = tmp_path / "params.bin"
    path.write_bytes(struct.pack("<QQi4x", 0x7F5C_0000_0000, 0x7F5C_1000_0000, 64))
    return path


@needs_nvdisasm
def test_a_struct_dumped_alone_then_the_count_by_arg(tmp_path: Path) -> None:
    """params_then_count(p, 2) with 64 threads: each warp stores tile[4 * i + s] and reads it
    back for s = 0, 1: 32 lanes, word stride 4, land on 8 banks, 4 words each: 4 wavefronts
    a request, 2 requests a warp per instruction, 2 warps (worked from the source)."""
    args = ["-k", "params_then_count", "-b", "64", "--params", f"@{_params_file(tmp_path)}"]
    code, out = _trace(*args, "--arg", "nsplits=2")
    assert code == 0, out
    kernel = out["files"][0]["kernels"][0]
    assert kernel["arguments"]["1 (nsplits)"] == "2"
    assert [
        (a["op"], a["requests"], a["wavefronts"], a["max_ways"]) for a in kernel["accesses"]
    ] == [
        ("store", 4, 16, 4),
        ("load", 4, 16, 4),
    ]


@needs_nvdisasm
def test_the_parameters_past_the_file_are_owed(tmp_path: Path) -> None:
    args = ["-k", "params_then_count", "-b", "64", "--params", f"@{_params_file(tmp_path)}"]
    code, out = _trace(*args)
    assert code == 2
    said = "ends at byte 24 of the parameter block; give the parameter(s) after it with --arg: "
    assert said + "1 (nsplits)" in out and "Traceback" not in out


@needs_nvdisasm
def test_a_file_ending_inside_a_parameter_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.bin"
    path.write_bytes(bytes(20))  # ends inside Params
    code, out = _trace("-k", "params_then_count", "-b", "64", "--params", f"@{path}")
    assert code == 2
    assert "20 bytes; params_then_count's parameter block is 28 bytes" in out


@needs_nvdisasm
@pytest.mark.slow  # about 250,000 instructions a thread: 20 s
def test_a_long_main_loop_runs_to_its_end_by_default() -> None:
    """CuTe's sgemm_2 tutorial at its own sizes runs 351,000 instructions a thread, past the
    old default budget (131,072): long_loop(out, 40000) runs about 250,000 with the defaults.
    From the source: one store of 0, a load and a store per iteration, a last load."""
    code, out = _trace("-k", "long_loop", "-b", "32", "--arg", "n=40000")
    assert code == 0, out
    kernel = out["files"][0]["kernels"][0]
    assert kernel["instructions_executed"] > 32 * 131_072
    for op in ("load", "store"):
        rows = [a for a in kernel["accesses"] if a["op"] == op]
        assert sum(a["requests"] for a in rows) == 40_001
        assert sum(a["wavefronts"] for a in rows) == 40_001


@needs_nvdisasm
def test_list_params_in_json(tmp_path: Path) -> None:
    """--list-params --format json printed the text table: a script building a --params
    block needs each parameter's offset and size (Params: 24 bytes, nsplits at 24)."""
    out = tmp_path / "params.json"
    res = CliRunner().invoke(
        main,
        ["trace", str(CUBIN), "-k", "params_then_count", "--list-params", "-f", "json"]
        + ["-o", str(out)],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1
    [kernel] = doc["kernels"]
    assert (kernel["name"], kernel["param_bytes"], kernel["param_base"]) == (
        "params_then_count",
        28,
        0x210,
    )
    assert kernel["params"] == [
        {"position": 0, "name": "p", "type": "Params", "offset": 0, "size": 24},
        {"position": 1, "name": "nsplits", "type": "int", "offset": 24, "size": 4},
    ]
