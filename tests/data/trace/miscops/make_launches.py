"""Write launches.json: issue 29's op_misc lab (kernels/miscops.cu, miscops.sm_90a.cubin).

Every kernel takes (out, lanes): lanes 0..lanes-1 of every warp run the operation. Plain and
mbarrier kernels run as one CTA (one launch of two CTAs too, for what a CTA adds), cluster
kernels as one cluster of 2 CTAs (the scaffold also as a cluster of 1 and of 4). Each kernel
with 1 and 4 warps, 1 and 32 lanes; the scaffolds with 2 and 8 warps too.
Usage: python3 make_launches.py > launches.json
"""

import json

CUBIN = "miscops.sm_90a.cubin"
PLAIN = [
    "p_base",
    "p_bar",
    "p_sts",
    "p_lds",
    "p_sts64_conf",
    "p_sts16_conf",
    "p_membar_cta",
    "p_membar_gl",
    "p_fence_sc_cta",
    "p_fence_acqrel_cluster",
    "p_fence_proxy_async_cta",
    "p_fence_proxy_async",
    "p_fence_mbinit",
    "p_elect",
]
MBAR = [
    "m_base",
    "m_init",
    "m_arrive",
    "m_arrive_count",
    "m_arrive_nostate",
    "m_arrive_tx",
    "m_expect_tx",
    "m_complete_tx",
    "m_arrive_drop",
    "m_test_wait",
    "m_try_wait",
    "m_try_wait_open",
    "m_inval",
    "m_atoms_add",
]
CLUSTER = [
    "c_base",
    "c_sync_more",
    "c_sync_relaxed",
    "c_remote_arrive",
    "c_own_arrive",
    "c_remote_arrive_tx",
    "c_atom32",
    "c_red32",
    "c_atom64",
    "c_cas32",
    "c_cas64",
    "c_atom32_word",
    "c_ld32",
]
launches = []


def add(kernel, warps, lanes, grid=1, cluster=1):
    lid = f"{kernel}_w{warps}_l{lanes}" + (f"_g{grid}" if grid != cluster and grid != 1 else "")
    if cluster != 1:
        lid += f"_c{cluster}"
    launches.append(
        {
            "id": lid,
            "cubin": CUBIN,
            "kernel": kernel,
            "block": [32 * warps, 1, 1],
            "grid": [grid, 1, 1],
            "cluster": [cluster, 1, 1],
            "dynamic_smem": 0,
            "args": [{"zeros": 4096}, {"int": lanes}],
        }
    )


for group, cl in ((PLAIN, 1), (MBAR, 1), (CLUSTER, 2)):
    for k in group:
        for w in (1, 4):
            for lanes in (1, 32):
                add(k, w, lanes, grid=cl, cluster=cl)
for k in ("p_base", "p_bar", "m_base"):
    for w in (2, 8):
        add(k, w, 32)
for k in ("p_sts_conf", "p_sts64", "p_lds64_conf", "p_lds16_conf", "p_ldsm_x4"):
    for w in (1, 4):
        add(k, w, 32)
add("p_base", 4, 32, grid=2)
add("p_bar", 4, 32, grid=2)
add("m_arrive", 2, 32)
add("m_arrive", 8, 32)
add("m_arrive", 4, 16)
add("c_base", 2, 32, grid=2, cluster=2)
add("c_base", 4, 32, grid=1, cluster=1)
add("c_base", 1, 32, grid=4, cluster=4)
add("c_base", 4, 32, grid=4, cluster=4)
add("c_remote_arrive", 2, 32, grid=2, cluster=2)
print(json.dumps({"launches": launches}, indent=1))
