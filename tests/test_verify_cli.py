"""``shmem verify`` end to end without a GPU: --emit, --from-ncu, missing tools, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shmem_cli.cli import main
from shmem_cli.verify import runner

from .conftest import ROOT

SPEC = str(ROOT / "access_specs" / "column_read_32x32.yaml")
# kernel names: v_<file stem>_<access position>_<access name in lower case, [a-z0-9_] only>
STORE = "v_column_read_32x32_00_fill_tile_ty_tx_row_store"
LOAD = "v_column_read_32x32_01_column_read_tile_tx_ty"
HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"'
)


def _rows(launch: int, kernel: str, metrics: dict[str, int]) -> list[str]:
    return [
        f'"{launch}","77","shmem_verify","127.0.0.1","{kernel}","1","7",'
        '"(32, 32, 1)","(1, 1, 1)","0","9.0",'
        f'"Command line profiler metrics","{name}","","{value:,}"'
        for name, value in metrics.items()
    ]


def _csv(store: tuple[int, int], load: tuple[int, int], arbitration: int = 0) -> str:
    """A CSV in ncu's layout: the tile store (requests, wavefronts) and the column load."""
    lines = [
        "==PROF== Connected to process 77",
        "smem_base 1024 slack 0 max_dynamic_smem 232448",
        HEADER,
    ]
    lines += _rows(0, "shm_probe_smem_base", {"smsp__sass_inst_executed_op_shared_ld.sum": 0})
    lines += _rows(
        1,
        STORE,
        {
            "smsp__sass_inst_executed_op_shared_st.sum": store[0],
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": store[1],
            "l1tex__data_bank_conflicts_type_arbitration.sum": 0,
        },
    )
    lines += _rows(
        2,
        LOAD,
        {
            "smsp__sass_inst_executed_op_shared_ld.sum": load[0],
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": load[1],
            "l1tex__data_bank_conflicts_type_arbitration.sum": arbitration,
        },
    )
    return "\n".join(lines) + "\n"


def _verify(*args: str) -> Result:
    return CliRunner().invoke(main, ["verify", *args])


def _recorded(tmp_path: Path, text: str) -> str:
    path = tmp_path / "ncu.csv"
    path.write_text(text)
    return str(path)


def test_matching_counters_pass(tmp_path: Path) -> None:
    # a 32x32 block is 32 warps: the row store is 32 requests of 1 wavefront, the column read
    # 32 requests of 32 wavefronts (all lanes in one bank)
    result = _verify(SPEC, "--from-ncu", _recorded(tmp_path, _csv((32, 32), (32, 1024))))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(
        line.startswith("  ok") and "fill tile[ty][tx]" in line and "requests 32 = 32" in line
        for line in lines
    )
    assert any(
        "column read tile[tx][ty]" in line and "wavefronts 1024 = 1024" in line for line in lines
    )
    assert lines[-1] == "2 accesses: 2 match, 0 mismatch"


def test_a_mismatch_exits_1(tmp_path: Path) -> None:
    result = _verify(SPEC, "--from-ncu", _recorded(tmp_path, _csv((32, 32), (32, 1000))))
    assert result.exit_code == 1
    assert "MISMATCH" in result.output
    assert "wavefronts 1024 != 1000" in result.output
    assert result.output.splitlines()[-1] == "2 accesses: 1 match, 1 mismatch"


def test_arbitration_wavefronts_are_not_the_access_s_own(tmp_path: Path) -> None:
    result = _verify(
        SPEC, "--from-ncu", _recorded(tmp_path, _csv((32, 32), (32, 1030), arbitration=6))
    )
    assert result.exit_code == 0, result.output
    assert "raw 1030 - arbitration 6" in result.output


def test_a_changed_instruction_is_unmeasurable_not_a_mismatch(tmp_path: Path) -> None:
    csv_path = _recorded(tmp_path, _csv((32, 32), (32, 512)))
    (tmp_path / "sass.txt").write_text(
        f"\t\tFunction : {STORE}\n        /*0080*/                   STS [R2], R0 ;\n"
        f"\t\tFunction : {LOAD}\n        /*0080*/                   LDS.64 R2, [R0] ;\n"
    )
    result = _verify(SPEC, "--from-ncu", csv_path)
    assert result.exit_code == 0, result.output
    assert "unmeasurable" in result.output
    assert "the compiler emitted LDS.64 instead of LDS" in result.output
    assert _verify(SPEC, "--from-ncu", csv_path, "--strict").exit_code == 1


