"""Leftovers of robustness round 23 (docs/robustness.md, round 23b).

* A file name's byte that is not UTF-8 is spelled ``\\xff`` in every output, text, GitHub
  annotations, JUnit and standard error alike, as the JSON outputs spell it.
* ``--arg NAME=zeros:...`` without an offset says the form to write and the size's bound,
  and what is wrong with the size given; ``NAME+0=zeros:BYTES`` past the bound is refused at
  its value, in the same words.
* ``sweep`` and ``verify`` confine a spec's kernel files with ``[tool.shmem] source-roots``,
  as ``analyze`` and the lint do (they used the spec's own tree alone).
* A value given twice to a sweep (``--pad 1,1``, ``--define PAD=1,1``) is swept once.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from shmem_cli.analysis.sweep.options import parse_axis
from shmem_cli.hardware.swizzle import parse_swizzle
from shmem_cli.trace.fixes.compiled_sweep import Define, parse_define

from .hostile import refused, shmem
from .test_compiled_sweep import SGEMM, needs_nvcc
from .test_trace_suggest import SGEMM_ARGS

CUBIN3 = Path(__file__).resolve().parent / "data" / "hostile" / "hostile3.sm_90.cubin"
ROOT = Path(__file__).resolve().parent.parent
COLUMN = ROOT / "access_specs" / "column_read_32x32.yaml"
#: a name with a byte that is no UTF-8 (0xff), as os.fsdecode gives it
BAD = os.fsdecode(b"bad\xff.yaml")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("lint", "."), "bad\\xff.yaml:20:5: error: 32-way bank conflict"),
        (("lint", "--format", "github", "."), "::error file=bad\\xff.yaml,line=20,col=5,"),
        (("lint", "--format", "junit", "."), '<testsuite name="bad\\xff.yaml"'),
        (("analyze", "."), "bad\\xff.yaml  column read, tile[32][32]"),
    ],
)
def test_a_stray_byte_of_a_file_name_is_spelled_as_json_spells_it_in_text_outputs(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    (tmp_path / BAD).write_text(
        COLUMN.read_text().replace("{max_ways: 32}", "{conflict_free: true}")
    )
    code = 0 if args[0] == "analyze" else 1  # the lint's finding fails it
    ran = shmem(*args, cwd=tmp_path)
    assert ran.code == code, ran.text[-2000:]
    assert said in ran.stdout, ran.stdout[-2000:]
    assert "udcff" not in ran.stdout
    wrote = shmem(*args[:-1], "-o", "out.txt", ".", cwd=tmp_path)  # and in a file
    assert wrote.code == code, wrote.text[-2000:]
    assert said in (tmp_path / "out.txt").read_text()


def test_a_stray_byte_is_spelled_so_on_standard_error(tmp_path: Path) -> None:
    shutil.copy(COLUMN, tmp_path / "good.yaml")
    ran = shmem("analyze", os.fsdecode(b"nope\xfe"), cwd=tmp_path)
    assert ran.code == 2
    assert "shmem: error: no such file or directory: nope\\xfe" in ran.stderr, ran.stderr


_FORM = (
    "is a pointer to a new zero-filled buffer, given at a byte offset of the parameter: write "
    "the key as out+0"
)
_SIZE = "zeros:BYTES wants a count of bytes from 1 to 68,719,476,736 (64 GiB), decimal or 0x..."


@pytest.mark.parametrize(
    ("arg", "said"),
    [
        ("out=zeros:0", f"--arg 1 (out): 'zeros:0' {_FORM}; {_SIZE} (e.g. zeros:4096), got '0'\n"),
        (
            "out=zeros:64GiB",
            f"--arg 1 (out): 'zeros:64GiB' {_FORM}; {_SIZE} (e.g. zeros:4096), got '64GiB'\n",
        ),
        ("out=zeros:4096", f"--arg 1 (out): 'zeros:4096' {_FORM}\n"),
        ("1=zeros:4096", f"--arg 1 (out): 'zeros:4096' {_FORM}\n"),  # its name's key
        ("out+0=zeros:0", f"--arg out+0: {_SIZE} (e.g. zeros:4096), got '0'\n"),
        ("out+0=zeros:68719476737", f"--arg out+0: {_SIZE} (e.g. zeros:4096), got '68719476737'"),
    ],
)
def test_zeros_says_its_form_and_its_bound(arg: str, said: str) -> None:
    ran = shmem("trace", str(CUBIN3), "-k", "tma_2d", "--no-tables", "-b", "32", "-a", arg)
    refused(ran, said)


@pytest.mark.parametrize("value", ["zeros:4096", "zeros:0", "zeros:64GiB"])
def test_zeros_without_an_offset_is_one_message_in_a_spec_and_an_arg(value: str) -> None:
    # the spec's kernel.args form check and --arg's value say it in the very same words
    from shmem_cli.cuda.launch.values import LaunchError, check_arg_form, value_bytes

    with pytest.raises(LaunchError) as spec:
        check_arg_form("out", value, "kernel.args out")
    with pytest.raises(LaunchError) as arg:
        value_bytes(value, 8, "--arg 1 (out)", "float*", key="out")
    assert spec.value.message.removeprefix("kernel.args out: ") == (
        arg.value.message.removeprefix("--arg 1 (out): ")
    )
    assert "write the key as out+0" in spec.value.message


def test_zeros_at_the_bound_is_taken() -> None:
    # 64 GiB exactly passes the launch's checks: the trace runs on to the kernel's own error
    ran = shmem(
        "trace", str(CUBIN3), "-k", "tma_2d", "--no-tables", "-b", "32",
        "-a", "out+0=zeros:68719476736",
    )  # fmt: skip
    assert "error: the TMA load's shared destination at 0x480 is outside" in ran.text, ran.text
    assert "zeros:BYTES" not in ran.text


KERNEL_UP = """name: t
block: [32]
kernel:
  source: ../k.cu
