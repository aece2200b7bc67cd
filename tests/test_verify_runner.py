"""The local pipeline of ``shmem verify`` (build, SASS dump, profile, compare) with stand-in tools.

The stand-ins check the arguments the real tools would get and answer like them:
``nvidia-smi`` names an H200, ``nvcc`` writes a binary, ``cuobjdump`` lists each
kernel with its intended instruction, ``ncu`` prints counters in its CSV layout.
They answer from manifest.json, so they test the plumbing, not the hardware.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import ROOT

SPEC = str(ROOT / "access_specs" / "float4_tiles.yaml")

NVIDIA_SMI = """
import sys
if "--query-gpu=name,compute_cap,driver_version" in sys.argv:
    print("NVIDIA H200, 9.0, 580.159.04")
else:
    print("GPU 0: NVIDIA H200")
"""

NVCC = """
import sys
if "--version" in sys.argv:
    print("Cuda compilation tools, release 13.0, V13.0.88")
    sys.exit(0)
assert "-arch=sm_90" in sys.argv and "-O3" in sys.argv, sys.argv
out = sys.argv[sys.argv.index("-o") + 1]
open(out, "w").write("binary")
"""

CUOBJDUMP = """
import json, sys
assert sys.argv[1:] == ["-sass", "shmem_verify"], sys.argv
for k in json.load(open("manifest.json"))["kernels"]:
    op = k["instruction"].split("/")[0]
    if k["kernel"].endswith("_02_row_per_thread_read_tile_tid_c_column"):
        op = "LDS.64"  # as if the compiler had split the float4 load
    print("\\t\\tFunction : " + k["kernel"])
    print("        /*0080*/                   " + op + " R4, [R0] ;")
"""

NCU = """
import json, sys
if "--version" in sys.argv:
    print("Version 2025.3.1.0 (build 1)")
    sys.exit(0)
args = " ".join(sys.argv[1:])
assert "--clock-control none --csv --print-units base --metrics" in args, args
metrics = sys.argv[sys.argv.index("--metrics") + 1].split(",")
assert "l1tex__data_bank_conflicts_type_arbitration.sum" in metrics
unit = {"load": "ld", "store": "st"}
print("==PROF== Connected to process 9")
print('"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"')
for n, k in enumerate(json.load(open("manifest.json"))["kernels"]):
    p = k["predicted"]
    u = unit[k["op"]]
    extra = 1 if n == 0 else 0  # the first kernel measures one wavefront more than predicted
    print(f'"{n}","{k["kernel"]}","smsp__sass_inst_executed_op_shared_{u}.sum","inst","{p["requests"]:,}"')
    wavefronts = f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{u}.sum"
    print(f'"{n}","{k["kernel"]}","{wavefronts}","","{p["wavefronts"] + extra + 2:,}"')
    print(f'"{n}","{k["kernel"]}","l1tex__data_bank_conflicts_type_arbitration.sum","","2"')
"""


@pytest.fixture
def fake_cuda(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (
        ("nvidia-smi", NVIDIA_SMI),
        ("nvcc", NVCC),
        ("cuobjdump", CUOBJDUMP),
        ("ncu", NCU),
    ):
        tool = bin_dir / name
        tool.write_text(f"#!{sys.executable}\n{body}")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    return tmp_path


def test_build_dump_profile_and_compare(fake_cuda: Path) -> None:
    keep = fake_cuda / "run"
    result = CliRunner().invoke(main, ["verify", SPEC, "--keep", str(keep)])
    out = result.output
    assert result.exit_code == 1, out  # the first access is a mismatch
    assert (
        "shmem verify: NVIDIA H200 (sm_90), driver 580.159.04; nvcc: Cuda compilation tools" in out
    )
    assert "built for sm_90" in out
    first = next(line for line in out.splitlines() if "coalesced fill" in line)
    assert first.lstrip().startswith("MISMATCH") and "raw" in first and "arbitration 2" in first
    assert "the compiler emitted LDS.64 instead of LDS.128" in out
    assert out.splitlines()[-1] == "5 accesses: 3 match, 1 mismatch, 1 unmeasurable"
    assert {"shmem_verify.cu", "manifest.json", "run.sh", "sass.txt", "ncu.csv", "env.txt"} <= set(
        os.listdir(keep)
    )
    kernels = json.loads((keep / "manifest.json").read_text())["kernels"]
    assert len(kernels) == 5


def test_a_failing_compiler_is_reported_with_its_message(fake_cuda: Path) -> None:
    (fake_cuda / "bin" / "nvcc").write_text(
        f"#!{sys.executable}\nimport sys\n"
        "print('v.cu(3): error: boom', file=sys.stderr)\nsys.exit(1)\n"
    )
    result = CliRunner().invoke(main, ["verify", SPEC])
    assert result.exit_code == 2
    assert "nvcc failed (exit status 1)" in result.output
    assert "v.cu(3): error: boom" in result.output
