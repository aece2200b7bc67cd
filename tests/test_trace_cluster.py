"""Thread-block clusters (issue 29): ``--cluster`` and ``__cluster_dims__``, every CTA of a
cluster traced together, distributed shared memory (``mapa`` and shared::cluster loads,
stores and atomics), cluster barriers and TMA multicast into each destination CTA.

The kernels are the project's own: tests/data/trace/hopper/kernels/cluster.cu (measured on
the H200: its outputs are compared byte for byte) and tests/data/trace/cluster/kernels/dsm.cu,
whose expected values are computed here from the kernels' own arithmetic.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.state import GlobalMemory, TraceError
from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.tracer import find_function, trace_kernel

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm
from .misc_open import check_misc
from .test_trace_measured import cubin

DSM = TRACE_DATA / "cluster" / "dsm.sm_90a.cubin"
N = 2048  # the dsm_* kernels' shared array, elements


def run_dsm(
    kernel: str, args: tuple[str, ...], *, block: int = 128, grid: int = 4,
    cluster: tuple[int, int, int] | None = (2, 1, 1),
) -> tuple[KernelTrace, np.ndarray]:  # fmt: skip
    """Trace a kernel of dsm.cu; (the trace, its first buffer after the run, as uint32)."""
    info, disassembly = cubin(DSM)
    k = find_kernel(info, kernel)
    plan = plan_launch(
        k, kernel_params(k, None), block=(block, 1, 1), grid=(grid, 1, 1), args=args,
        cluster=cluster,
    )  # fmt: skip
    memory = GlobalMemory()
    kt = trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    out = np.frombuffer(memory.read(plan.buffers[0].param.name or "param0"), dtype=np.uint32)
    return kt, out


def test_cluster_dims_are_read_from_the_cubin() -> None:
    info = read_cubin(DSM, use_tools=False)
    assert find_kernel(info, "cg_map").cluster_dims == (2, 1, 1)
    assert find_kernel(info, "dsm_ld32").cluster_dims is None


def test_a_cluster_is_checked_as_the_driver_checks_it() -> None:
    info = read_cubin(DSM, use_tools=False)
    k = find_kernel(info, "dsm_ld32")
    with pytest.raises(
        ShmemError, match=r"grid's x \(3\) is not a multiple of the cluster's \(2\)"
    ):
        plan_launch(k, kernel_params(k, None), block=(128, 1, 1), grid=(3, 1, 1), cluster=(2, 1, 1))
    declared = find_kernel(info, "cg_map")
    with pytest.raises(ShmemError, match=r"declares __cluster_dims__\(2, 1, 1\)"):
        plan_launch(declared, kernel_params(declared, None), block=(256, 1, 1), grid=(4, 1, 1),
                    cluster=(4, 1, 1))  # fmt: skip
    plan = plan_launch(declared, kernel_params(declared, None), block=(256, 1, 1), grid=(4, 1, 1))
    assert plan.cluster == (2, 1, 1)


def test_a_grid_of_part_clusters_is_told_the_whole_grid_to_give() -> None:
    """The default grid of 1 with a kernel's __cluster_dims__(2, 1, 1), which the user never
    typed: the refusal says where the cluster came from and the grid of whole clusters."""
    info = read_cubin(DSM, use_tools=False)
    declared = find_kernel(info, "cg_map")
    with pytest.raises(ShmemError) as caught:
        plan_launch(declared, kernel_params(declared, None), block=(256, 1, 1), grid=(1, 1, 1))
    assert caught.value.message == (
        "the grid's x (1) is not a multiple of the cluster's (2, the kernel's __cluster_dims__): "
        "CUDA launches whole clusters only; give --grid 2 (or another multiple of the cluster)"
    )
    k = find_kernel(info, "dsm_ld32")
    with pytest.raises(ShmemError, match=r"cluster's \(2\): .*; give --grid 4,3 \("):
        plan_launch(k, kernel_params(k, None), block=(128, 1, 1), grid=(3, 3, 1), cluster=(2, 1, 1))


@needs_nvdisasm
def test_dsmem_kernel_as_measured_on_the_h200() -> None:
    """cluster.cu's cluster_dsmem: every value the GPU wrote, and its local ld/st counters;
    the remote LD.E/ST.E (Nsight's dshared ld/st: 32 each) are listed."""
    kt, out = lab.run("cluster_dsmem")
    assert out[0] == lab.gpu_output("cluster_dsmem", 0)
    measured = lab.measured()["cluster_dsmem"]["per_op"]
    assert lab.per_op(kt)["load"] == (measured["ld"]["requests"], measured["ld"]["wavefronts"])
    assert lab.per_op(kt)["store"] == (measured["st"]["requests"], measured["st"]["wavefronts"])
    remote = {n.sass.split()[0]: n.executions for n in kt.not_modelled}
    assert remote == {"LD.E": measured["dshared"]["ld"], "ST.E": measured["dshared"]["st"]}


@needs_nvdisasm
def test_tma_multicast_lands_in_every_cta_of_the_cluster() -> None:
    kt, out = lab.run("cluster_multicast")
    assert out[1] == lab.gpu_output("cluster_multicast", 1)
    measured = lab.measured()["cluster_multicast"]["per_op"]
    assert lab.per_op(kt)["tma"][0] == measured["tma"]["ld"] == 1  # one copy, two CTAs filled
    assert lab.per_op(kt)["load"] == (measured["ld"]["requests"], measured["ld"]["wavefronts"])


@needs_nvdisasm
def test_map_shared_rank_reads_the_peer_cta() -> None:
    """cooperative_groups' map_shared_rank (a generic pointer into the other CTA): lane t
    of the CTA of rank r reads element (t * 33) % 256 of rank r ^ 1, which holds
    (r ^ 1) * 1000 + that index."""
    kt, out = run_dsm("cg_map", (), block=256, grid=4, cluster=None)
    t = np.arange(256)
    for b in range(4):
        peer = (b % 2) ^ 1
        assert (out[b * 256 : b * 256 + 256] == peer * 1000 + (t * 33) % 256).all()
    assert kt.launch.coverage is not None and kt.launch.coverage.mode == "whole"


@needs_nvdisasm
@pytest.mark.parametrize("cluster", [2, 4])
def test_remote_loads_read_the_cta_hop_ranks_on(cluster: int) -> None:
    _, out = run_dsm("dsm_ld32", ("1=1", "2=1"), grid=2 * cluster, cluster=(cluster, 1, 1))
    t = np.arange(128)
    for b in range(2 * cluster):
        peer = (b % cluster + 1) % cluster
        assert (out[b * 128 : b * 128 + 128] == peer * 100000 + t).all()


@needs_nvdisasm
def test_the_cluster_barrier_orders_remote_stores_before_reads() -> None:
    """dsm_st32: each lane stores t + 7 into the next CTA's s[t], the cluster syncs, and each
    CTA reads its own s[t]: only the peer's stores, made before the barrier, are there."""
    _, out = run_dsm("dsm_st32", ("1=1", "2=1"))
    assert (out[:512].reshape(4, 128) == np.arange(128) + 7).all()


@needs_nvdisasm
def test_remote_reductions_land_in_the_peer_cta() -> None:
    """dsm_red32 with stride 0: the 128 lanes of each CTA add 1 to s[0] of the next CTA."""
    _, out = run_dsm("dsm_red32", ("1=0", "2=1"))
    rows = out[:512].reshape(4, 128)
    for b in range(4):
        r = b % 2
        assert rows[b, 0] == r * 100000 + 128
        assert (rows[b, 1:] == r * 100000 + np.arange(1, 128)).all()


@pytest.mark.slow
@needs_nvdisasm
def test_cluster_option_on_the_command_line(tmp_path: Path) -> None:
    from .hostile import shmem

    zeros = tmp_path / "z.bin"
    zeros.write_bytes(bytes(4 * 128 * 4))
    ran = shmem(
        "trace", str(DSM), "-k", "dsm_ld32", "-b", "128", "-g", "4", "--cluster", "2",
        "-a", f"0=@{zeros}", "-a", "stride=1", "-a", "hop=1",
    )  # fmt: skip
    assert ran.code == 0, ran.text
    assert "LD.E R5, [R2]" in ran.text  # the remote load, listed
    alike = shmem("trace", str(DSM), "-k", "cg_map", "-b", "256", "-g", "4", "-a", f"0=@{zeros}")
    assert alike.code == 0, alike.text
    assert "every cluster behaves alike: the first cluster traced" in alike.text
    assert "each of the 2 clusters" in alike.text
    bad = shmem("trace", str(DSM), "-k", "dsm_ld32", "-b", "128", "-g", "4", "--cluster", "32")
    assert bad.code == 2 and "--cluster 32 is 32 in all; the most is 16" in bad.text


@needs_nvdisasm
@pytest.mark.parametrize(
    ("grid", "cluster", "shape"), [("4,1,4", "2,1,2", [2, 1, 2]), ("4,4", "2,2", [2, 2, 1])]
)
def test_a_cluster_across_rows_of_the_grid_is_reported(
    grid: str, cluster: str, shape: list[int]
) -> None:
    """A cluster of 2x1x2 holds blocks 0, 1, 4 and 5 of a 4x1x4 grid: its warps' numbers
    lie past the four blocks traced, where the heat map's columns ended (an IndexError).
    calls_twice stores and reads one word a lane, conflict-free: 16 blocks of one warp make
    16 requests of each, one wavefront each."""
    from click.testing import CliRunner

    from shmem_cli.cli import main

    from .hostile import CUBIN2

    args = ["trace", str(CUBIN2), "-k", "calls_twice", "-b", "32", "-g", grid]
    res = CliRunner().invoke(main, [*args, "--cluster", cluster, "--format", "json"])
    assert res.exit_code == 0, res.output
    k = json.loads(res.output)["files"][0]["kernels"][0]
    assert k["cluster"] == shape
    for op in ("load", "store"):
        assert k["totals"][op] == {"requests": 16, "wavefronts": 16, "ideal_wavefronts": 16}


HINTED_CU = r"""
#include <cstdint>
__device__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__global__ void __cluster_dims__(2, 1, 1)
hinted(const __grid_constant__ CUtensorMap tm, unsigned *out) {
  __shared__ __align__(1024) unsigned t[64 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = sa(&bar), r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(b), "r"(8192) : "memory");
  }
  asm volatile("barrier.cluster.arrive; barrier.cluster.wait;" ::: "memory");
  if (threadIdx.x == 0 && r == 0) {
    uint64_t policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5, %6;"
        ::"r"(sa(t)), "l"(&tm), "r"(0), "r"(0), "r"(b), "h"((unsigned short)3), "l"(policy)
        : "memory");
  }
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
      ::"r"(b), "r"(0) : "memory");
  for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) out[blockIdx.x * 2048 + i] = t[i] + r;
  asm volatile("barrier.cluster.arrive; barrier.cluster.wait;" ::: "memory");
}
"""


@needs_nvcc
def test_a_multicast_with_a_cache_hint_lands_in_every_cta(tmp_path: Path) -> None:
    """CUTLASS's multicast loads carry an L2 cache hint: ``UTMALDG.3D.MULTICAST [UR8],
    [UR16], UR18, desc[UR6]``; the CTA mask is the register before the hint."""
    import subprocess

    from shmem_cli.cuda import toolchain

    src = tmp_path / "hinted.cu"
    src.write_text("#include <cuda.h>\n" + HINTED_CU)
    out = tmp_path / "hinted.cubin"
    nvcc = toolchain.which("nvcc")
    assert nvcc is not None
    subprocess.run(
        [nvcc, "-cubin", "-arch=sm_90a", "-o", str(out), str(src)], check=True, capture_output=True
    )
    tensor = (np.arange(64 * 32, dtype=np.uint32) * 2654435761).astype(np.uint32)
    data = tmp_path / "tensor.bin"
    data.write_bytes(tensor.tobytes())
    info, disassembly = cubin(out)
    k = find_kernel(info, "hinted")
    assert "MULTICAST" in disassembly and "desc[" in disassembly
    plan = plan_launch(
        k, kernel_params(k, None), block=(128, 1, 1), grid=(2, 1, 1),
        args=(f"0=tensormap:dtype=u32,dims=32x64,box=32x64,data=@{data}",),
    )  # fmt: skip
    memory = GlobalMemory()
    trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    got = np.frombuffer(memory.read(plan.buffers[0].param.name or "param1"), dtype=np.uint32)
    assert got[:2048].tolist() == tensor.tolist()
    assert got[2048:4096].tolist() == (tensor + 1).tolist()


# --- the cluster lab, measured on the H200 (tests/data/trace/cluster/measured.json) -------

CLUSTER = TRACE_DATA / "cluster"
LAB = {m["id"]: m for m in json.loads((CLUSTER / "measured.json").read_text())["launches"]}
REMOTE = ("LD.E", "ST.E", "ATOM.E")  # generic instructions on the cluster's shared window
SHARED = ("LDS", "STS", "ATOMS", *REMOTE)
# lanes of several warps on one word of the peer: which store lands last, and which old
# value each atomic returns, is the order the GPU served the warps in (the emulator's is
# another valid one): their outputs are not compared, their counters are
ORDERED = {"atom32_s0_h1_c2", "atom32_s32_h1_c2", "st32_s0_h1_c2", "st32_s32_h1_c2"}


def _measured_rows(lid: str) -> dict[int, tuple[int, int]]:
    """pc -> (warp executions, shared wavefronts) of every shared instruction measured (a
    remote one only where it reached the CTA's own memory: it has wavefronts then)."""
    rows = {}
    for i in LAB[lid]["instructions"]:
        executed, wavefronts = i["Instructions Executed"], i["L1 Wavefronts Shared"]
        local = wavefronts or not i["sass"].startswith(REMOTE)
        if i["sass"].startswith(SHARED) and executed and local:
            rows[i["pc"]] = (executed, wavefronts)
    return rows


# the launches whose op_misc the rule misses: (the rule's, the H200's)
MISC_OPEN = {"mc_tile_c2": (56, 55), "mc_tile_c4": (112, 108), "differ_4096": (36864, 36802)}


@needs_nvdisasm
@pytest.mark.parametrize(
    "lid",
    [pytest.param(k, marks=pytest.mark.slow) if k == "differ_4096" else k for k in sorted(LAB)],
)
def test_cluster_lab_as_measured(lid: str) -> None:
    """Every value each launch wrote; every shared instruction's executions and wavefronts
    (a shared::cluster access to the CTA's own memory is an ordinary shared access, bank
    conflicts and all); the remote ones listed with Nsight's dshared instruction counts."""
    kt, out = lab.run(lid, CLUSTER)
    for i, data in out.items():
        if lid in ORDERED:
            continue
        assert data == (CLUSTER / "outputs" / f"{lid}.arg{i}.bin").read_bytes(), i
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts)
        for a in kt.accesses
        if a.cost.requests + a.predicated_off and a.sass.startswith(SHARED)
    }
    assert got == _measured_rows(lid)
    c = LAB[lid]["counters"]
    dshared = sum(
        c.get(f"smsp__sass_inst_executed_op_dshared_{op}") or 0 for op in ("ld", "st", "atom")
    )
    assert sum(n.executions for n in kt.not_modelled if n.sass.startswith(REMOTE)) == dshared
    # the sectors the remote accesses moved over the crossbar (docs/hardware-model.md, 9d)
    sectors = c.get("l1tex__m_xbar2l1tex_read_sectors_mem_dshared") or 0
    assert sum(n.dsmem_sectors or 0 for n in kt.not_modelled) == sectors
    # the remote atomics' own op_atom wavefronts: Nsight's op_atom less the local atomics'
    atom = (c.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom") or 0) - kt.totals[
        "atomic"
    ].wavefronts
    # op_misc (hardware-model 9e): exact but where CTA-scope memory barriers run by several
    # warps together count fewer than the rule's 1 a warp (the multicast's
    # fence.proxy.async.shared::cta) or the launch fills the GPU: (rule, measured)
    misc = c.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc") or 0
    check_misc(lid, kt.misc.wavefronts, misc, MISC_OPEN)
    # and summed in the totals, as the JSON writes them
    assert kt.to_json()["totals"]["dsmem"] == {
        "requests": dshared, "wavefronts": atom, "ideal_wavefronts": atom, "sectors": sectors
    }  # fmt: skip


