"""``--arg`` for a by-value vector of floats, end to end: tests/data/trace/vectors/
vector_args.cu stores with strides of its float2's and __half2's y components, so the bank
conflicts the trace finds say what the kernel read. Before, ``v=1.5,4`` stored 4 as an
integer's bits (4-byte fields of no type: 5.6e-45, stride 0), and ``v=4`` filled the float2's
8 bytes as one double."""

from __future__ import annotations

from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = str(TRACE_DATA / "vectors" / "vector_args.sm_90.cubin")


@needs_nvdisasm
def test_each_component_is_read_as_a_float() -> None:
    # lanes (int)y words apart: a gcd(y, 32)-way conflict on 32 banks
    for v, h, ways in (("1.5,4", "0.5,8", [4, 8]), ("1,2", "1,32", [2, 32])):
        result = shmem_cli.trace(CUBIN, block=(32, 1, 1), args={"v": v, "h": h})
        stores = [a for a in result.accesses if a.cost.op == "store"]
        assert [a.cost.max_ways for a in stores] == ways


@needs_nvdisasm
def test_one_number_for_a_float2_is_refused_with_its_form() -> None:
    res = CliRunner().invoke(main, ["trace", CUBIN, "-b", "32", "--arg", "v=4"])
    assert res.exit_code == 2
    said = " ".join(res.output.split())
    assert "--arg 0 (v) is a float2: give its 2 component(s) as X,Y (each a float" in said
    assert "Traceback" not in said
