"""A TMA load through a tensor map inside a struct passed by value, as CuTe's TMA copy atoms
hold theirs (tests/data/trace/mapstruct/kernels/atom_copy.cu): traced without the map, the
note says which parameter can hold it and how to give it; given at +0, the copy moves data."""

from __future__ import annotations

import json

from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "mapstruct" / "atom_copy.sm_90a.cubin"
LAUNCH = ["trace", str(CUBIN), "--block", "1024", "--grid", "4", "--no-tables"]
MAP = "atom+0=tensormap:dtype=f32,dims=32x128,box=32x32"


@needs_nvdisasm
def test_a_map_not_given_inside_a_struct_is_named_in_a_note() -> None:
    res = CliRunner().invoke(main, LAUNCH)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    # one copy a block, 4 blocks: each went through the atom's 128 zero bytes
    assert "UTMALDG.2D [UR4], [UR8] 4" in text  # not modelled, 4 executions
    assert (
        "4 TMA instruction execution(s) (not modelled, above) went through a tensor map of "
        "zero bytes and moved no data; parameter(s) 0 (atom), not given (0), can hold one"
    ) in text
    assert "KEY+OFFSET=tensormap:..." in text and "map at +0" in text
    res = CliRunner().invoke(main, [*LAUNCH, "--format", "json"])
    (kernel,) = json.loads(res.output)["files"][0]["kernels"]
    assert "parameter(s) 0 (atom)" in kernel["tensor_map_note"]


@needs_nvdisasm
def test_the_map_given_at_its_offset_moves_the_tile() -> None:
    res = CliRunner().invoke(main, [*LAUNCH, "--arg", MAP, "--format", "json"])
    assert res.exit_code == 0, res.output
    (kernel,) = json.loads(res.output)["files"][0]["kernels"]
    assert kernel["tensor_map_note"] is None
    assert kernel["not_modelled"] == []
    totals = kernel["totals"]
    assert totals["tma"]["requests"] == 4  # one copy a block
    # the column read: the 32 lanes of a warp read one column of 32 floats, one bank: 32
    # wavefronts a request, 32 warps a block, 4 blocks
    assert totals["load"]["requests"] == 128 and totals["load"]["wavefronts"] == 4096
