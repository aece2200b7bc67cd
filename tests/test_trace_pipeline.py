"""The trace pipeline as a library (shmem_cli.trace.pipeline): what lint and scripts call."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.pipeline import TraceRequest, arg_texts, kernel_parameters, trace_file

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvdisasm


def test_arg_texts_from_a_mapping() -> None:
    assert arg_texts({"wA": 64, 0: [128, 128, 1], "scale": 1.5}) == (
        "wA=64",
        "0=128,128,1",
        "scale=1.5",
    )


@needs_nvdisasm
def test_trace_file_gives_per_instruction_results() -> None:
    request = TraceRequest(DATA / "column_read.sm_90.cubin", block=(32, 32, 1))
    traced = trace_file(request)
    kernel = traced.kernels[0]
    by_op = {a.op: a for a in kernel.accesses}
    assert (by_op["load"].line, by_op["load"].cost.wavefronts) == (9, 1024)
    assert (by_op["store"].line, by_op["store"].cost.wavefronts) == (7, 32)


@needs_nvdisasm
def test_parameters_with_names_from_the_line_table_sources() -> None:
    request = TraceRequest(DATA / "basics.sm_90.cubin", kernel="tile_transpose_padded")
    ((kernel, params),) = kernel_parameters(request)
    assert kernel.mangled == "_Z21tile_transpose_paddedPfPKfi"
    assert [(p.name, p.size) for p in params] == [("out", 8), ("in", 8), ("n", 4)]


def test_errors_carry_a_code_and_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(toolchain, "DEFAULT_CUDA_BIN", str(tmp_path / "none"))
    monkeypatch.setattr(toolchain, "wheel_bin_dirs", lambda: [])
    cubin = DATA / "column_read.sm_90.cubin"
    with pytest.raises(ShmemError) as err:
        trace_file(TraceRequest(cubin, block=(32, 32, 1)))
    assert err.value.code == "tool-missing" and err.value.path == str(cubin)
    assert "pip install 'shmem[cuda]'" in err.value.message
    with pytest.raises(ShmemError) as err:
        trace_file(TraceRequest(DATA / "meta.sm_90.cubin", kernel="nope"))
    assert err.value.code == "invalid-kernel" and "no kernel matches" in err.value.message


def test_inlined_code_is_reported_at_the_innermost_user_line() -> None:
    from shmem_cli.cuda.sass import find_function, parse, source_lines

    header = "/usr/local/cuda/targets/x86_64-linux/include/device_atomic_functions.hpp"
    text = (
        '\t.section\t.text._Z1kPj,"ax",@progbits\n'
        '\t//## File "/src/k.cu", line 20\n'
        "        /*0000*/                   S2R R0, SR_TID.X ;\n"
        f'\t//## File "{header}", line 112 inlined at "/src/k.cu", line 11\n'
        '\t//## File "/src/k.cu", line 11 inlined at "/src/k.cu", line 30\n'
        '\t//## File "/src/k.cu", line 30\n'
        "        /*0010*/                   ATOMS.POPC.INC.32 RZ, [R9+URZ] ;\n"
        "        /*0020*/                   ATOMS.POPC.INC.32 RZ, [R10+URZ] ;\n"
        f'\t//## File "{header}", line 112\n'
        "        /*0030*/                   EXIT ;\n"
    )
    lines = source_lines(find_function(parse(text), "_Z1kPj"))
    assert lines == {
        0x00: ("/src/k.cu", 20),
        0x10: ("/src/k.cu", 11),  # the atomicAdd call in the inlined function, not the header
        0x20: ("/src/k.cu", 11),
        0x30: (header, 112),  # only toolkit code: its own line
    }


@pytest.mark.parametrize(
    "spelling",
    [["-ILIB"], ["-I", "LIB"], ["--include-path=LIB"], ["--include-path", "LIB"]],
    ids=["-IX", "-I X", "--include-path=X", "--include-path X"],
)
@pytest.mark.parametrize("relative", [False, True], ids=["absolute", "relative"])
def test_a_typed_include_folder_is_a_library_in_every_spelling(
    tmp_path: Path, spelling: list[str], relative: bool
) -> None:
    # the trace places a row at the user's own line, not a library header's: a folder the
    # user typed with -I is a library's, even inside the source tree, however it is spelled
    # (the build's own parse of the arguments says so: checked_inputs)
    from shmem_cli.cuda.cu_inputs import checked_inputs
    from shmem_cli.trace import user_lines

    src = tmp_path / "src"
    lib = src / "third_party" / "cutlass"
    lib.mkdir(parents=True)
    folder = "src/third_party/cutlass" if relative else str(lib)
    header, own = str(lib / "cute" / "copy.hpp"), str(src / "k.cu")
    request = TraceRequest(
        own,
        nvcc_args=tuple(a.replace("LIB", folder) for a in spelling),
        nvcc_base=str(tmp_path),
        source_roots=(str(src),),
        nvcc_trusted=True,
    )

    def user_files(nvcc_args: tuple[str, ...]) -> Callable[[str], bool]:
        tree = request.tree()
        built, _ = checked_inputs(tree, nvcc_args, base=tmp_path, trusted=True)
        return user_lines.user_files(tree, built.libraries)

    user = user_files(request.nvcc_args)
    assert not user(header)
    assert user(own) and user("k.cu")
    # without the argument that header is the tree's, so the user's
    assert user_files(())(header)
