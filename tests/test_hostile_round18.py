"""Hostile inputs of the eighteenth adversarial round (docs/robustness.md, "What was found and
fixed", item 18): a FIFO or a device named by a computed ``#include`` (refused at the
``#include`` before nvcc runs where the source's own macros name it, and the compile stopped
at once where only the compile can tell), and ``shmem verify``'s tools, each run for a
bounded time that is named with the way around it.

Each compile here has a short ``--compile-time-limit``: were the refusal lost, the test
would fail on that limit's message instead of waiting for it.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.directive_scan import MAX_EXPANSION, Macro, computed_targets, definition
from shmem_cli.plumbing.tool_process import ToolRefused, run_tool

from .conftest import needs_nvcc
from .hostile import refused, shmem
from .test_verify_runner import SPEC, fake_cuda  # noqa: F401 - the fixture, used by name

KERNEL = "__global__ void k(int *out) { out[threadIdx.x] = 1; }\n"
LIMIT = ("--compile-time-limit", "20")


def _kernel(folder: Path, text: str, name: str = "k.cu") -> Path:
    (folder / ".git").mkdir(exist_ok=True)  # the folder is the kernel's source tree
    source = folder / name
    source.write_text(text + KERNEL)
    return source


# --- what a computed include names, worked out by hand ----------------------------------------


def _macros(*defines: str) -> dict[str, list[Macro]]:
    table: dict[str, list[Macro]] = {}
    for text in defines:
        made = definition(text)
        assert made is not None
        table.setdefault(made[0], []).append(made[1])
    return table


def test_a_computed_include_is_expanded_with_the_files_macros() -> None:
    stringify = (" S(x) #x", " T(x) S(x)")
    assert computed_targets(" H", _macros(' H "pipe.h"')) == [("pipe.h", True)]
    assert computed_targets(" T(pipe.h)", _macros(*stringify)) == [("pipe.h", True)]
    pasted = _macros(*stringify, " P(a, b) T(a ## b)")
    assert computed_targets(" P(pi, pe.h)", pasted) == [("pipe.h", True)]
    assert computed_targets(" <D/x.h>", _macros(" D dir")) == [("dir/x.h", False)]
    assert computed_targets(" L(x.h)", _macros(" L(n) <dir/n>")) == [("dir/x.h", False)]
    both = _macros(' H "a.h"', ' H "b.h"')  # one per branch of an #if: both are tried
    assert computed_targets(" H", both) == [("a.h", True), ("b.h", True)]
    assert computed_targets(" CUDA_STD_HEADER(x)", {}) == []  # the toolkit's: not known here
    # a splice inside the name; words after the first header name (the compiler warns)
    assert computed_targets(" H", _macros(' H "pi\\\npe.h"')) == [("pipe.h", True)]
    assert computed_targets(" H", _macros(' H "pipe.h" junk')) == [("pipe.h", True)]


def test_a_computed_include_that_expands_without_bound_gives_nothing() -> None:
    # each level doubles: 2^30 tokens, stopped at MAX_EXPANSION
    table = _macros(" A0 x", *(f" A{k + 1} A{k} A{k}" for k in range(30)))
    assert MAX_EXPANSION < 2**30
    assert computed_targets(" A30", table) == []
    assert computed_targets(" B", _macros(" B B B")) == []  # a macro names itself


# --- refused before nvcc: the source's own macros name the FIFO --------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "text",
    [
        '#define H "pipe.h"\n#include H\n',
        "#define S(x) #x\n#define T(x) S(x)\n#include T(pipe.h)\n",
        "#define S(x) #x\n#define P(a, b) S(a ## b)\n#include P(pi, pe.h)\n",
    ],
    ids=["object-like", "stringified", "pasted"],
)
def test_a_fifo_named_by_a_computed_include_is_refused_at_the_include(
    tmp_path: Path, text: str
) -> None:
    os.mkfifo(tmp_path / "pipe.h")
    source = _kernel(tmp_path, text)
    line = text.count("\n")
    ran = shmem("trace", str(source), "--block", "32", *LIMIT)
    refused(
        ran,
        f"k.cu:{line}:1: error: #include names 'pipe.h' through a macro, and it is a FIFO "
        "(named pipe), not a regular file",
        "include regular files only",
        seconds=15,
    )


def test_a_header_named_by_a_computed_include_is_read_for_its_own_includes(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "pipe.h")
    (tmp_path / "inner.h").write_text('#include "pipe.h"\n')
    source = _kernel(tmp_path, '#define H "inner.h"\n#include H\n')
    ran = shmem("trace", str(source), "--block", "32", *LIMIT)
    refused(ran, "inner.h:1:1: error: #include of 'pipe.h'", "FIFO (named pipe)", seconds=15)


@pytest.mark.slow
def test_a_device_or_a_folder_named_by_a_computed_include_is_refused(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for target, kind in (("/dev/zero", "a character device"), ("sub", "a folder")):
        source = _kernel(tmp_path, f'#define H "{target}"\n#include H\n')
        ran = shmem("trace", str(source), "--block", "32", *LIMIT)
        refused(ran, "k.cu:2:1: error: #include names", f"it is {kind}, not a regular", seconds=15)


def test_has_include_of_a_fifo_is_refused_at_the_directive(tmp_path: Path) -> None:
    # gcc opens the file to answer __has_include: it would wait on the FIFO
    os.mkfifo(tmp_path / "pipe.h")
    (tmp_path / "sub.h").mkdir()  # a folder it passes over: no reason
    source = _kernel(
        tmp_path, '#if __has_include("sub.h")\n#elif __has_include("pipe.h")\n#endif\n'
    )
    ran = shmem("trace", str(source), "--block", "32", *LIMIT)
    refused(ran, "k.cu:2:1: error: __has_include names 'pipe.h', and it is a FIFO", seconds=15)


def test_a_plain_include_of_a_fifo_is_refused_at_the_include(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.h")
    source = _kernel(tmp_path, '#include "pipe.h"\n')
    ran = shmem("trace", str(source), "--block", "32", *LIMIT)
    refused(ran, "k.cu:1:1: error: #include of 'pipe.h'", "a FIFO (named pipe)", seconds=15)


# --- stopped at once: only the compile knows the name ---------------------------------------


def test_a_tool_waiting_on_a_fifo_or_reading_a_device_is_stopped_at_once(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for target, said in ((pipe, f"waits to open {pipe}, a FIFO"), ("/dev/zero", "a character")):
        # a byte read and the file held open: the watch, not a memory limit, must end it
        hold = f"import time; f = open({str(target)!r}, 'rb'); f.read(1); time.sleep(30)"
        reader = [sys.executable, "-c", hold]
        with pytest.raises(ToolRefused, match=said):
            run_tool(reader, timeout=20, special=True, memory_limit=1 << 30)
    # a random device read for a seed and closed (cicc does), and /dev/null, are no reason;
    # one held open past RANDOM_SECONDS (1 s) is read without end
    hold = "import time; f = open('/dev/urandom', 'rb'); f.read(4); time.sleep(30)"
    with pytest.raises(ToolRefused, match="reads /dev/urandom without end"):
        run_tool([sys.executable, "-c", hold], timeout=20, special=True)
    seed = "open('/dev/urandom', 'rb').read(4); open('/dev/null').read()"
    assert run_tool([sys.executable, "-c", seed], timeout=20, special=True).returncode == 0


@pytest.mark.slow
@needs_nvcc
def test_a_fifo_named_through_a_library_macro_stops_the_compile_at_once(tmp_path: Path) -> None:
    # the macro is a library's (a typed -I folder, whose headers the scan does not read)
    library = tmp_path / "lib"
    library.mkdir()
    (library / "names.h").write_text('#define H "pipe.h"\n#define Z "/dev/zero"\n')
    os.mkfifo(tmp_path / "pipe.h")
    for name, said in (("H", f"waits to open {tmp_path / 'pipe.h'}, a FIFO"), ("Z", "/dev/zero")):
        source = _kernel(tmp_path, f'#include "names.h"\n#include {name}\n')
        ran = shmem("trace", str(source), "--block", "32", f"--nvcc-arg=-I{library}", *LIMIT)
        refused(
            ran,
            "k.cu: error: nvcc was stopped: cc1plus ",
            said,
            "a header or a computed #include (a macro's name) names it",
            seconds=15,
        )


@needs_nvcc
def test_a_generated_source_whose_line_names_itself_is_traced(tmp_path: Path) -> None:
    # `#line 1 "k.cu"` (a generator's): the name is the source's folder's, never opened by
    # nvcc; it was taken in shmem's build folder and the build refused as reading outside
    source = _kernel(tmp_path, '#line 1 "k.cu"\n')
    result = CliRunner().invoke(main, ["trace", str(source), "--block", "32", *LIMIT])
    assert result.exit_code == 0, result.output
    assert "outside the kernel's source tree" not in result.output


def test_a_socket_given_as_a_spec_is_named_a_socket(tmp_path: Path) -> None:
    # opening a socket fails (ENXIO): it was "cannot read spec: No such device or address"
    path = tmp_path / "s.yaml"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        result = CliRunner().invoke(main, ["analyze", str(path)])
    assert result.exit_code == 2, result.output
    assert "cannot read spec: it is a socket, not a regular file" in result.output


# --- shmem verify's tools have a time limit ------------------------------------------------


def _sleeper(folder: Path, name: str) -> None:
    tool = folder / "bin" / name
    tool.write_text(
        f"#!{sys.executable}\nimport sys, time\n"
        "if '--version' in sys.argv: print('1.0'); sys.exit(0)\ntime.sleep(60)\n"
    )
    tool.chmod(0o755)


@pytest.mark.parametrize(
    ("tool", "option"), [("nvcc", "--compile-time-limit"), ("ncu", "--profile-time-limit")]
)
def test_verify_stops_a_tool_at_its_time_limit(
    fake_cuda: Path,  # noqa: F811 - the fixture
    tool: str,
    option: str,
) -> None:
    _sleeper(fake_cuda, tool)
    result = CliRunner().invoke(main, ["verify", SPEC, option, "0.5"])
    assert result.exit_code == 2, result.output
    assert f"{tool} did not finish within 0.5 s, shmem's limit: give {option} SECONDS" in (
        result.output
    )
    assert "or write the benchmark with --emit DIR and run its run.sh yourself" in result.output
    assert "Traceback" not in result.output


def test_verify_time_limits_are_finite_numbers_of_seconds() -> None:
    for option in ("--compile-time-limit", "--profile-time-limit"):
        for value in ("nan", "0", "-1", "1e9"):
            result = CliRunner().invoke(main, ["verify", SPEC, option, value])
            assert result.exit_code == 2, (option, value, result.output)
            assert option in result.output


def test_verify_leaves_no_sleeping_tool_behind(fake_cuda: Path) -> None:  # noqa: F811
    _sleeper(fake_cuda, "ncu")
    CliRunner().invoke(main, ["verify", SPEC, "--profile-time-limit", "0.5"])
    tool = str(fake_cuda / "bin" / "ncu").encode()
    alive = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            alive += [entry] if tool in Path(f"/proc/{entry}/cmdline").read_bytes() else []
        except OSError:
            continue  # gone meanwhile
    assert not alive
