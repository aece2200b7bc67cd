"""`shmem trace` of a Triton cache entry: the launch from the metadata and the TTGIR.

The entries under tests/data/triton/cache are the project's own kernels (kernels.py),
compiled ahead of time with Triton for sm_90 (build.py) and measured once on an H200 from
those very cubins (lab/, measured.json). These tests need no Triton.
"""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, kernel_parameters, trace_file
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.triton.cache import read_entry
from shmem_cli.trace.triton.roots import open_entry

from .conftest import TEST_DATA

DATA = TEST_DATA / "triton"
LAUNCHES = json.loads((DATA / "launches.json").read_text())["launches"]
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
# measured on the H200 (matmul_tf32 was added after the run)
EXACT = [L for L in LAUNCHES if L["id"] in MEASURED]

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def launch(ident: str) -> dict[str, Any]:
    return next(L for L in LAUNCHES if L["id"] == ident)


@functools.cache
def traced(ident: str) -> KernelTrace:
    """A kept launch, traced once for all the tests."""
    return trace(launch(ident))


def trace(entry: dict[str, Any], path: Path | None = None) -> KernelTrace:
    request = TraceRequest(
        path or DATA / entry["entry"], grid=tuple(entry["grid"]), args=arg_texts(entry["args"])
    )
    return trace_file(request).kernels[0]


def per_op(kernel: KernelTrace) -> dict[str, Any]:
    """The trace in Nsight Compute's per-op terms (ldmatrix/stmatrix wavefronts count in
    op_ld/op_st, their instructions apart; docs/trace.md)."""
    t = kernel.totals
    return {
        "ld": (t["load"].requests, t["load"].wavefronts + t["ldmatrix"].wavefronts),
        "st": (t["store"].requests, t["store"].wavefronts + t["stmatrix"].wavefronts),
        "ldsm": t["ldmatrix"].requests,
        "stsm": t["stmatrix"].requests,
        "ldgsts": (t["cp_async"].requests, t["cp_async"].wavefronts),
        "gmma": t["wgmma"].wavefronts,
    }


def measured_per_op(ident: str) -> dict[str, Any]:
    m = MEASURED[ident]["per_op"]
    return {
        "ld": (m["ld"]["requests"], m["ld"]["wavefronts"]),
        "st": (m["st"]["requests"], m["st"]["wavefronts"]),
        "ldsm": m["ldsm"]["requests"],
        "stsm": m["stsm"]["requests"],
        "ldgsts": (m["ldgsts"]["requests"], m["ldgsts"]["wavefronts"]),
        "gmma": MEASURED[ident]["gmma_wavefronts"],
    }


@pytest.mark.slow
@pytest.mark.parametrize("entry", EXACT, ids=[L["id"] for L in EXACT])
def test_an_entry_traced_with_only_the_grid_and_named_scalars_gives_the_h200s_counts(
    entry: dict[str, Any],
) -> None:
    kernel = traced(entry["id"])
    assert per_op(kernel) == measured_per_op(entry["id"])
    assert kernel.launch.block == (32 * entry["num_warps"], 1, 1)


@pytest.mark.parametrize("entry", EXACT, ids=[L["id"] for L in EXACT])
def test_each_instruction_matches_nsight_computes_source_counters(entry: dict[str, Any]) -> None:
    measured = {i["pc"]: i for i in MEASURED[entry["id"]]["instructions"]}
    kernel = traced(entry["id"])
    # measured.json keeps the LDS/STS/LDSM/STSM/LDGSTS rows; wgmma is checked per op (gmma)
    assert {a.pc for a in kernel.accesses if a.op != "wgmma"} == set(measured)
    for a in kernel.accesses:
        if a.op == "wgmma":
            continue
        m = measured[a.pc]
        assert a.result.requests + a.predicated_off == m["executed"], a.sass
        if a.op == "cp_async":
            # the source view's LDGSTS figure is not the hardware's wavefront counter (which
            # the per-op test checks): docs/trace.md, "--compare"
            continue
        assert (a.result.wavefronts, a.result.ideal_wavefronts) == (m["wavefronts"], m["ideal"])


def test_the_wgmma_entrys_operand_traffic_is_the_h200s() -> None:
    kernel = traced("matmul_wgmma")
    hgmma = [a for a in kernel.accesses if a.op == "wgmma"]
    assert [a.opcode for a in hgmma] == ["HGMMA.64x64x16.F32", "HGMMA.64x64x16.F32"]
    assert kernel.totals["wgmma"].wavefronts == MEASURED["matmul_wgmma"]["gmma_wavefronts"] == 256


