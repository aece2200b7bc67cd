"""What `shmem trace` says of a Triton entry it cannot trace: the same real reason from the
cache root, the entry folder, its .json and its .cubin; and a host-side descriptor's arguments."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain

from .conftest import TEST_DATA, module_from_file

JIT = TEST_DATA / "triton" / "jit36"
HOST = next((JIT / "cache_abi7").glob("*/matmul_host_desc.json")).parent

pytestmark = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)


def _shmem(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["trace", *args])
    return result.exit_code, result.output


def test_every_way_to_name_an_unreadable_entry_gives_its_real_reason(tmp_path: Path) -> None:
    entry = tmp_path / "cache" / HOST.name
    shutil.copytree(HOST, entry)
    ttgir = entry / "matmul_host_desc.ttgir"
    # a parameter type shmem does not pass (here a tuple in the descriptor's place)
    ttgir.write_text(
        ttgir.read_text().replace("!tt.tensordesc<tensor<64x32xf16, #shared>>", "!tt.tuple<i32>", 1)
    )
    why = "parameter a_desc has the type !tt.tuple<i32>, which shmem cannot pass yet"
    for where in ("cache", f"cache/{entry.name}", f"cache/{entry.name}/matmul_host_desc.json",
                  f"cache/{entry.name}/matmul_host_desc.cubin"):  # fmt: skip
        code, out = _shmem(str(tmp_path / where), "--kernel", "matmul_host_desc", "-g", "1")
        assert code == 2 and why in out, (where, out)
        assert "no Triton cache entry" not in out


def test_a_host_side_descriptor_not_given_says_how_to_give_it() -> None:
    code, out = _shmem(str(HOST), "-g", "2,2", "-a", "k=128")
    assert code == 2
    assert "a_desc is a host-side tensor descriptor" in out
    assert "--arg a_desc=tensordesc:shape=256x256,strides=256x1" in out


def test_a_descriptor_of_the_wrong_rank_is_refused_in_words() -> None:
    args = ["-a", "k=128", "-a", "a_desc=tensordesc:shape=128,strides=1"]
    code, out = _shmem(str(HOST), "-g", "2,2", *args)
    assert code == 2 and "has 2 dimensions; give 2 sizes" in out


def test_the_parameters_of_a_descriptor_are_named_after_it() -> None:
    code, out = _shmem(str(HOST), "--list-params")
    assert code == 0
    rows = [line.split()[:4] for line in out.splitlines()[2:7]]
    assert rows == [
        ["0", "a_desc", "CUtensorMap", "0x30"],
        ["1", "a_desc.shape0", "int32_t", "0xb0"],
        ["2", "a_desc.shape1", "int32_t", "0xb4"],
        ["3", "a_desc.stride0", "int64_t", "0xb8"],
        ["4", "a_desc.stride1", "int64_t", "0xc0"],
    ]


def test_a_name_for_an_unnamed_older_ttgir_says_where_names_come_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from .test_trace_triton import copy_entry

    folder, name = copy_entry(tmp_path, "softmax_w4")
    ttgir = folder / f"{name}.ttgir"
    text = ttgir.read_text()
    for k, arg in enumerate(("out_ptr", "in_ptr", "n_cols", "row_stride")):
        text = text.replace(f"%{arg}: ", f"%arg{k}: ").replace(f'loc("{arg}"(#loc))', "loc(#loc)")
    ttgir.write_text(text)  # as Triton 3.3 writes it; its Python file is nowhere in the tree
    monkeypatch.chdir(tmp_path)
    code, out = _shmem(str(folder), "-g", "1", "-a", "n_cols=1000")
    flat = " ".join(out.split())
    assert code == 2 and "Traceback" not in out
    assert "does not name the parameters" in flat and "arg0, arg1, arg2, arg3" in flat
    assert "--source-root" in flat and "--arg 0=" in flat
    # by position it traces
    code, out = _shmem(str(folder), "-g", "1", "-a", "2=1000", "-a", "3=1024", "--no-tables")
    assert code == 0, out


def test_an_entry_compiled_ahead_of_time_keeps_the_def_an_unnamed_ttgir_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Triton 3.2-3.4 write %arg0...: trace_triton's entry gets a copy of the kernel's own
    file, so the names come from its def wherever the file lies (a folder outside any tree)."""

    from shmem_cli.trace.triton.cache import read_entry
    from shmem_cli.trace.triton.compile import keep_source, ttgir_named

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "kernels.py").write_text(
        "from __future__ import annotations\n\n\n"
        "def softmax_rows(out_ptr, in_ptr, n_cols, row_stride, BLOCK: tl.constexpr):\n"
        "    pass\n"
    )
    module = module_from_file("mine_kernels", mine / "kernels.py")
    old = next((TEST_DATA / "triton" / "versions" / "3.3.1" / "cache").glob("*/softmax_rows.json"))
    entry = tmp_path / "entry"
    shutil.copytree(old.parent, entry)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    names = [p.name for p in read_entry(entry / "softmax_rows.json").params]
    assert names == ["arg0", "arg1", "arg2", "arg3"]  # the def compiled is nowhere in reach
    assert not ttgir_named((entry / "softmax_rows.ttgir").read_text(), "softmax_rows", entry)
    keep_source(module.softmax_rows, entry)
    assert (entry / "kernels.py").read_bytes() == (mine / "kernels.py").read_bytes()
    names = [p.name for p in read_entry(entry / "softmax_rows.json").params]
    assert names == ["out_ptr", "in_ptr", "n_cols", "row_stride"]
    # a TTGIR that names its parameters needs no copy
    named = next(
        (TEST_DATA / "triton" / "versions" / "3.6.0" / "cache").glob("*/softmax_rows.json")
    )
    assert ttgir_named(named.with_suffix(".ttgir").read_text(), "softmax_rows", named.parent)


