"""Issue 18, code execution: a spec (or --nvcc-arg) never runs a command or reads a file
outside the kernel's source tree.

nvcc hands -D values, paths and -Xcompiler options to a shell (CUDA 13 writes
``-D "X=$(cmd)"`` into a command line that sh reads), so every argument goes through the
allowlist of ``trace/nvcc_args.py``; every ``#include``/``#line`` of a .cu is checked by
``trace/kernel_sources.py`` before nvcc runs. Each hostile case is refused with the reason
(exit 2, the spec's line and column), and the marker file its payload would create does not
exist afterwards.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.directive_scan import directives
from shmem_cli.cuda.nvcc_args import NvccArgError, check_nvcc_args
from shmem_cli.cuda.nvcc_messages import compiler_messages
from shmem_cli.cuda.sources import SourceTree, check_source
from shmem_cli.plumbing.errors import ShmemError

from .conftest import HANG_S

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

KERNEL = "__global__ void k(int *p) { p[threadIdx.x] = 1; }\n"


def allowed(args: list[str], base: Path = Path("/")) -> list[str]:
    return check_nvcc_args(args, base=base, inside=lambda _: True)[0]


def refused(args: list[str], tree: Path | None = None) -> str:
    inside = (lambda p: tree in p.parents or p == tree) if tree else (lambda _: True)
    with pytest.raises(NvccArgError) as info:
        check_nvcc_args(args, base=tree or Path("/"), inside=inside)
    return info.value.message


def test_what_a_kernel_build_needs_is_allowed_in_one_form(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    got = check_nvcc_args(
        [
            "-DTILE=32",
            "-D",
            "N=-1",
            "--define-macro=T=float",
            "-DF",
            "-UX",
            "-Iinc",
            "--include-path",
            "inc",
            "-std=c++17",
            "--expt-relaxed-constexpr",
            "--extended-lambda",
            "-G",
            "-lineinfo",
            "-maxrregcount=64",
            "-Xptxas",
            "-O3,-v",
            "--ptxas-options=-dlcm=cg",
            "-use_fast_math",
            "-ftz=true",
        ],
        base=tmp_path,
        inside=lambda p: tmp_path in p.parents,
    )[0]
    inc = str((tmp_path / "inc").resolve())
    assert got == [
        "-DTILE=32",
        "-DN=-1",
        "-DT=float",
        "-DF",
        "-UX",
        f"-I{inc}",
        f"-I{inc}",
        "-std=c++17",
        "--expt-relaxed-constexpr",
        "--extended-lambda",
        "-G",
        "-lineinfo",
        "-maxrregcount=64",
        "-Xptxas=-O3,-v",
        "-Xptxas=-dlcm=cg",
        "-use_fast_math",
        "-ftz=true",
    ]
    assert allowed(got) == got  # the checked form passes the check again (compile_cu does)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["-Xcompiler", "-DX=1;touch pwned;"], "through a shell"),
        (["-Xcompiler=-fplugin=/tmp/x.so"], "through a shell"),
        (["--compiler-options", "-x"], "through a shell"),
        (["--compiler-bindir=/abs/script"], "must not choose a program"),
        (["-ccbin", "/abs/script"], "must not choose a program"),
        (["-include", "/etc/shadow"], "includes a file by name"),
        (["--pre-include=/etc/shadow"], "includes a file by name"),
        (["-MD", "-MF", "/tmp/x"], "dependency file"),
        (["-M"], "dependency file"),
        (["--time", "/tmp/x"], "writes a file"),
        (["--keep-dir", "/tmp"], "writes files into a folder"),
        (["--keep"], "intermediate files"),
        (["-o", "/tmp/x"], "output file"),
        (["--options-file", "/etc/shadow"], "reads more arguments"),
        (["-optf", "x"], "reads more arguments"),
        (["-arch=sm_80"], "sets the target"),
        (["--run"], "runs the program"),
        (["@/etc/shadow"], "not allowed"),
        (["-odir=/tmp"], "folder of its choosing"),
        (["--dryrun"], "changes what nvcc does"),
    ],
)
def test_options_that_run_read_or_write_are_refused_with_the_reason(
    args: list[str], reason: str
) -> None:
    message = refused(args)
    assert reason in message and "is not allowed" in message


@pytest.mark.parametrize(
    "value",
    [
        "-DX=$(touch pwned)",
        "-DX=`touch pwned`",
        '-DX="a"',
        "-DX=a\\b",
        "-DX=1;touch pwned;",
        "-DX=1 -Xcompiler",
        "-DX=a\nb",
        "-D X=$(id)",
        "--define-macro=X=${HOME}",
        "-DX=*",
        "-D$(id)",
        "-DX(a)=a",
        "-U$(id)",
    ],
)
def test_a_macro_with_shell_or_quote_characters_is_refused(value: str) -> None:
    message = refused(value.split(" ", 1) if value.startswith("-D X") else [value])
    assert "-D" in message or "-U" in message


@pytest.mark.parametrize(
    "args",
    [
        ["-Xptxas", "--output-file=/tmp/x"],
        ["-Xptxas", "-O3,--compile-only"],
        ["-Xptxas=-knob", "x"],
        ["-std=gnu++17;touch"],
        ["-std=c++03"],
        ["-maxrregcount=$(id)"],
        ["-maxrregcount=100000"],
        ["-ftz=1;id"],
        ["-DX=1\x00"],
    ],
)
def test_values_of_allowed_options_are_checked_too(args: list[str]) -> None:
    refused(args)


def test_include_folders_stay_in_the_tree(tmp_path: Path) -> None:
    tree = tmp_path / "proj"
    (tree / "inc").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    assert "outside the kernel's source tree" in refused(["-I/etc"], tree)
    assert "outside the kernel's source tree" in refused(["-I../outside"], tree)
    os.symlink(tmp_path / "outside", tree / "link")
    assert "outside the kernel's source tree" in refused(["-Ilink"], tree)
    (tree / "$(touch x)").mkdir()
    assert "hand to a shell" in refused(["-I$(touch x)"], tree)
    assert "no such folder" in refused(["-Imissing"], tree)
    # CMake's -isystem is an include folder too, under the same rule
    assert "outside the kernel's source tree" in refused(["-isystem", "/etc"], tree)
    assert "outside the kernel's source tree" in refused(["-isystem=../outside"], tree)


def test_isystem_is_an_include_folder_and_a_spaced_one_says_so(tmp_path: Path) -> None:
    """-isystem (CMake's spelling for a library's headers, as CUTLASS's build writes it) in
    each form nvcc takes is passed as -I; '-I /x' typed as one argument names the folder
    ' /x', which is refused with the form to type."""
    (tmp_path / "inc").mkdir()
    inc = str(tmp_path / "inc")
    for args in (["-isystem", inc], [f"-isystem={inc}"], [f"-isystem{inc}"],
                 [f"--system-include={inc}"], ["--system-include", inc]):  # fmt: skip
        out, dirs = check_nvcc_args(args, base=tmp_path, inside=lambda _: True)
        assert out == [f"-I{inc}"] and [d.path for d in dirs] == [tmp_path / "inc"], args
    assert refused(["-I include"]) == (
        "-I ' include': a folder name that starts or ends with a space; give -Iinclude (one "
        "argument, no space) or -I and the folder as two"
    )


def test_a_programs_link_and_thread_options_are_taken_and_left_out() -> None:
    """A build line copied from a program's (llm.c's Makefile: ``-t=0``, ``--threads=0``; its
    dev/cuda files: ``-lcublas -lcublasLt``) is taken: nvcc ignores the link's options for a
    cubin and builds one target, so the build is the one without them."""
    args = ["-O3", "--threads=0", "-t=0", "-t", "4", "--threads", "2", "-lcublas",
            "-l", "cublasLt", "--library=nvidia-ml", "--library", "m", "-L/opt/lib",
            "-L", "/usr/lib/x86_64-linux-gnu/openmpi/lib/", "--library-path=/x",
            "-lineinfo", "--use_fast_math"]  # fmt: skip
    assert allowed(args) == ["-O3", "-lineinfo", "--use_fast_math"]
    assert refused(["-t=all"]) == "-t takes a number of threads, got 'all'"
    assert refused(["-lcu;id"]) == "-l takes a library's name, got 'cu;id'"
    assert refused(["-L="]) == "-L takes a folder, got ''"
    assert "needs a value after it" in refused(["-O3", "--threads"])
    # -t joined to its value is another option (-time is not -t ime); -lineinfo stays a flag
    assert "is not allowed" in refused(["-time"])
    assert refused(["--generate-code", "arch=compute_90,code=sm_90"]).startswith(
        "nvcc argument '--generate-code' is not allowed: it sets the target (use --arch"
    )


# --- the source tree --------------------------------------------------------------------------


def tree_with(tmp_path: Path, files: dict[str, str]) -> tuple[SourceTree, Path]:
    root = tmp_path / "proj"
    root.mkdir(exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return SourceTree((root.resolve(),)), root / "k.cu"


def refusal_of(tmp_path: Path, files: dict[str, str]) -> ShmemError:
    tree, source = tree_with(tmp_path, files)
    with pytest.raises(ShmemError) as info:
        check_source(source, tree)
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ('#include "/etc/passwd"\n', 1, 1, "absolute path"),
        ("int x;\n  #  include </etc/passwd>\n", 2, 3, "absolute path"),
        ('#include "../../../../../../../../etc/passwd"\n', 1, 1, "outside"),
        ("#include <../../../../../../../../etc/passwd>\n", 1, 1, "climbs out"),
        ("#include <cuda/../../../../../../etc/passwd>\n", 1, 1, "climbs out"),
        ('%:include "/etc/passwd"\n', 1, 1, "absolute path"),
        ('??=include "/etc/passwd"\n', 1, 1, "absolute path"),
        ('#inc\\\nlude "/etc/passwd"\n', 1, 1, "absolute path"),
        ('/* a */ # /* b */ include "/etc/passwd"\n', 1, 9, "absolute path"),
        ('#include_next "/etc/passwd"\n', 1, 1, "absolute path"),
        ('#import "/etc/passwd"\n', 1, 1, "absolute path"),
        ('#line 1 "/etc/passwd"\n', 1, 1, "#line names"),
        ('# 1 "/etc/passwd"\n', 1, 1, "#line names"),
        ('#pragma GCC dependency "/etc/passwd"\n', 1, 1, "dependency"),
        ('#embed "/etc/passwd"\n', 1, 1, "#embed"),
        ("#if __has_include(</etc/passwd>)\n#endif\n", 1, 1, "__has_include"),
        ('#if 0\n#include "/etc/passwd"\n#endif\n', 2, 1, "absolute path"),
        # a raw string whose delimiter hides a comment opener from a naive scanner
        ('auto s = u8\\\nR"x(" /* )x";\n#include "/etc/passwd"\n/* */\n', 3, 1, "absolute"),
        ('auto s = R"x(\\\n)x";\n', 1, 11, "raw string"),
        # a // comment continued by a backslash swallows the next line for both
        ('// \\\n#include "fine.h"\n#include "/etc/passwd"\n', 3, 1, "absolute path"),
    ],
)
def test_includes_and_line_markers_that_leave_the_tree_are_refused_where_written(
    tmp_path: Path, text: str, line: int, column: int, words: str
) -> None:
    err = refusal_of(tmp_path, {"k.cu": text + KERNEL})
    assert words in err.message
    assert (err.line, err.column) == (line, column)
    assert err.code == "refused"
    assert "root:" not in err.message


def test_a_header_is_followed_and_its_own_includes_checked(tmp_path: Path) -> None:
    err = refusal_of(
        tmp_path,
        {"k.cu": '#include "sub/a.h"\n' + KERNEL, "sub/a.h": 'int a;\n#include "../../x.h"\n'},
    )
    assert err.path is not None and err.path.endswith("a.h") and err.line == 2


def test_a_link_out_of_the_tree_is_outside(tmp_path: Path) -> None:
    tree, source = tree_with(tmp_path, {"k.cu": '#include "evil.h"\n' + KERNEL})
    os.symlink("/etc/passwd", source.parent / "evil.h")
    with pytest.raises(ShmemError, match="outside the kernel's source tree"):
        check_source(source, tree)


def test_a_fifo_or_binary_is_not_read_as_source(tmp_path: Path) -> None:
    tree, source = tree_with(tmp_path, {"k.cu": '#include "pipe.h"\n' + KERNEL})
    os.mkfifo(source.parent / "pipe.h")
    with pytest.raises(ShmemError, match="FIFO") as info:
        check_source(source, tree)
    # at the #include that names it (the header's own name, no place, before)
    assert (info.value.path, info.value.line, info.value.column) == (str(source), 1, 1)
    assert info.value.message.startswith("#include of 'pipe.h': cannot read CUDA source")
    source.write_bytes(b"\x7fELF\x02\x01\x00\x00junk")
    with pytest.raises(ShmemError, match="NUL byte: this is not CUDA source"):
        check_source(source, tree)


def test_what_stays_in_the_tree_passes(tmp_path: Path) -> None:
    tree, source = tree_with(
        tmp_path,
        {
            "k.cu": '#include "a.h"\n#include <cuda_runtime.h>\n#line 3 "k.cu"\n'
            'const char* s = "#include \\"/etc/passwd\\"";\n' + KERNEL,
            "a.h": "#pragma once\n#include <cstdint>\n",
        },
    )
    check_source(source, tree)


def test_the_scan_is_linear() -> None:
    import time

    text = "#if 0\n" + "k(" * 40000 + "\n#endif\n" + '"' + "/*" * 100000 + '"\n'
    start = time.perf_counter()
    assert len(list(directives(text * 10))) == 20
    assert time.perf_counter() - start < HANG_S  # a quadratic scan takes hours


def test_compiler_messages_never_quote_a_file() -> None:
    tree = SourceTree((Path("/proj"),))
    said = compiler_messages(
        '/proj/k.cu(3): error: identifier "Y" is undefined\n'
        "    p[threadIdx.x] = Y;\n"
        "                     ^\n"
        "/etc/shadow(1): error: unrecognized token root:$6$abc\n"
        "  root:$6$abc:19000:0:99999:7:::\n"
        "/etc/shadow:1:1: error: #error root:x\n"
        "    1 | root:x\n"
        '1 error detected in the compilation of "/proj/k.cu".\n',
        tree,
    )
    assert "root" not in said and "$6$" not in said
    assert '/proj/k.cu(3): error: identifier "Y" is undefined' in said
    assert "/etc/shadow(1): error (not shown" in said
    assert "p[threadIdx.x]" not in said


def test_a_header_nvcc_cannot_find_says_how_to_give_its_folder(tmp_path: Path) -> None:
    tree = SourceTree((Path("/proj"),))
    said = compiler_messages(
        "/proj/k.cu:1:10: fatal error: cute/tensor.hpp: No such file or directory\n"
        "    1 | #include <cute/tensor.hpp>\n"
        "compilation terminated.\n",
        tree,
    )
    assert said.splitlines()[-1] == (
        "hint: nvcc found no cute/tensor.hpp: give the folder that holds it with "
        "--nvcc-arg=-IFOLDER; CuTe and CUTLASS: --nvcc-arg=-I$CUTLASS/include"
    )
    # CUTLASS's utility headers (CuTe's tutorials include cutlass/util/print_error.hpp) are
    # not under include/
    util = compiler_messages(
        "/proj/k.cu:40:10: fatal error: cutlass/util/print_error.hpp: No such file or directory",
        tree,
    )
    assert util.splitlines()[-1] == (
        "hint: nvcc found no cutlass/util/print_error.hpp: give the folder that holds it with "
        "--nvcc-arg=-IFOLDER; CUTLASS's utilities: --nvcc-arg=-I$CUTLASS/tools/util/include"
    )
    own = compiler_messages(
        '/proj/k.cu(2): catastrophic error: cannot open source file "a/b.h"', tree
    )
    assert own.endswith(
        "hint: nvcc found no a/b.h: give the folder that holds it with --nvcc-arg=-IFOLDER"
    )
    # one an include root holds: that root's -I (the roots only permit reading)
    root = tmp_path / "cutlass" / "include"
    (root / "cute").mkdir(parents=True)
    (root / "cute" / "tensor.hpp").write_text("")
    missing = "/proj/k.cu:1:10: fatal error: cute/tensor.hpp: No such file or directory"
    in_root = compiler_messages(missing, tree, roots=(str(tmp_path), str(root)))
    assert in_root.splitlines()[-1] == (
        f"hint: nvcc found no cute/tensor.hpp, which the include root {root} holds: an include "
        f"root says what a build may read, -I where nvcc looks: add --nvcc-arg=-I{root}"
    )
    # a missing header named in a file outside the tree is not quoted, nor hinted at
    outside = compiler_messages(
        "/etc/x.h:1:10: fatal error: secret.h: No such file or directory", tree
    )
    assert "secret" not in outside and "hint" not in outside


def test_the_error_that_failed_a_build_is_shown_past_many_warnings() -> None:
    # a CUTLASS build: hundreds of warnings in the library's headers, then the one error
    tree = SourceTree((Path("/proj"),))
    lib = "/opt/cutlass/include/cutlass"
    warnings = [
        f'{lib}/conv/problem_size.h({200 + k}): warning #20013-D: calling a constexpr "get"'
        for k in range(40)
    ]
    error = "/proj/gemm.cu(30): error: incompatible __grid_constant__ annotation for parameter"
    text = "\n".join([*warnings[:20], error, *warnings[20:]])
    text += '\n1 error detected in the compilation of "/proj/gemm.cu".\n'
    said = compiler_messages(text, tree, ("/opt/cutlass/include",)).splitlines()
    assert len(said) == 15
    assert said[-1] == "... and 28 more lines (warnings)"  # 40 + 2 lines, 14 shown
    assert error in said and '1 error detected in the compilation of "/proj/gemm.cu".' in said
    # nvcc's order is kept: the warnings shown are the first 12, before the error
    assert said[:12] == warnings[:12] and said[12] == error
    # a warning nvcc repeats (once per compile pass) is shown once
    twice = compiler_messages("\n".join([warnings[0], warnings[0], error]), tree, (lib,))
    assert twice.splitlines() == [warnings[0], error]
    # few enough lines: every one, as before
    assert compiler_messages("\n".join([*warnings[:3], error]), tree, (lib,)).splitlines() == [
        *warnings[:3],
        error,
    ]


def test_an_error_in_a_typed_library_header_is_shown_with_the_kernels_line() -> None:
    tree = SourceTree((Path("/proj"),))
    lib = "/opt/cutlass/include/cute/atom"
    head = f'{lib}/copy_traits.hpp(128): error: static assertion failed with "no vectors"'
    text = (
        f"{head}\n"
        "    static_assert(decltype(size(rS) == Int<RegNumSrc>{})::value);\n"
        "          detected during:\n"
        f'            instantiation of "void cute::copy_unpack(...)" at line 103 of {lib}/c.hpp\n'
        '            instantiation of "void mine::load(...)" at line 12 of /proj/inc/load.h\n'
        '            instantiation of "void cute::copy(...)" at line 58 of /proj/k.cu\n'
        '1 error detected in the compilation of "/proj/k.cu".\n'
    )
    said = compiler_messages(text, tree, ("/opt/cutlass/include",))
    assert said.splitlines() == [
        head,
        "/proj/inc/load.h:12: note: instantiated from here (the kernel's own line)",
        '1 error detected in the compilation of "/proj/k.cu".',
    ]
    # not typed on the command line (an include root of the project's config, any other
    # folder): its words are not shown, the kernel's line still is
    hidden = compiler_messages(text, tree).splitlines()
    assert "no vectors" not in " ".join(hidden) and "(not shown" in hidden[0]
    assert hidden[1] == "/proj/inc/load.h:12: note: instantiated from here (the kernel's own line)"


# --- end to end -------------------------------------------------------------------------------


def spec_text(nvcc: list[str], source: str = "k.cu") -> str:
    items = ", ".join(repr(a).replace("'", '"') if "'" not in a else f'"{a}"' for a in nvcc)
    return (
        "name: t\nblock: [32]\nkernel:\n"
        f"  source: {source}\n"
        f"  nvcc: [{items}]\n"
        "arrays:\n  a: {dtype: float, shape: [32]}\n"
        "accesses:\n  - {array: a, index: [lane]}\n"
    )


def lint(folder: Path, *args: str) -> tuple[int, str]:
    old = os.getcwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, ["lint", "s.yaml", "--format", "json", *args])
    finally:
        os.chdir(old)
    assert "Traceback" not in result.output
    return result.exit_code, result.output


@pytest.mark.parametrize(
    "nvcc",
    [
        ["-Xcompiler", "-DX=1;touch pwned;"],
        ["-DX=$(touch pwned)"],
        ["-DX=`touch pwned`"],
        ["--compiler-bindir=/tmp/pwned-dir"],
        ["-include", "/etc/passwd"],
        ["-MD", "-MF", "pwned"],
        ["--time", "pwned"],
        ["--keep-dir", "."],
    ],
)
def test_a_hostile_spec_is_invalid_at_its_nvcc_entry_and_runs_nothing(
    tmp_path: Path, nvcc: list[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "s.yaml").write_text(spec_text(nvcc))
    status, out = lint(tmp_path)
    assert status == 2
    assert '"code": "SH100"' in out and '"line": 5' in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "k.cu", "s.yaml"]


@needs_nvcc
def test_an_include_of_a_system_file_is_refused_and_not_echoed(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.cu").write_text('#include "/etc/passwd"\n' + KERNEL)
    (tmp_path / "s.yaml").write_text(spec_text(["-DX=1"]))
    status, out = lint(tmp_path, "--format", "sarif")
    assert status == 2
    assert "root:" not in out and "absolute path" in out


def test_a_source_outside_the_tree_is_refused(tmp_path: Path) -> None:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    (tmp_path / "k.cu").write_text(KERNEL)
    (tmp_path / "proj" / "s.yaml").write_text(spec_text([], "../k.cu"))
    status, out = lint(tmp_path / "proj")
    assert status == 2 and "outside the kernel's source tree" in out


def test_trace_refuses_a_nvcc_arg_off_the_list(tmp_path: Path) -> None:
    (tmp_path / "k.cu").write_text(KERNEL)
    result = CliRunner().invoke(
        main, ["trace", str(tmp_path / "k.cu"), "-b", "32", "--nvcc-arg=-Xcompiler=-DX"]
    )
    assert result.exit_code == 2 and "through a shell" in result.output
    assert "Traceback" not in result.output


@needs_nvcc
def test_a_kernel_whose_path_holds_a_dollar_is_not_compiled(tmp_path: Path) -> None:
    folder = tmp_path / "$(touch pwned)"
    folder.mkdir()
    (folder / "k.cu").write_text(KERNEL)
    result = CliRunner().invoke(main, ["trace", str(folder / "k.cu"), "-b", "32"])
    assert result.exit_code == 2 and "hand to a shell" in result.output
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()


def test_an_error_in_a_file_outside_the_tree_says_how_to_have_it_quoted(tmp_path: Path) -> None:
    # a Triton cache root's kernel .py lies outside the cache (the trace's source tree):
    # the error is moved to the entry, its line said in words, never quoted; it did not say
    # that --source-root reads it
    from shmem_cli.plumbing.errors import SourcePos
    from shmem_cli.trace.tracer import outside_not_quoted

    (tmp_path / "cache").mkdir()
    (tmp_path / "src").mkdir()
    source = tmp_path / "src" / "kern.py"
    source.write_text("import triton\n" * 20)
    tree = SourceTree((tmp_path / "cache",))

    def moved(path: Path) -> str:
        exc = ShmemError("a global access outside every buffer", path=str(path))
        exc.pos = SourcePos(11, 1)
        out = outside_not_quoted(exc, str(tmp_path / "cache"), tree)
        assert out.path is None and out.pos is None  # nothing of the file quoted
        return out.message

    assert moved(source) == (
        f"a global access outside every buffer (at {source}:11, outside the kernel's source "
        f"tree: --source-root {source.parent} lets shmem read it and quote the line)"
    )
    gone = tmp_path / "elsewhere" / "kern.py"  # built on another machine: nothing to suggest
    assert moved(gone).endswith(f"(at {gone}:11, outside the kernel's source tree)")