def test_lines_are_the_triton_source_not_tritons_library() -> None:
    kernel = traced("softmax_w4")
    # tl.max and tl.sum are implemented in triton/language/standard.py: the line reported is
    # the kernel's own call (kernels.py lines 19 and 21)
    assert sorted({(Path(a.file or "").name, a.line) for a in kernel.accesses}) == [
        ("kernels.py", 19),
        ("kernels.py", 21),
    ]


def test_parameters_come_from_the_ttgir_and_tritons_scratch_pointers_follow() -> None:
    [(_, params)] = kernel_parameters(TraceRequest(DATA / launch("layernorm")["entry"]))
    assert [(p.name, p.type, p.size) for p in params] == [
        ("out_ptr", "float*", 8),
        ("in_ptr", "float*", 8),
        ("w_ptr", "float*", 8),
        ("b_ptr", "float*", 8),
        ("n_cols", "int32_t", 4),
        ("eps", "float", 4),
        ("global_scratch", "void*", 8),
        ("profile_scratch", "void*", 8),
    ]


def test_the_launch_follows_the_metadata() -> None:
    entry = launch("transpose")
    kernel = traced("transpose")
    meta = json.loads((DATA / entry["entry"] / "transpose_tiles.json").read_text())
    assert kernel.launch.block == (32 * meta["num_warps"], 1, 1)
    assert kernel.launch.dynamic_smem == meta["shared"] == 16384
    assert kernel.launch.grid == (2, 2, 1)
    args = dict(kernel.launch.arguments)
    assert args["2 (n_rows)"] == "128" and args["4 (global_scratch)"] == "0"
    assert "4 (global_scratch)" not in kernel.launch.zero_filled


def test_an_integer_for_a_float_scalar_is_a_float() -> None:
    entry = launch("layernorm")
    kernel = trace({**entry, "args": {"n_cols": 768, "eps": 1}})
    assert dict(kernel.launch.arguments)["5 (eps)"] == "1.0"


def copy_entry(tmp_path: Path, ident: str) -> tuple[Path, str]:
    entry = launch(ident)
    folder = tmp_path / "entry"
    shutil.copytree(DATA / entry["entry"], folder)
    return folder, entry["kernel"]


def edit_metadata(folder: Path, name: str, **changes: Any) -> None:
    path = folder / f"{name}.json"
    meta = json.loads(path.read_text())
    meta.update(changes)
    path.write_text(json.dumps(meta))


def test_scratch_of_a_nonzero_size_is_a_buffer_of_size_times_programs(tmp_path: Path) -> None:
    folder, name = copy_entry(tmp_path, "softmax_w4")
    edit_metadata(folder, name, global_scratch_size=256)
    kernel = trace(launch("softmax_w4"), folder)
    args = dict(kernel.launch.arguments)
    assert args["4 (global_scratch)"] == "zero-filled buffer (512 B)"  # 256 B x 2 programs
    assert args["5 (profile_scratch)"] == "0"


def test_cluster_dims_multiply_the_grid_and_older_targets_are_read(tmp_path: Path) -> None:
    folder, name = copy_entry(tmp_path, "softmax_w4")
    edit_metadata(folder, name, cluster_dims=[2, 1, 1], target=["cuda", 90, 32])
    entry = read_entry(folder / f"{name}.json")
    assert (entry.cluster_dims, entry.arch, entry.block) == ((2, 1, 1), "sm_90", (128, 1, 1))
    kernel = trace(launch("softmax_w4"), folder)
    assert kernel.launch.grid == (4, 1, 1)
    edit_metadata(folder, name, target={"backend": "cuda", "arch": 80, "warp_size": 32})
    with pytest.raises(ShmemError, match="the metadata says sm_80 and the cubin is for sm_90") as e:
        trace(launch("softmax_w4"), folder)
    assert e.value.code == "invalid-kernel"


def test_an_older_ttgir_without_names_takes_them_from_the_python_def(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DATA.parent.parent.parent)
    folder, name = copy_entry(tmp_path, "softmax_w4")
    ttgir = folder / f"{name}.ttgir"
    text = ttgir.read_text()
    for k, arg in enumerate(("out_ptr", "in_ptr", "n_cols", "row_stride")):
        text = text.replace(f"%{arg}: ", f"%arg{k}: ").replace(f'loc("{arg}"(#loc))', "loc(#loc)")
    first = text.index("#loc = loc(")
    line_end = text.index("\n", first)
    def_line = text[first:line_end].rsplit(":", 2)
    # compiled elsewhere: the file is found by its trailing parts under the current folder
    source = "/elsewhere/checkout/tests/data/triton/kernels.py"
    text = text[:first] + f'#loc = loc("{source}":{def_line[1]}:{def_line[2]}' + text[line_end:]
    ttgir.write_text(text)
    names = [p.name for p in read_entry(folder / f"{name}.json").params]
    assert names == ["out_ptr", "in_ptr", "n_cols", "row_stride"]


