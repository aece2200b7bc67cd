"""shmem lint against the compiled kernel: the v1/v2 spec pairs of the project's own kernels.

tests/data/compiled_specs/*_v1.yaml describe a kernel from its source, *_v2.yaml as nvcc
compiled it: tiled_matmul<32> and <16> (tests/data/trace/kernels/gemm.cu, the measured
cubins) read one float of As per j, which nvcc vectorized into LDS.128; row_scale
(compiled_specs/kernels/row_scale.cu) reads w[tx] in an unrolled loop, which nvcc
hoisted. Each v1 fails with compiled-mismatch (SH007) naming the line; each v2 passes.
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

from .conftest import TEST_DATA, TRACE_DATA, needs_nvdisasm

SPECS = TEST_DATA / "compiled_specs"
KERNELS = TRACE_DATA / "kernels"

pytestmark = needs_nvdisasm


def codes(path: Path, **kw: object) -> list[tuple[str, int | None, str]]:
    found = lint_file(Target(str(path), path.name), LintOptions(**kw)).findings  # type: ignore[arg-type]
    return [(f.code, f.line, f.message) for f in found]


@pytest.mark.parametrize(
    ("name", "access", "phrases"),
    [
        ("tiled_matmul32", "As[ty][j]", ["LDS.128", "float4 view of As", "2048 requests"]),
        ("tiled_matmul16", "As[ty][j]", ["LDS.128", "float4 view of As", "512 requests"]),
        # 8 warps x 4 iterations = 32 requests in the spec; the hoisted LDS runs once per warp
        ("row_scale", "w[tx]", ["not 32 (4x fewer)", "hoisted", "8 requests, 8 wavefronts"]),
    ],
)
def test_v1_fails_with_the_line_and_v2_passes(name: str, access: str, phrases: list[str]) -> None:
    v1 = codes(SPECS / f"{name}_v1.yaml")
    assert [c for c, _, _ in v1] == ["SH007"]
    (_, line, message) = v1[0]
    assert message.startswith(f"'{access}' at ")
    for phrase in phrases:
        assert phrase in message, message
    text = (SPECS / f"{name}_v1.yaml").read_text().splitlines()
    assert text[line - 1].strip() == f"- name: {access}"
    assert codes(SPECS / f"{name}_v2.yaml") == []


def test_sh006_is_not_run_with_a_traced_kernel(tmp_path: Path) -> None:
    # v1 without barrier marks: the t loop would be loop-invariant for every access
    text = (SPECS / "tiled_matmul32_v2.yaml").read_text()
    text = text.replace("{values: 0..TILES-1, barrier: true}", "0..TILES-1")
    text = text.replace("../trace/", str(KERNELS.parent) + "/")
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    assert codes(spec) == []
    without = "\n".join(ln for ln in text.splitlines() if "line:" not in ln)
    without = without.split("kernel:")[0] + "arrays:" + without.split("arrays:")[1]
    spec.write_text(without)
    assert {c for c, _, _ in codes(spec)} == {"SH006"}


def test_copies_of_an_unrolled_loop_the_spec_leaves_out_say_so(tmp_path: Path) -> None:
    # row_scale's tile store at line 7 is an unrolled r loop: four STS, one per r. A spec
    # that gives it one r matches one of them; the three others were "that no access
    # describes: add an access with line: 7", beside the access that has line: 7
    text = (SPECS / "row_scale_v2.yaml").read_text()
    text = text.replace("kernels/", str(SPECS / "kernels") + "/")
    text = text.replace(
        "index: [threadIdx.y + 8 * r, threadIdx.x]\n    loop: {r: 0..3}",
        "index: [threadIdx.y, threadIdx.x]",
    )
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    found = codes(spec)
    assert [c for c, _, _ in found] == ["SH008"]
    (_, line, message) = found[0]
    assert message == (
        "the compiled kernel row_scale has store STS x3: 4 B per lane, 24 requests, "
        "24 wavefronts at row_scale.cu:7 besides what 'tile[ty + 8r][tx] = in[...]' there "
        "account(s) for: it runs that line more often than the spec says (copies of an "
        "unrolled loop, or a loop the spec leaves out): make the spec's loop ranges match the "
        "compiled trip counts, or describe the rest with another access at line: 7"
    )
    assert text.splitlines()[line - 1].strip() == "line: 7"  # said at that access


@pytest.mark.slow
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
    from shmem_cli.cuda import toolchain

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


def test_baseline_sarif_and_config_work_for_the_compiled_rules(tmp_path: Path) -> None:
    runner = CliRunner()
    spec = str(SPECS / "row_scale_v1.yaml")
    base = tmp_path / "base.json"
    res = runner.invoke(main, ["lint", spec, "--no-config", "--write-baseline", str(base)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["lint", spec, "--no-config", "--baseline", str(base)])
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["lint", spec, "--no-config", "-f", "sarif"])
    assert res.exit_code == 1
    sarif = json.loads(res.stdout)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["SH007"]
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.shmem]\nignore = ["compiled-mismatch"]\n')
    res = runner.invoke(main, ["lint", spec, "--config", str(config)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(("bs", "tiles"), [(16, 4), (32, 2)])
def test_likely_vectorized_agrees_with_the_compiled_kernel(bs: int, tiles: int) -> None:
    """SH009 without the kernel flags As[ty][j] (nvcc made it LDS.128) with the very cost
    of the compiled LDS.128, and not Bs[j][tx] (it stayed scalar)."""
    from shmem_cli.analysis.vectorize import vector_form
    from shmem_cli.spec.compile import load_spec
    from shmem_cli.spec.layout import resolve

    spec = load_spec(SPECS / f"tiled_matmul{bs}_v1.yaml")
    layout = resolve(spec)
    forms = {a.name: vector_form(spec, layout, a) for a in spec.accesses}
    assert forms["Bs[j][tx]"] is None
    trace = kernel_trace.trace_spec_kernel(spec.kernel, layout.block)  # type: ignore[arg-type]
    assert not isinstance(trace, kernel_trace.KernelUnavailable)
    wide = [a for a in trace.accesses if a.line == 17 and a.opcode == "LDS.128"]
    form = forms["As[ty][j]"]
    assert form is not None and form.width == 16
    assert (form.totals.requests, form.totals.wavefronts) == (
        sum(r.cost.requests for r in wide),
        sum(r.cost.wavefronts for r in wide),
    )
    assert not [a for a in trace.accesses if a.line == 17 and a.opcode == "LDS.64"]


def test_row_scale_reads_nothing_nvcc_could_merge() -> None:
    from shmem_cli.analysis.vectorize import vector_form
    from shmem_cli.spec.compile import load_spec
    from shmem_cli.spec.layout import resolve

    spec = load_spec(SPECS / "row_scale_v1.yaml")
    layout = resolve(spec)
    assert [vector_form(spec, layout, a) for a in spec.accesses] == [None] * 4


def test_file_and_line_names_a_file_of_the_line_table(tmp_path: Path) -> None:
    from shmem_cli.lint.compiled_compare import same_file

    assert same_file("/build/kernels/gemm.cu", "gemm.cu")
    assert same_file("/build/kernels/gemm.cu", "kernels/gemm.cu")
    assert not same_file("/build/kernels/xgemm.cu", "gemm.cu")
    text = (SPECS / "tiled_matmul32_v2.yaml").read_text()
    text = text.replace("../trace/", str(KERNELS.parent) + "/")
    spec = tmp_path / "s.yaml"
    spec.write_text(text.replace("line: 17", "line: kernels/gemm.cu:17"))
    assert codes(spec) == []
    spec.write_text(text.replace("line: 17", "line: other.cuh:17"))
    found = codes(spec)
    # the two reads at a file the kernel does not use: no instruction there, and the
    # instructions of gemm.cu:17 are described by no access
    assert [c for c, _, _ in found] == ["SH008"] * 4
    assert sum("other.cuh:17" in m for _, _, m in found) == 2


def test_line_without_kernel_is_an_invalid_spec(tmp_path: Path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  a: {dtype: float, shape: [32]}\n"
        "accesses:\n  - array: a\n    index: [lane]\n    line: 4\n"
    )
    (found,) = codes(spec)
    assert found[:2] == ("SH100", 7) and "needs a kernel: block" in found[2]
