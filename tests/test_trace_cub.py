"""CUB's block primitives in kernels of our own (tests/data/trace/cub: BlockRadixSort of 32- and
64-bit keys, BlockScan, BlockLoad/BlockStore through shared memory, BlockHistogram by shared
atomics, BlockReduce, BlockMergeSort, BlockExchange of doubles, BlockDiscontinuity), each on
4 blocks of data-dependent input: the trace's per-op requests and wavefronts against Nsight
Compute's two runs of the same launches on the same bytes. Skipped until the lab is measured
(its README says how)."""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

LAB = TRACE_DATA / "cub"
CUBIN = LAB / "kernels.sm_90.cubin"
MEASURED = LAB / "measured.json"
#: lab/main.cu's launches, in order: (input, kernel, block); 4 blocks each
LAUNCHES = [
    ("radix", "radix", 128),
    ("radix_ties", "radix", 128),
    ("scan", "scan", 256),
    ("load", "load_transpose", 128),
    ("hist", "hist", 128),
    ("hist_skew", "hist", 128),
    ("reduce", "reduce", 256),
    ("radix64", "radix64", 128),
    ("merge", "merge_sort", 128),
    ("exchange", "exchange", 128),
    ("run_length", "run_length", 128),
]
#: Nsight Compute's per-op counters, each as the trace's (op, figure)
COUNTERS = {
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": ("load", "wavefronts"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": ("store", "wavefronts"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum": ("atomic", "wavefronts"),
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum": ("misc", "wavefronts"),
    "smsp__sass_inst_executed_op_shared_ld.sum": ("load", "requests"),
    "smsp__sass_inst_executed_op_shared_st.sum": ("store", "requests"),
    "smsp__sass_inst_executed_op_shared_atom.sum": ("atomic", "requests"),
}


def test_the_committed_inputs_are_the_labs_sequence() -> None:
    spec = importlib.util.spec_from_file_location("cub_inputs", LAB / "lab" / "inputs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = module.inputs()
    assert sorted(made) == sorted(name for name, _, _ in LAUNCHES)
    for name, data in made.items():
        assert (LAB / "inputs" / f"{name}_in.bin").read_bytes() == data.tobytes(), name


@needs_nvdisasm
@pytest.mark.slow
@pytest.mark.skipif(not MEASURED.exists(), reason="the lab is not measured yet")
@pytest.mark.parametrize("i", range(len(LAUNCHES)), ids=[name for name, _, _ in LAUNCHES])
def test_per_op_counts_as_the_gpu_counted_twice(i: int) -> None:
    name, kernel, block = LAUNCHES[i]
    data = LAB / "inputs" / f"{name}_in.bin"
    args = ["trace", str(CUBIN), "-k", kernel, "-b", str(block), "-g", "4", "-a", f"0=@{data}"]
    res = CliRunner().invoke(main, [*args, "-f", "json"])
    assert res.exit_code == 0, res.output
    totals: dict[str, Any] = json.loads(res.output)["files"][0]["kernels"][0]["totals"]
    runs = json.loads(MEASURED.read_text())["runs"]
    assert len(runs) == 2 and all(len(r) == len(LAUNCHES) for r in runs)
    for metric, (op, figure) in COUNTERS.items():
        got = totals[op][figure]
        assert (got, runs[0][i][metric], runs[1][i][metric]) == (got, got, got), metric