def test_several_entries_of_one_name_are_listed_to_choose_from() -> None:
    with pytest.raises(ShmemError) as err:
        open_entry(DATA / "cache", "softmax_rows")
    text = err.value.message
    assert "2 entries of 'softmax_rows'" in text
    assert "num_warps=4, num_stages=3, shared=16, tensor shapes 1024" in text
    assert "num_warps=8, num_stages=3, shared=32, tensor shapes 2048" in text
    assert open_entry(DATA / "cache", "layernorm_rows").name == "layernorm_rows"
    with pytest.raises(ShmemError, match="no Triton cache entry of a kernel named 'nope'"):
        open_entry(DATA / "cache", "nope")


def test_a_cache_root_takes_a_prefix_or_a_part_of_a_name_as_a_cubin_does() -> None:
    # the names held: layernorm_rows, matmul_tiles (4), softmax_rows (2), transpose_tiles
    assert open_entry(DATA / "cache", "layernorm").name == "layernorm_rows"
    assert open_entry(DATA / "cache", "transpose").name == "transpose_tiles"
    assert open_entry(DATA / "cache", "norm_r").name == "layernorm_rows"  # a part
    with pytest.raises(ShmemError) as err:  # a prefix of a name with two entries
        open_entry(DATA / "cache", "softmax")
    assert "2 entries of 'softmax_rows'" in err.value.message
    with pytest.raises(ShmemError) as err:
        open_entry(DATA / "cache", "_rows")  # a part of two names
    assert err.value.message == (
        "--kernel '_rows' is ambiguous; it matches: layernorm_rows, softmax_rows"
    )


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["trace", *args])


def test_the_command_traces_an_entry_folder_each_file_and_root() -> None:
    entry = launch("layernorm")
    folder = DATA / entry["entry"]
    want = run(str(folder), "--grid", "2", "-a", "n_cols=768", "-a", "eps=1e-5", "-f", "json")
    assert want.exit_code == 0, want.output
    totals = json.loads(want.output)["files"][0]["kernels"][0]["totals"]
    # any file of the entry names it: a user points at the one their editor has open
    for kind in (".json", ".cubin", ".ttgir", ".ptx"):
        path = folder / f"layernorm_rows{kind}"
        got = run(str(path), "--grid", "2", "-a", "n_cols=768", "-a", "eps=1e-5", "-f", "json")
        assert json.loads(got.output)["files"][0]["kernels"][0]["totals"] == totals
    root = run(str(DATA / "cache"), "-k", "layernorm_rows", "-g", "2", "-a", "n_cols=768", "-fjson")
    assert json.loads(root.output)["files"][0]["kernels"][0]["totals"] == totals


def test_a_file_with_no_entry_beside_it_is_not_a_triton_entry(tmp_path: Path) -> None:
    lone = tmp_path / "layernorm_rows.ttgir"
    shutil.copyfile(DATA / launch("layernorm")["entry"] / "layernorm_rows.ttgir", lone)
    result = run(str(lone), "--grid", "2")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "a file of a Triton cache entry, traced with its .json and .cubin" in result.output


def test_a_triton_cubin_copied_out_of_its_entry_says_what_the_entry_holds(tmp_path: Path) -> None:
    entry = DATA / launch("layernorm")["entry"]
    lone = tmp_path / "alone" / "layernorm_rows.cubin"
    lone.parent.mkdir()
    shutil.copyfile(entry / "layernorm_rows.cubin", lone)
    result = run(str(lone), "--grid", "2")
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert said.startswith(f"{lone}: error: this cubin is from a Triton cache entry")
    assert "its line table names kernels.py" in said
    assert "layernorm_rows.json and layernorm_rows.ttgir are not beside it" in said
    assert "Trace the entry folder" in said and "is the cubin's own .reqntid" in said
    assert "--block is required" not in said
    # with its metadata but not its TTGIR: only the TTGIR is missing
    shutil.copyfile(entry / "layernorm_rows.json", lone.with_suffix(".json"))
    said = " ".join(run(str(lone), "--grid", "2").output.split())
    assert "layernorm_rows.ttgir is not beside it" in said
    # what it says to give traces the cubin alone, its block its own (num_warps x 32)
    meta = json.loads((entry / "layernorm_rows.json").read_text())
    shared = str(meta["shared"])
    alone = run(str(lone), "--dynamic-smem", shared, "-a", "3=768", "-fjson")
    assert alone.exit_code == 0, alone.output
    traced = json.loads(alone.output)["files"][0]["kernels"][0]
    assert traced["block"] == [meta["num_warps"] * 32, 1, 1]


