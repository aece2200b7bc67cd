"""docs/examples/tensormap_standin.h (recipes.md, "Without a GPU") encodes tensor maps as the
driver did on the H200: its 128 bytes are compared with the maps the driver encoded there
(tests/data/trace/hopper/outputs/enc_*.bin), parameters varied one at a time."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from . import hopper_lab as lab

ROOT = Path(__file__).resolve().parent.parent
GXX = shutil.which("g++") or shutil.which("c++")


def _cuda_include() -> Path | None:
    """The CUDA toolkit's include folder (the one holding cuda.h), if installed."""
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        roots.append(str(Path(nvcc).resolve().parent.parent))
    for root in roots:
        if root and (Path(root) / "include" / "cuda.h").is_file():
            return Path(root) / "include"
    return None


CUDA_INCLUDE = _cuda_include()
pytestmark = pytest.mark.skipif(
    GXX is None or CUDA_INCLUDE is None,
    reason="needs a C++ compiler and the CUDA toolkit's cuda.h",
)
# CUtensorMapDataType numbers (cuda.h)
DTYPE = {
    n: i
    for i, n in enumerate(
        [
            "UINT8",
            "UINT16",
            "UINT32",
            "INT32",
            "UINT64",
            "INT64",
            "FLOAT16",
            "FLOAT32",
            "FLOAT64",
            "BFLOAT16",
            "FLOAT32_FTZ",
            "TFLOAT32",
            "TFLOAT32_FTZ",
        ]
    )
}


@pytest.fixture(scope="module")
def standin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    exe = tmp_path_factory.mktemp("standin") / "standin_check"
    subprocess.run(
        [
            str(GXX),
            "-std=c++17",
            "-Wall",
            "-Werror",
            f"-I{ROOT / 'docs' / 'examples'}",
            f"-I{CUDA_INCLUDE}",
            "-o",
            str(exe),
            str(ROOT / "tests" / "data" / "recipes" / "standin_check.cpp"),
        ],
        check=True,
    )
    return exe


def _encode(exe: Path, lines: list[str]) -> list[bytes]:
    out = subprocess.run(
        [str(exe)], input=("\n".join(lines) + "\n").encode(), capture_output=True, check=True
    ).stdout
    assert len(out) == 128 * len(lines)
    return [out[i : i + 128] for i in range(0, len(out), 128)]


def _line(e: dict[str, object], address: int) -> str:
    dims, strides, box, elem = (e[k] for k in ("dims", "strides", "box", "elem"))
    assert isinstance(dims, list) and isinstance(strides, list)
    assert isinstance(box, list) and isinstance(elem, list)
    fields = [DTYPE[str(e["dtype"])], len(dims), address, *dims, *strides, *box, *elem]
    return " ".join(str(v) for v in [*fields, e["swizzle"], e["l2"], e["oob"]])


def test_the_standin_encodes_each_map_as_the_driver_did_on_the_h200(standin: Path) -> None:
    base = int((lab.HOPPER / "outputs" / "enc_base.txt").read_text())
    cases = [
        e
        for e in lab.manifest()["encodings"]
        if (lab.HOPPER / "outputs" / f"enc_{e['id']}.bin").exists()  # interleaved: refused
    ]
    assert len(cases) >= 30
    got = _encode(standin, [_line(e, base) for e in cases])
    for e, raw in zip(cases, got, strict=True):
        assert raw == (lab.HOPPER / "outputs" / f"enc_{e['id']}.bin").read_bytes(), e["id"]


def test_the_standin_refuses_what_it_cannot_encode(standin: Path) -> None:
    lines = [
        "7 2 4096 64 128 256 32 64 1 1 0 0 0",  # a good float32 map
        "7 3 4096 64 128 1 256 0 32 64 1 1 1 1 0 0 0",  # a batch of one, stride 0 (CUTLASS)
        "7 2 4096 64 128 250 32 64 1 1 0 0 0",  # stride not a multiple of 16
        "7 2 4096 64 128 256 32 300 1 1 0 0 0",  # box above 256
        "7 3 4096 64 128 2 256 0 32 64 1 1 1 1 0 0 0",  # stride 0 for a dimension of 2
        "7 2 4096 64 128 256 32 64 1 1 4 0 0",  # a 128B_ATOM swizzle: not decoded
        "13 2 4096 64 128 256 32 64 1 1 0 0 0",  # a packed 4-bit type
    ]
    good, batch, *refused = _encode(standin, lines)
    assert good[:8] == (4096).to_bytes(8, "little")
    # words 3 and 4: the strides in 16-byte units
    assert batch[12:16] == (256 >> 4).to_bytes(4, "little") and batch[16:20] == bytes(4)
    assert all(r == b"\xff" * 128 for r in refused)
