"""Write launches.json: the cluster lab's launches (kernels/dsm.cu, dsm.sm_90a.cubin).

Each dsm_* launch: 128 threads (4 warps) per CTA, two clusters; lane t of every warp makes one
remote access at element (t * stride) % N of the CTA ``hop`` ranks further on in its cluster.
Usage: python3 make_launches.py > launches.json
"""

import json

CUBIN = "dsm.sm_90a.cubin"
launches = []


def dsm(kernel, stride, hop=1, cluster=2):
    lid = f"{kernel.removeprefix('dsm_')}_s{stride}_h{hop}_c{cluster}"
    launches.append(
        {
            "id": lid,
            "cubin": CUBIN,
            "kernel": kernel,
            "block": [128, 1, 1],
            "grid": [2 * cluster, 1, 1],
            "cluster": [cluster, 1, 1],
            "dynamic_smem": 0,
            "args": [{"zeros": 4 * 128 * 2 * cluster}, {"int": stride}, {"int": hop}],
            "dumps": [0],
        }
    )


for s in (1, 2, 4, 32, 33, 0):
    dsm("dsm_ld32", s)
dsm("dsm_ld32", 1, hop=0)
dsm("dsm_ld32", 32, hop=0)
dsm("dsm_ld32", 1, cluster=4)
dsm("dsm_ld32", 32, hop=3, cluster=4)
for s in (1, 2, 32, 0):
    dsm("dsm_st32", s)
dsm("dsm_st32", 1, hop=0)
for s in (1, 2, 16, 0):
    dsm("dsm_ld64", s)
for s in (1, 2, 8, 0):
    dsm("dsm_ld128", s)
for s in (1, 32, 0):
    dsm("dsm_atom32", s)
for s in (1, 0):
    dsm("dsm_red32", s)
launches.append(
    {
        "id": "cg_map",
        "cubin": CUBIN,
        "kernel": "cg_map",
        "block": [256, 1, 1],
        "grid": [4, 1, 1],
        "cluster": [1, 1, 1],  # __cluster_dims__(2, 1, 1) in the kernel
        "dynamic_smem": 0,
        "args": [{"zeros": 4 * 256 * 4}],
        "dumps": [0],
    }
)
for c in (2, 4):
    launches.append(
        {
            "id": f"mc_tile_c{c}",
            "cubin": CUBIN,
            "kernel": "mc_tile",
            "block": [128, 1, 1],
            "grid": [c, 1, 1],
            "cluster": [c, 1, 1],
            "dynamic_smem": 0,
            "args": [
                {
                    "tensormap": {
                        "buffer": {"file": "inputs/tma_in.bin"},
                        "dtype": "UINT32",
                        "dims": [64, 128],
                        "strides": [256],
                        "box": [32, 64],
                        "elem_strides": [1, 1],
                        "interleave": 0,
                        "swizzle": 0,
                        "l2": 0,
                        "oob": 0,
                        "dump": False,
                    }
                },
                {"zeros": 4 * 2048 * c},
            ],
            "dumps": [1],
        }
    )
# issue 30's differing blocks (kernels/differ.cu): block b loops b % 32 + 1 times
for blocks in (32, 4096):
    launches.append(
        {
            "id": f"differ_{blocks}",
            "cubin": "differ.sm_90.cubin",
            "kernel": "differ",
            "block": [256, 1, 1],
            "grid": [blocks, 1, 1],
            "cluster": [1, 1, 1],
            "dynamic_smem": 0,
            "args": [
                {"zeros": 4 * 256 * blocks},
                {"zeros": 4 * 256 * blocks},
                {"int": 256 * blocks},
            ],
            "dumps": [],
        }
    )
print(json.dumps({"launches": launches}, indent=1))