def test_the_command_refuses_a_cluster_or_too_little_shared_memory_for_tritons() -> None:
    """layernorm_rows (num_warps=4, one CTA a program, 16 bytes of shared) as Triton's launcher
    never launches it: in clusters of 2 (which traced a 2 x 1 grid as one cluster), or with
    less dynamic shared memory than its metadata's (which ended at its first shared access
    told to 'give --dynamic-smem', which the user had)."""
    entry = str(DATA / launch("layernorm")["entry"])
    given = ("--grid", "2", "-a", "n_cols=768")
    result = run(entry, *given, "--cluster", "2")
    assert result.exit_code == 2
    assert (
        "a Triton kernel runs in the clusters of its metadata (cluster_dims, or num_ctas x 1 x 1:"
        " this entry's 1x1x1); leave out --cluster, or trace another entry"
    ) in " ".join(result.output.split())
    result = run(entry, *given, "--dynamic-smem", "8")
    assert result.exit_code == 2
    assert (
        "--dynamic-smem 8: this Triton kernel uses 16 bytes of dynamic shared memory (its "
        "metadata's shared, which Triton's launcher passes); leave out --dynamic-smem"
    ) in " ".join(result.output.split())
    assert run(entry, *given, "--cluster", "1", "--dynamic-smem", "64").exit_code == 0


def test_the_command_refuses_a_block_that_is_not_tritons() -> None:
    result = run(str(DATA / launch("layernorm")["entry"]), "--block", "256")
    assert result.exit_code == 2
    assert "a Triton kernel runs with num_warps * 32 = 128 threads" in result.output


def test_the_command_lists_the_entries_of_a_root() -> None:
    result = run(str(DATA / "cache"), "--kernel", "matmul_tiles")
    assert result.exit_code == 2
    assert "4 entries of 'matmul_tiles'; choose one (--kernel HASH)" in result.output
    assert result.output.count("matmul_tiles  num_warps=") == 4


def test_the_command_takes_an_entry_of_a_root_by_the_start_of_its_hash() -> None:
    """The listing's first column, the entry's folder (its hash), or the start of it, picks
    that entry from the root: the fp16 matmul of 2 warps and 2 stages (BNA37...)."""
    args = ("--grid", "2,2", "-a", "m=64", "-a", "n=64", "-a", "k=128", "--no-tables")
    result = run(str(DATA / "cache"), "--kernel", "BNA37", *args)
    assert result.exit_code == 0, result.output
    whole = run(str(DATA / "cache" / "BNA37UX6NG47NQSUZID23JEHSIPE3YFLJEPGHWSGJUGSKGQ6TXBA"), *args)
    assert "matmul_tiles  sm_90" in result.output.splitlines()[0]
    assert result.output.split("\narguments: ")[1] == whole.output.split("\narguments: ")[1]


def test_metadata_that_is_not_tritons_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k.json").write_text('{"kernels": []}')
    result = run(str(tmp_path / "k.json"))
    assert result.exit_code == 2
    assert "not Triton metadata" in result.output
    folder, name = copy_entry(tmp_path, "softmax_w4")
    (folder / f"{name}.ttgir").unlink()
    result = run(str(folder / f"{name}.json"))
    assert result.exit_code == 2 and "has no softmax_rows.ttgir" in result.output


def test_tritons_group_file_names_the_entry_beside_it(tmp_path: Path) -> None:
    folder, name = copy_entry(tmp_path, "softmax_w4")
    files = {f"{name}{kind}": str(folder / f"{name}{kind}") for kind in (".cubin", ".json")}
    (folder / f"__grp__{name}.json").write_text(json.dumps({"child_paths": files}))
    assert open_entry(folder / f"__grp__{name}.json", None).name == name
    # a folder holding a group file is still one entry
    assert open_entry(folder, None).cubin == folder / f"{name}.cubin"


def test_entries_of_several_triton_versions_are_listed_with_their_version(
    tmp_path: Path,
) -> None:
    # a cache kept across an upgrade holds one entry per version of the same compile: the
    # metadata's triton_version (Triton 3.3 on) tells them apart; 3.2's names none
    for version in ("3.2.0", "3.3.1", "3.6.0"):
        for meta in (DATA / "versions" / version / "cache").glob("*/softmax_rows.json"):
            shutil.copytree(meta.parent, tmp_path / meta.parent.name)
    with pytest.raises(ShmemError) as err:
        open_entry(tmp_path, "softmax_rows")
    lines = err.value.message.splitlines()[1:]
    assert len(lines) == 3
    assert sorted(line.rsplit(", ", 1)[-1] for line in lines if "Triton 3" in line) == [
        "Triton 3.3.1",
        "Triton 3.6.0",
    ]
