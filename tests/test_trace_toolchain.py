"""Finding and running NVIDIA's tools (shmem_cli.cuda.toolchain): PATH, CUDA folders, wheels."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.cuda.toolchain import ToolError
from shmem_cli.trace.kernel import binaries

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvcc


def make_tool(folder: Path, name: str, body: str = "print('ok')") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text(f"#!{sys.executable}\n{body}\n")
    tool.chmod(0o755)
    return tool


@pytest.fixture
def bare(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An environment where no CUDA tool can be found: empty PATH, no CUDA_HOME, no wheels."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(toolchain, "wheel_bin_dirs", lambda: [])
    monkeypatch.setattr(toolchain, "DEFAULT_CUDA_BIN", str(tmp_path / "no-cuda" / "bin"))
    return tmp_path


def test_a_tool_on_path_is_found(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = make_tool(bare / "bin", "nvdisasm")
    monkeypatch.setenv("PATH", str(bare / "bin"))
    assert toolchain.which("nvdisasm") == str(tool)


def test_cuda_home_is_searched(bare: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = make_tool(bare / "cuda" / "bin", "nvcc")
    monkeypatch.setenv("CUDA_HOME", str(bare / "cuda"))
    assert toolchain.which("nvcc") == str(tool)


def test_wheel_folders_serve_the_disassemblers_only(
    bare: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel_bin = bare / "site" / "nvidia" / "cu13" / "bin"
    make_tool(wheel_bin, "nvdisasm")
    make_tool(wheel_bin, "cuobjdump")
    make_tool(wheel_bin, "nvcc")  # not a wheel tool: never taken from there
    monkeypatch.setattr(toolchain, "wheel_bin_dirs", lambda: [str(wheel_bin)])
    assert toolchain.which("nvdisasm") == str(wheel_bin / "nvdisasm")
    assert toolchain.which("cuobjdump") == str(wheel_bin / "cuobjdump")
    assert toolchain.which("nvcc") is None


def test_wheel_bin_dirs_finds_the_installed_layout() -> None:
    # whatever is installed, every folder listed is an nvidia/<package>/bin folder
    for folder in toolchain.wheel_bin_dirs():
        parts = Path(folder).parts
        assert parts[-1] == "bin" and parts[-3] == "nvidia"


@pytest.mark.parametrize(
    ("tool", "advice"),
    [
        ("nvdisasm", "pip install 'shmem[cuda]'"),
        ("cuobjdump", "pip install 'shmem[cuda]'"),
        ("nvcc", "install the CUDA toolkit"),
    ],
)
def test_a_missing_tool_says_what_to_install(bare: Path, tool: str, advice: str) -> None:
    with pytest.raises(ToolError) as err:
        toolchain.require(tool, "to read k.cubin")
    message = str(err.value)
    assert message.startswith(f"{tool} is needed to read k.cubin but was not found")
    assert advice in message


def test_a_failing_tool_reports_its_status_and_last_lines(bare: Path) -> None:
    tool = make_tool(
        bare / "bin",
        "nvcc",
        "import sys\nprint('k.cu(3): error: boom', file=sys.stderr)\nsys.exit(4)",
    )
    with pytest.raises(ToolError) as err:
        toolchain.run_checked([str(tool), "x"])
    assert str(err.value) == "nvcc failed (exit status 4):\nk.cu(3): error: boom"


def test_compile_passes_the_documented_flags(bare: Path, tmp_path: Path) -> None:
    log = tmp_path / "args.txt"
    body = (
        "import sys, pathlib\n"
        f"pathlib.Path({str(log)!r}).write_text(' '.join(sys.argv[1:]))\n"
        "out = sys.argv[sys.argv.index('-o') + 1]\n"
        "pathlib.Path(out).write_bytes(b'cubin')\n"
    )
    nvcc = make_tool(tmp_path / "bin", "nvcc", body)
    src = tmp_path / "k.cu"
    src.write_text("__global__ void k() {}\n")
    work = tmp_path / "work"
    work.mkdir()
    out = toolchain.compile_cu(src, "sm_80", work, ["-DTILE=8"], nvcc=str(nvcc))
    assert out == work / "kernel.cubin" and out.read_bytes() == b"cubin"
    args = log.read_text().split()
    assert args[:6] == ["-cubin", "-lineinfo", "-O3", "-arch=sm_80", "-DTILE=8", "-o"]
    assert args[-1] == str(src.resolve())


def test_embedded_cubins_are_listed_and_the_arch_chosen(tmp_path: Path) -> None:
    # a name can be listed twice; it is extracted once
    app, tool = _lister(tmp_path, "app.1.sm_80.cubin", "app.2.sm_90.cubin", "app.2.sm_90.cubin")
    work = tmp_path / "work"
    work.mkdir()
    found = binaries.extract_cubins(app, "sm_90", work, cuobjdump=str(tool))
    assert [c.path.name for c in found] == ["app.2.sm_90.cubin"]
    with pytest.raises(ToolError) as err:
        binaries.extract_cubins(app, "sm_100", work, cuobjdump=str(tool))
    assert "holds no cubin for sm_100 (it has: sm_80, sm_90); trace one of those with --arch" in (
        str(err.value)
    )
    assert str(err.value).endswith("(--arch sm_90)")


def test_a_binary_without_the_arch_suggests_an_arch_it_has_never_a_name(tmp_path: Path) -> None:
    # the newest architecture by number (sm_100a, not sm_90 by spelling); a name without
    # one (the binary's own text) is listed but never suggested as --arch
    listing = "ELF file    1: app.1.sm_100a.cubin\\nELF file    2: app.2.sm_90.cubin"
    listing += "\\nELF file    3: zz"
    body = f"import sys\nif sys.argv[1] == '-lelf':\n    print('{listing}')\n"
    tool = make_tool(tmp_path / "bin", "cuobjdump", body)
    app = tmp_path / "app"
    app.write_bytes(b"\x7fELF")
    with pytest.raises(ToolError) as err:
        binaries.extract_cubins(app, "sm_80", tmp_path, cuobjdump=str(tool))
    said = str(err.value)
    assert "(it has: sm_100a, sm_90, zz); trace one of those with --arch" in said
    assert said.endswith("(--arch sm_100a)")


def test_kernel_inputs_are_told_apart(tmp_path: Path) -> None:
    assert binaries.kernel_input_kind(Path("k.cu")) == "cu"
    assert binaries.kernel_input_kind(DATA / "meta.sm_90.cubin") == "cubin"
    host = tmp_path / "app"
    host.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(11) + (62).to_bytes(2, "little"))
    assert binaries.kernel_input_kind(host) == "binary"
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ToolError, match="neither CUDA source"):
        binaries.kernel_input_kind(text)


@needs_nvcc
def test_compiling_a_real_kernel_gives_a_cubin(tmp_path: Path) -> None:
    out = toolchain.compile_cu(DATA / "kernels" / "column_read.cu", "sm_90", tmp_path)
    assert binaries.kernel_input_kind(out) == "cubin"


@needs_nvcc
def test_a_compile_error_is_reported_with_nvcc_message(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k() { undeclared = 1; }\n")
    with pytest.raises(ToolError) as err:
        toolchain.compile_cu(bad, "sm_90", tmp_path)
    assert "nvcc failed" in str(err.value) and "undeclared" in str(err.value)


def _lister(tmp_path: Path, *names: str) -> tuple[Path, str]:
    """A binary and a cuobjdump that lists ``names`` as its cubins (and extracts any)."""
    listing = "\\n".join(f"ELF file    {i}: {n}" for i, n in enumerate(names, 1))
    body = (
        "import sys, pathlib\n"
        "if sys.argv[1] == '-lelf':\n"
        f"    print('{listing}')\n"
        "else:\n"
        "    pathlib.Path(sys.argv[2]).write_bytes(b'elf')\n"
    )
    tool = make_tool(tmp_path / "bin", "cuobjdump", body)
    app = tmp_path / "app"
    app.write_bytes(b"\x7fELF")
    return app, str(tool)


def test_without_arch_a_binary_of_one_other_architecture_gives_its_cubins(tmp_path: Path) -> None:
    """A FlashAttention extension built for sm_80 alone, traced without --arch: its cubins
    (the default sm_90 is only a default); with --arch sm_90 it is still an error."""
    app, tool = _lister(tmp_path, "app.1.sm_80.cubin", "app.2.sm_80.cubin")
    found = binaries.extract_cubins(app, "sm_90", tmp_path, cuobjdump=tool, chosen=False)
    assert [c.path.name for c in found] == ["app.1.sm_80.cubin", "app.2.sm_80.cubin"]
    with pytest.raises(ToolError, match=r"holds no cubin for sm_90 \(it has: sm_80\)"):
        binaries.extract_cubins(app, "sm_90", tmp_path, cuobjdump=tool)


@pytest.mark.parametrize(
    "names", [("app.1.sm_80.cubin", "app.2.sm_86.cubin"), ("app.1.sm_80.cubin", "zz")]
)
def test_without_arch_a_binary_of_several_architectures_asks_for_one(
    tmp_path: Path, names: tuple[str, ...]
) -> None:
    app, tool = _lister(tmp_path, *names)
    with pytest.raises(ToolError, match="trace one of those with --arch"):
        binaries.extract_cubins(app, "sm_90", tmp_path, cuobjdump=tool, chosen=False)


@needs_nvcc
def test_an_executable_built_for_sm_80_alone_traces_without_arch(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from shmem_cli.cli import main

    app = tmp_path / "app.o"  # an object file: the kernel has no main to link
    source = DATA / "kernels" / "column_read.cu"
    nvcc = toolchain.require("nvcc", "to build")
    toolchain.run_checked([nvcc, "-arch=sm_80", "-c", "-o", str(app), str(source)], cwd=tmp_path)
    out = CliRunner().invoke(main, ["trace", str(app), "--block", "32,32", "--no-tables"])
    assert out.exit_code == 0, out.output
    assert "column_read  sm_80" in out.output
