"""Outputs that would destroy an input of the same command (issue 28): ``-o``, ``--svg``,
``--html`` and ``--emit`` naming the kernel, a header it includes, a buffer file, the
``--compare`` CSV, a Triton entry's files or a CSV ``verify`` reads are refused before any
work, and the input is left byte for byte; ``verify --emit -o FILE`` writes its summary there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import ROOT, TEST_DATA
from .hostile import CUBIN, shmem

ENTRY = TEST_DATA / "triton" / "cache" / "BNA37UX6NG47NQSUZID23JEHSIPE3YFLJEPGHWSGJUGSKGQ6TXBA"
CSV = TEST_DATA / "triton" / "ncu" / "layernorm.csv"
SPEC = ROOT / "access_specs" / "column_read_32x32.yaml"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.output


def refused_over(target: Path, *args: str) -> None:
    """The command is refused naming ``target``, which keeps its bytes."""
    before = target.read_bytes()
    code, out = run(*args)
    assert code == 2, out
    assert "refusing to write over the input" in out, out
    assert target.read_bytes() == before


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    """A .cu that includes a header, in a source tree of its own."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tile.cuh").write_text("#define TILE 32\n")
    source = tmp_path / "k.cu"
    source.write_text(
        '#include "tile.cuh"\n__global__ void k(float *o) { __shared__ float s[TILE];\n'
        "  s[threadIdx.x] = 1; __syncthreads(); o[threadIdx.x] = s[0]; }\n"
    )
    return source


@pytest.mark.parametrize("option", ["-o", "--svg", "--html"])
def test_a_trace_never_writes_over_its_kernel(tmp_path: Path, option: str) -> None:
    cubin = tmp_path / "k.cubin"
    shutil.copy(CUBIN, cubin)
    refused_over(cubin, "trace", str(cubin), "-k", "trivial", "-b", "32", option, str(cubin))


def test_a_trace_never_writes_over_its_source_or_a_header(kernel: Path) -> None:
    refused_over(kernel, "trace", str(kernel), "-b", "32", "-o", str(kernel))
    header = kernel.parent / "tile.cuh"  # read by the build: found by the source scan
    refused_over(header, "trace", str(kernel), "-b", "32", "--svg", str(header))


def test_a_trace_never_writes_over_a_buffer_or_the_compare_csv(tmp_path: Path) -> None:
    buffer = tmp_path / "in.bin"
    buffer.write_bytes(b"\x01" * 64)
    args = ("trace", str(CUBIN), "-k", "trivial", "-b", "32", "-a", f"0=@{buffer}")
    refused_over(buffer, *args, "-o", str(buffer))
    spec = f"0+0=tensormap:dtype=u8,dims=64,box=16,data=@{buffer}"
    refused_over(
        buffer, "trace", str(CUBIN), "-k", "trivial", "-b", "32", "-a", spec, "-o", str(buffer)
    )
    csv = tmp_path / "ncu.csv"
    shutil.copy(CSV, csv)
    refused_over(csv, "trace", str(ENTRY), "--compare", str(csv), "-o", str(csv))


def test_a_trace_never_writes_over_a_triton_entry(tmp_path: Path) -> None:
    entry = tmp_path / "entry"
    shutil.copytree(ENTRY, entry)
    (meta,) = entry.glob("*.json")
    refused_over(meta, "trace", str(entry), "-o", str(meta))
    refused_over(meta, "trace", str(meta), "--html", str(meta))
    (cubin,) = entry.glob("*.cubin")
    refused_over(cubin, "trace", str(entry), "--svg", str(cubin))


def test_a_kernel_sweep_never_writes_over_its_inputs(kernel: Path) -> None:
    buffer = kernel.parent / "in.bin"
    buffer.write_bytes(bytes(128))
    sweep = ("sweep", str(kernel), "--define", "TILE=32,64", "-b", "32", "-a", f"0=@{buffer}")
    refused_over(kernel, *sweep, "-o", str(kernel))
    refused_over(buffer, *sweep, "-o", str(buffer))


def test_verify_never_writes_over_its_csv_and_honours_o_with_emit(tmp_path: Path) -> None:
    csv = tmp_path / "ncu.csv"
    csv.write_text("x\n")
    refused_over(csv, "verify", str(SPEC), "--from-ncu", str(csv), "-o", str(csv))
    summary = tmp_path / "summary.txt"
    code, out = run("verify", str(SPEC), "--emit", str(tmp_path / "bench"), "-o", str(summary))
    assert code == 0, out
    assert out == ""
    assert summary.read_text().startswith("wrote 2 kernels to ")