arrays:
  a: {dtype: float, shape: [32]}
accesses:
  - array: a
    index: [lane]
"""


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", "src/k.yaml"),
        ("sweep", "src/k.yaml", "--pad", "0,1"),
        ("verify", "src/k.yaml", "--emit", "emitted"),
        ("lint", "src/k.yaml", "--no-compile"),
    ],
)
def test_every_command_confines_a_spec_s_files_with_the_configured_roots(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "k.yaml").write_text(KERNEL_UP)
    (repo / "k.cu").write_text("__global__ void k() {}\n")
    # the repository holds the kernel; the configured roots, narrower, do not
    (repo / "pyproject.toml").write_text('[tool.shmem]\nsource-roots = ["src"]\n')
    ran = shmem(*args, cwd=repo)
    refused(
        ran,
        f"src/k.yaml:4:11: error: kernel.source ../k.cu is outside the kernel's source tree "
        f"({repo / 'src'}); keep it inside, or name a wider folder in [tool.shmem] source-roots",
        roots=[repo],  # its pyproject.toml is read
    )
    assert not (repo / "emitted").exists()
    # roots that hold it take it
    (repo / "pyproject.toml").write_text('[tool.shmem]\nsource-roots = ["."]\n')
    ran = shmem(*args, cwd=repo)
    assert "outside" not in ran.text, ran.text[-2000:]
    assert ran.code == 0, ran.text[-2000:]


def test_a_value_given_twice_to_a_sweep_is_swept_once_in_the_order_first_given() -> None:
    assert parse_axis("pad", "1,1").values == (1,)
    assert parse_axis("pad", "A=2,0,2,1,0").values == (2, 0, 1)
    assert parse_axis("param", "N=+4,4,04").values == (4,)
    assert parse_axis("swizzle", "none,128B,none,128B").values == (None, parse_swizzle("128B"))
    assert parse_define("PAD=1,1") == Define("PAD", (1,))
    assert parse_define("PAD=0..2").values == (0, 1, 2)


def test_a_spec_sweep_of_a_value_given_twice_has_its_row_once(tmp_path: Path) -> None:
    spec = ROOT / "access_specs" / "sweep_transpose_pad.yaml"
    ran = shmem("sweep", str(spec), "--pad", "0,1,0,1", "--format", "json", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    doc = json.loads(ran.stdout)
    assert [v["pad"] for v in doc["variants"]] == [0, 1]
    assert doc["sweep"] == ["pad 0,1 (every array)"]


@pytest.mark.slow  # one nvcc build
@needs_nvcc
def test_a_kernel_sweep_of_a_define_given_twice_traces_it_once(tmp_path: Path) -> None:
    source = tmp_path / "warp_sgemm.cu"
    shutil.copy(SGEMM, source)
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ("sweep", str(source), "--define", "PAD=4,4,4", "-b", "256", *SGEMM_ARGS)
    ran = shmem(*args, "--format", "json", cwd=tmp_path, env=env, timeout=300)
    assert ran.code == 0, ran.text[-2000:]
    doc = json.loads(ran.stdout)
    assert [v["defines"] for v in doc["variants"]] == [{"PAD": "4"}]
    assert doc["best"]["defines"] == {"PAD": "4"}


@pytest.mark.slow  # 20 s: the emitted program of 2 kernels
def test_verify_s_manifest_names_a_non_utf8_spec_in_valid_json(tmp_path: Path) -> None:
    (tmp_path / BAD).write_text(COLUMN.read_text())
    ran = shmem("verify", BAD, "--emit", "e", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    text = (tmp_path / "e" / "manifest.json").read_text()
    assert "\\ud" not in text  # a lone surrogate's escape, which strict parsers refuse
    doc = json.loads(text)
    assert {k["spec"] for k in doc["kernels"]} == {"bad\\xff.yaml"}