def test_one_rule_says_a_ttgir_names_no_parameters() -> None:
    """read_entry (look for the def), trace_triton (keep a copy of it) and the --arg message
    ask the same question: an older Triton writes %arg0, %arg1, ... for every parameter; a
    TTGIR that names some (a parameter the user called arg1 among them) has its names."""
    from shmem_cli.trace.triton.ttgir import unnamed

    assert unnamed(["arg0", "arg1", "arg12"])
    assert not unnamed(["out_ptr", "arg1"])
    assert not unnamed(["arg0x", "arg"])
    assert not unnamed([])


DESC = "tensordesc:shape=256x256,strides=256x1"
DESCS = ["-a", f"a_desc={DESC}", "-a", f"b_desc={DESC}", "-a", f"c_desc={DESC}"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-a", "k=128"], "a_desc is a host-side tensor descriptor"),
        (["-a", "a_desc=tensordesc:shape=128,strides=1"], "has 2 dimensions; give 2 sizes"),
        ([*DESCS, "-a", "kk=2"], "--arg kk: the compiled kernel has no parameter of that name"),
        ([*DESCS, "-a", "k=abc"], "--arg 15 (k): 'abc' is not a number"),
    ],
)
def test_an_entry_s_arguments_are_checked_before_its_cubin_is_disassembled(
    args: list[str], said: str, tool_runs: list[str]
) -> None:
    code, out = _shmem(str(HOST), "-g", "2,2", *args)
    assert code == 2 and said in " ".join(out.split()), out
    assert "nvdisasm" not in tool_runs, tool_runs


def test_a_good_launch_still_disassembles_the_entry_once(tool_runs: list[str]) -> None:
    code, out = _shmem(str(HOST), "-g", "2,2", "-a", "k=128", *DESCS, "--no-tables")
    assert code == 0, out
    assert tool_runs.count("nvdisasm") == 1, tool_runs