def test_lint_never_writes_over_a_kernel_it_reads(kernel: Path) -> None:
    spec = kernel.parent / "k.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  s: {dtype: float32, shape: [32]}\naccesses:\n"
        "  - {name: st, array: s, op: store, index: [lane]}\n"
        "kernel:\n  source: k.cu\n  name: k\n"
    )
    for target in (kernel, kernel.parent / "tile.cuh"):
        before = target.read_bytes()
        code, out = run("lint", str(spec), "-o", str(target))
        assert code == 2, out
        assert f"{target}: refusing to write over the input" in out, out
        assert "(this spec's kernel reads it)" in out or "SH100" in out
        assert target.read_bytes() == before


def test_a_trace_never_writes_over_its_params_or_a_constant(tmp_path: Path) -> None:
    block = tmp_path / "params.bin"
    block.write_bytes(bytes(8))
    base = ("trace", str(CUBIN), "-k", "trivial", "-b", "32")
    refused_over(block, *base, "--params", f"@{block}", "-o", str(block))
    refused_over(block, *base, "--const", f"tab=@{block}", "--svg", str(block))
    refused_over(block, *base, "--memory", f"0x7f1234000000=@{block}", "-o", str(block))


def test_two_outputs_never_share_a_file(tmp_path: Path) -> None:
    """``--svg X --html X`` (or ``-o`` and a picture, by a link or another spelling) would
    write the second over the first: refused before any work, nothing written."""
    base = ("trace", str(CUBIN), "-k", "trivial", "-b", "32")
    same = tmp_path / "same.out"
    (tmp_path / "link.out").symlink_to(same)
    (tmp_path / "sub").mkdir()
    for first, second, flags in [
        (same, same, ("--svg", "--html")),
        (same, tmp_path / "link.out", ("-o", "--svg")),  # not there yet: a link to it
        (same, tmp_path / "sub" / ".." / "same.out", ("-o", "--html")),
    ]:
        code, out = run(*base, flags[0], str(first), flags[1], str(second))
        assert code == 2, out
        assert "refusing to write two outputs to one file" in out, out
        assert not same.exists()
    code, out = run("analyze", str(SPEC), "-o", str(same), "--svg", str(same))
    assert code == 2 and "two outputs to one file" in out, out
    code, out = run("lint", str(SPEC), "-o", str(same), "--write-baseline", str(same))
    assert code == 2 and "two outputs to one file" in out, out
    assert not same.exists()
    code, out = run("analyze", str(SPEC), "-o", "/dev/null", "--svg", "/dev/null")
    assert code == 0, out  # a device takes both


@pytest.mark.slow
def test_a_trace_never_writes_over_the_source_its_cubin_names(tmp_path: Path) -> None:
    """A cubin's line table names hostile.cu, which the trace reads for parameter names and
    quoted lines: ``-o hostile.cu`` beside the cubin replaced it with the report. (Run from
    the cubin's own tree, so that its copy of the source is the one found.)"""
    (tmp_path / ".git").mkdir()
    shutil.copy(CUBIN, tmp_path / "k.cubin")
    source = tmp_path / "hostile.cu"
    shutil.copy(CUBIN.parent / "hostile.cu", source)
    before = source.read_bytes()
    base = ("trace", "k.cubin", "-k", "trivial", "-b", "32")
    for option in ("-o", "--svg"):
        ran = shmem(*base, option, "hostile.cu", cwd=tmp_path)
        assert ran.code == 2, ran.text
        assert f"refusing to write over the input {source}" in ran.text, ran.text
        assert source.read_bytes() == before
    (tmp_path / "t.yaml").write_text(
        "block: [32]\narrays:\n  s: {dtype: int32, shape: [32]}\naccesses:\n"
        "  - {name: st, array: s, op: store, index: [lane]}\n"
        "kernel:\n  source: k.cubin\n  name: trivial\n"
    )
    ran = shmem("lint", "t.yaml", "-o", "hostile.cu", cwd=tmp_path)
    assert "refusing to write over the input" in ran.text, ran.text
    assert source.read_bytes() == before


def test_lint_never_writes_over_its_config_or_the_baseline_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[tool.shmem]`` in pyproject.toml (or ``--config``) is read by lint; so is the
    ``--baseline`` of a report. Rewriting a baseline with ``--write-baseline`` stays allowed."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.shmem]\nfail-on = "error"\n')
    (tmp_path / "other.toml").write_text('[tool.shmem]\nfail-on = "error"\n')
    shutil.copy(SPEC, tmp_path / "s.yaml")
    accepted = tmp_path / "base.json"
    accepted.write_text("[]\n")
    refused_over(config, "lint", "s.yaml", "-o", "pyproject.toml")
    refused_over(config, "lint", "s.yaml", "--write-baseline", str(config))
    refused_over(
        tmp_path / "other.toml", "lint", "s.yaml", "--config", "other.toml", "-o", "other.toml"
    )
    refused_over(accepted, "lint", "s.yaml", "--baseline", "base.json", "-o", "base.json")
    code, out = run("lint", "s.yaml", "--baseline", "base.json", "--write-baseline", "base.json")
    assert code == 0, out  # the baseline written anew, as lint.md says