@pytest.mark.slow
@needs_nvdisasm
def test_the_dsmem_totals_in_the_report() -> None:
    """ld32_s1_h1_c2 from the command line: the per-op table's dsmem row and the JSON totals
    hold Nsight's dshared requests and crossbar sectors of that launch."""
    from .hostile import shmem

    c = LAB["ld32_s1_h1_c2"]["counters"]
    requests = c["smsp__sass_inst_executed_op_dshared_ld"]
    sectors = c["l1tex__m_xbar2l1tex_read_sectors_mem_dshared"]
    launch = [
        "trace", str(DSM), "-k", "dsm_ld32", "-b", "128", "-g", "4", "--cluster", "2",
        "-a", "stride=1", "-a", "hop=1", "--no-tables",
    ]  # fmt: skip
    text = shmem(*launch)
    assert text.code == 0, text.text
    row = next(line.split() for line in text.text.splitlines() if line.startswith("dsmem "))
    assert row == ["dsmem", str(requests), "0", "0", "0", str(sectors)]
    js = shmem(*launch, "--format", "json")
    totals = json.loads(js.text)["files"][0]["kernels"][0]["totals"]
    assert totals["dsmem"] == {
        "requests": requests, "wavefronts": 0, "ideal_wavefronts": 0, "sectors": sectors
    }  # fmt: skip
    assert totals["load"]["requests"] == 0  # the remote loads are not LSU shared loads


@needs_nvdisasm
def test_a_multicast_past_the_cluster_says_to_give_the_cluster() -> None:
    # cluster_multicast traced without the 2-CTA cluster it was launched with (a CUTLASS
    # 3.x GEMM of ClusterShape 2x1 traced without --cluster): its mask 0b11 names rank 1,
    # which a cluster of one CTA lacks. The copy landed in its own CTA alone and the launch
    # ended in a deadlock on the mbarrier that waits for both halves' bytes; it is said so
    with pytest.raises(TraceError) as err:
        lab.run("cluster_multicast", cluster=[1, 1, 1])
    said = str(err.value)
    assert "a TMA multicast to the CTAs of mask 0x3, in a cluster of 1 CTA(s)" in said
    assert "trace with the cluster the launch had (--cluster X[,Y[,Z]]" in said
