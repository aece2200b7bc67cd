"""shmem lint against the compiled kernel: the v1/v2 spec pairs of the project's own kernels.

tests/data/compiled_specs/*_v1.yaml describe tests/data/trace/kernels/gemm.cu's
tiled_matmul<32> and <16> from the source (one float of As per j); nvcc vectorized
that read into LDS.128 (the measured cubins in tests/data/trace), so v1 fails with
compiled-mismatch (SH007) naming the line, and v2 (a float4 view) passes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.lint import kernel_trace
from shmem_cli.lint.core import LintOptions, Target, lint_file

from .trace_util import needs_nvdisasm

SPECS = Path(__file__).parent / "data" / "compiled_specs"
KERNELS = Path(__file__).parent / "data" / "trace" / "kernels"
PAIRS = ("tiled_matmul32", "tiled_matmul16")

pytestmark = needs_nvdisasm


def codes(path: Path, **kw: object) -> list[tuple[str, int | None, str]]:
    found = lint_file(Target(str(path), path.name), LintOptions(**kw)).findings  # type: ignore[arg-type]
    return [(f.code, f.line, f.message) for f in found]


@pytest.mark.parametrize("name", PAIRS)
def test_v1_fails_with_the_line_and_v2_passes(name: str) -> None:
    v1 = codes(SPECS / f"{name}_v1.yaml")
    assert [c for c, _, _ in v1] == ["SH007"]
    (_, line, message) = v1[0]
    assert "'As[ty][j]' at gemm.cu:17" in message
    assert "LDS.128" in message and "float4 view of As" in message
    text = (SPECS / f"{name}_v1.yaml").read_text().splitlines()
    assert text[line - 1].strip() == "- name: As[ty][j]"
    assert codes(SPECS / f"{name}_v2.yaml") == []


def test_sh006_is_not_run_with_a_traced_kernel(tmp_path: Path) -> None:
    # v1 without barrier marks: the t loop would be loop-invariant for every access
    text = (SPECS / "tiled_matmul32_v2.yaml").read_text()
    text = text.replace("{range: 0..TILES-1, barrier: true}", "0..TILES-1")
    text = text.replace("../trace/", str(KERNELS.parent) + "/")
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    assert codes(spec) == []
    without = "\n".join(ln for ln in text.splitlines() if "line:" not in ln)
    without = without.split("kernel:")[0] + "arrays:" + without.split("arrays:")[1]
    spec.write_text(without)
    assert {c for c, _, _ in codes(spec)} == {"SH006"}


def test_the_cu_source_compiled_with_nvcc(tmp_path: Path) -> None:
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not found")
    text = (SPECS / "tiled_matmul32_v1.yaml").read_text()
    spec = tmp_path / "s.yaml"
    spec.write_text(text.replace("../trace/gemm.sm_90.cubin", str(KERNELS / "gemm.cu")))
    assert [c for c, _, _ in codes(spec)] == ["SH007"]


def test_no_nvcc_is_one_finding_and_no_compile_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shmem_cli import toolchain

    real = toolchain.which
    monkeypatch.setattr(toolchain, "which", lambda t: None if t == "nvcc" else real(t))
    kernel_trace.clear_cache()
    text = (SPECS / "tiled_matmul32_v1.yaml").read_text()
    spec = tmp_path / "s.yaml"
    spec.write_text(text.replace("../trace/gemm.sm_90.cubin", str(KERNELS / "gemm.cu")))
    found = [f for f in codes(spec) if f[0] != "SH009"]  # the source-level rules still run
    assert [c for c, _, _ in found] == ["SH008"]
    assert "nvcc is needed" in found[0][2] and "--no-compile" in found[0][2]
    # --no-compile: the compiled-code checks are skipped; the source-level rules run
    assert {c for c, _, _ in codes(spec, compile=False)} == {"SH009"}
    kernel_trace.clear_cache()


def test_cli_json_and_no_compile_flag() -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["lint", str(SPECS / "tiled_matmul32_v1.yaml"), "-f", "json"])
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    (finding,) = doc["findings"]
    facts = finding["facts"]
    assert finding["code"] == "SH007" and finding["severity"] == "error"
    assert (facts["spec_requests"], facts["compiled_requests"]) == (2048, 512)
    assert (facts["compiled_sass"], facts["compiled_bytes_per_lane"]) == ("LDS.128", 16)
    res = runner.invoke(main, ["lint", str(SPECS / "tiled_matmul32_v1.yaml"), "--ignore", "SH007"])
    assert res.exit_code == 0, res.output