def test_a_kernel_absent_from_the_csv_is_not_measured(tmp_path: Path) -> None:
    text = "\n".join(line for line in _csv((32, 32), (32, 1024)).splitlines() if LOAD not in line)
    result = _verify(SPEC, "--from-ncu", _recorded(tmp_path, text), "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.output)
    assert report["counts"] == {"match": 1, "mismatch": 0, "unmeasurable": 0, "not measured": 1}
    load = report["accesses"][1]
    assert (load["kernel"], load["status"], load["measured"]) == (LOAD, "not measured", None)
    assert load["predicted"] == {"requests": 32, "wavefronts": 1024}


def test_emit_writes_the_program_and_a_run_script(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = _verify(SPEC, "--emit", str(out), "--arch", "sm_90")
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {"shmem_verify.cu", "manifest.json", "run.sh"}
    source = (out / "shmem_verify.cu").read_text()
    assert f'extern "C" __global__ void __launch_bounds__(1024) {LOAD}(' in source
    script = (out / "run.sh").read_text()
    assert "ncu --clock-control none --csv --print-units base --metrics" in script
    assert "l1tex__data_bank_conflicts_type_arbitration.sum" in script
    assert 'ARCH="${1:-sm_90}"' in script
    manifest = json.loads((out / "manifest.json").read_text())
    assert [k["kernel"] for k in manifest["kernels"]] == [STORE, LOAD]


def test_missing_tools_are_named_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "find_tools", lambda: runner.Tools(None, None, None, None))
    result = _verify(SPEC)
    assert result.exit_code == 2
    for what in ("nvcc", "cuobjdump", "ncu", "no NVIDIA GPU found"):
        assert what in result.output


def test_only_the_missing_tool_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    gpu = runner.Gpu("NVIDIA H200", "9.0", "580.159.04")
    monkeypatch.setattr(
        runner, "find_tools", lambda: runner.Tools("/x/nvcc", "/x/cuobjdump", None, gpu)
    )
    result = _verify(SPEC)
    assert result.exit_code == 2
    assert "ncu (Nsight Compute) is not on PATH" in result.output
    assert "nvcc" not in result.output


def test_gpu_description_and_arch() -> None:
    gpu = runner.Gpu("NVIDIA H200", "9.0", "580.159.04")
    assert (gpu.arch, gpu.describe()) == ("sm_90", "NVIDIA H200 (sm_90), driver 580.159.04")
    assert runner.Gpu("X", "", "").arch is None


@pytest.mark.parametrize(
    "args",
    [
        ["--emit", "d", "--from-ncu", SPEC],
        ["--keep", "d", "--emit", "e"],
        ["--arch", "90"],
        ["--sass", SPEC],
    ],
)
def test_conflicting_or_bad_options_are_usage_errors(args: list[str]) -> None:
    assert _verify(SPEC, *args).exit_code == 2


def test_a_bad_spec_is_located_and_the_others_still_run(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "block: [32]\narrays:\n  a: {dtype: float, shape: [32]}\n"
        "accesses:\n  - {array: b, index: [lane]}\n"
    )
    result = _verify(SPEC, str(bad), "--from-ncu", _recorded(tmp_path, _csv((32, 32), (32, 1024))))
    assert result.exit_code == 2
    assert f"{bad}:5:" in result.output
    assert "2 accesses: 2 match, 0 mismatch" in result.output


def test_emit_then_from_ncu_in_the_same_folder(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    assert _verify(SPEC, "--emit", str(out), "--arch", "sm_90").exit_code == 0
    (out / "ncu.csv").write_text(_csv((32, 32), (32, 1024)))
    (out / "env.txt").write_text(
        "NVIDIA H200, 9.0, 580.159.04\nCuda compilation tools, release 13.0, V13.0.88\n"
    )
    result = _verify(SPEC, "--from-ncu", str(out / "ncu.csv"))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "shmem verify: NVIDIA H200, 9.0, 580.159.04; "
        "Cuda compilation tools, release 13.0, V13.0.88; built for sm_90"
    )
