"""The cache layouts of the Triton versions PyTorch releases pin (3.0 to 3.6) and the newest
(3.9): three of the project's kernels compiled ahead of time with each
(tests/data/triton/versions/build.py), traced from their entries as a user's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_file

from .conftest import TEST_DATA
from .test_trace_triton_jit36 import MEASURED as JIT36
from .test_trace_triton_jit36 import measured, per_op

DATA = TEST_DATA / "triton" / "versions"
VERSIONS = sorted(p.name for p in DATA.iterdir() if p.is_dir())
LAUNCHES = {
    L["id"]: L
    for L in json.loads((TEST_DATA / "triton" / "jit36" / "launches.json").read_text())["launches"]
}
CASES = [
    (v, e) for v in VERSIONS for e in json.loads((DATA / v / "layout.json").read_text())["entries"]
]
PARAMS = {
    "softmax_w4": ["out_ptr", "in_ptr", "n_cols", "row_stride"],
    "layernorm": ["out_ptr", "in_ptr", "w_ptr", "b_ptr", "n_cols", "eps"],
    "matmul_f16": ["c_ptr", "a_ptr", "b_ptr", "m", "n", "k"],
}

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def test_the_versions_are_those_pytorch_pins_and_the_newest() -> None:
    assert VERSIONS == ["3.0.0", "3.1.0", "3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0", "3.9.0"]


# the oldest, 3.2 (the oldest PyTorch 2.6 on pin) and the newest version's entries in `make
# test`; those in between slow
FAST = (VERSIONS[0], "3.2.0", VERSIONS[-1])


@pytest.mark.parametrize(
    ("version", "entry"),
    [pytest.param(v, e, marks=() if v in FAST else pytest.mark.slow) for v, e in CASES],
    ids=[f"{v}-{e['id']}" for v, e in CASES],
)
def test_each_versions_entry_traces_with_only_the_grid_and_named_scalars(
    version: str, entry: dict[str, Any]
) -> None:
    L = LAUNCHES[entry["id"]]
    folder = DATA / version / entry["entry"]
    kernel = trace_file(
        TraceRequest(folder, grid=tuple(L["grid"]), args=arg_texts(L["args"]))
    ).kernels[0]
    names = [label.split("(", 1)[1].rstrip(")") for label, _ in kernel.launch.arguments]
    own = [n for n in names if n not in ("global_scratch", "profile_scratch")]
    # Triton's own pointers: none to 3.2, the global scratch from 3.3, the profile one from 3.5
    hidden = {"3.0.0": 0, "3.1.0": 0, "3.2.0": 0, "3.3.1": 1, "3.4.0": 1}.get(version, 2)
    assert len(names) - len(own) == hidden
    assert own == PARAMS[entry["id"]]
    assert kernel.launch.block == (32 * L["num_warps"], 1, 1)
    # Triton declares its shared memory extern (dynamic); the 1 KiB that sm_90 code reserves
    # at the front of the kernel's section is the driver's, also where ptxas 12.4 (3.2, 3.3)
    # writes no .nv.shared.reserved section to say so
    assert kernel.launch.static_smem == 0
    if version == "3.6.0" and (("abi7", entry["id"]) in JIT36):
        # the H200 ran the same kernel and launch compiled by Triton 3.6 (tests/data/triton/jit36)
        assert per_op(kernel) == measured("abi7", entry["id"])


@pytest.mark.parametrize("version", VERSIONS)
def test_each_versions_layout(version: str) -> None:
    layout = json.loads((DATA / version / "layout.json").read_text())
    for e in layout["entries"]:
        folder = Path(e["entry"]).name
        name = next(f[:-5] for f in e["files"] if f.endswith(".json") and not f.startswith("__"))
        # every version keeps the cubin, metadata, TTGIR and PTX, and a group file listing them
        assert {f"{name}.cubin", f"{name}.json", f"{name}.ttgir", f"{name}.ptx"} <= set(e["files"])
        assert f"__grp__{name}.json" in e["files"]
        # folder names: the hash in hex in 3.0 and 3.1, URL-safe base64 in 3.2, base32 from 3.3
        alphabet = {"3.0.0": "[0-9a-f]{64}", "3.1.0": "[0-9a-f]{64}", "3.2.0": r"[A-Za-z0-9_-]{43}"}
        assert re.fullmatch(alphabet.get(version, r"[A-Z2-7]{52}"), folder), folder
        keys = set(e["metadata_keys"])
        assert {"name", "num_warps", "shared", "target", "hash"} <= keys
        assert ("global_scratch_size" in keys) == (version >= "3.3")
        assert ("profile_scratch_size" in keys) == (version >= "3.5")
        assert ("tensordesc_meta" in keys) == (version >= "3.4")
