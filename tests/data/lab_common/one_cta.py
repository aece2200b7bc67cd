"""A launch of one CTA as the labs' launches.json lists them (the Hopper lab's harness reads
it: ../trace/hopper/lab/gen_main.py), and the list written out: the op_misc labs'
make_launches.py build theirs with these."""

import json


def launch(lid, cubin, kernel, block, args):
    """Launch ``lid``: ``kernel`` of ``cubin`` on one CTA of ``block`` threads (x, y, z)."""
    return {
        "id": lid,
        "cubin": cubin,
        "kernel": kernel,
        "block": list(block),
        "grid": [1, 1, 1],
        "cluster": [1, 1, 1],
        "dynamic_smem": 0,
        "args": args,
    }


def write(launches):
    """The list as launches.json holds it, on standard output."""
    print(json.dumps({"launches": launches}, indent=1))
