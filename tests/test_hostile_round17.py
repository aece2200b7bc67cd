"""Hostile inputs of the seventeenth adversarial round (docs/robustness.md, "What was found
and fixed", item 17): kernel symbols that start inside their code, claim more code than their
section holds, or share a section with another kernel (each a located error before nvdisasm
runs, never a trace of code the driver would not run); a macro bomb that nvcc compiles for
ever or whose preprocessing writes without end (stopped at the compile's limits, which are
named with the way around them).
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from shmem_cli.cuda import build, toolchain
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.kernel.cubin import read_cubin

from .conftest import TEST_DATA, needs_nvcc
from .hostile import CUBIN, refused, shmem
from .test_hostile_round16 import _sections

# --- a kernel's symbol: where it starts, its size, its section -------------------------------


def _symbols(data: bytes) -> dict[str, int]:
    """The offset of each symbol of ``data``'s ``.symtab``, by name."""
    headers = _sections(data)
    symtab, size = struct.unpack_from("<QQ", data, headers[".symtab"] + 24)
    strtab = struct.unpack_from("<Q", data, headers[".strtab"] + 24)[0]
    out = {}
    for at in range(symtab, symtab + size, 24):
        name = struct.unpack_from("<I", data, at)[0] + strtab
        out[data[name : data.index(b"\0", name)].decode()] = at
    return out


def _edited(tmp_path: Path, name: str, field: str, value: int) -> Path:
    """CUBIN with the symbol ``name``'s ``field`` (value, size or shndx) set to ``value``."""
    data = bytearray(CUBIN.read_bytes())
    at = _symbols(bytes(data))[name]
    fmt, offset = {"value": ("<Q", 8), "size": ("<Q", 16), "shndx": ("<H", 6)}[field]
    struct.pack_into(fmt, data, at + offset, value)
    path = tmp_path / "edited.cubin"
    path.write_bytes(bytes(data))
    return path


def test_the_kernels_symbols_as_compiled_start_their_sections() -> None:
    # what the checks below hold every cubin to (so were all 1,046 kernels of 463 real ones)
    data = CUBIN.read_bytes()
    headers = _sections(data)
    at = _symbols(data)["_Z7trivialPi"]
    value, size = struct.unpack_from("<QQ", data, at + 8)
    code = struct.unpack_from("<Q", data, headers[".text._Z7trivialPi"] + 32)[0]
    assert (value, size, code) == (0, 512, 512)
    assert "trivial" in {k.name for k in read_cubin(CUBIN, use_tools=False).kernels}


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        # traced from byte 0 of its code, where the driver starts at byte 0x100
        ("value", 0x100, "kernel _Z7trivialPi starts 0x100 bytes into its code"),
        ("value", 1 << 63, "starts 0x8000000000000000 bytes into its code"),
        # nvdisasm's "Invalid symbol size" before, quoted as its failure
        ("size", 513, "claims 513 bytes of code, more than its section .text._Z7trivialPi"),
        ("size", (1 << 64) - 1, "claims 18,446,744,073,709,551,615 bytes of code"),
    ],
)
def test_a_kernel_symbol_past_the_start_or_end_of_its_code_is_refused(
    tmp_path: Path, field: str, value: int, said: str
) -> None:
    path = _edited(tmp_path, "_Z7trivialPi", field, value)
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert said in err.value.message and err.value.message.endswith(": rebuild it")
    assert err.value.message.startswith("not a valid cubin: ")


def test_a_kernel_in_another_kernels_code_is_refused(tmp_path: Path) -> None:
    # the trace read trivial's SASS by its section's name, .text._Z7trivialPi, where the driver
    # would run spin's code
    data = CUBIN.read_bytes()
    spin = list(_sections(data)).index(".text._Z4spinPi")
    path = _edited(tmp_path, "_Z7trivialPi", "shndx", spin)
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert err.value.message == (
        f"not a valid cubin: kernel _Z7trivialPi is in section {spin} (.text._Z4spinPi), not "
        "in its own code, .text._Z7trivialPi, where a compiler puts it (and where its listing "
        "is read): rebuild it"
    )


def test_two_sections_of_one_name_are_refused(tmp_path: Path) -> None:
    # trivial's code section renamed .text._Z4spinPi: `--kernel spin` traced trivial's code
    # (nvdisasm's listing is read by section name, the first of the two)
    data = bytearray(CUBIN.read_bytes())
    headers = _sections(bytes(data))
    spin_name = struct.unpack_from("<I", data, headers[".text._Z4spinPi"])[0]
    struct.pack_into("<I", data, headers[".text._Z7trivialPi"], spin_name)  # sh_name
    path = tmp_path / "renamed.cubin"
    path.write_bytes(bytes(data))
    spin, trivial = (list(headers).index(f".text.{k}") for k in ("_Z4spinPi", "_Z7trivialPi"))
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert err.value.message == (
        f"not a valid cubin: sections {trivial} and {spin} are both named .text._Z4spinPi, "
        "which no linker writes: rebuild it"
    )


def test_a_kernel_inside_its_code_is_refused_from_the_command_line(tmp_path: Path) -> None:
    path = _edited(tmp_path, "_Z7trivialPi", "value", 0x100)
    ran = shmem("trace", str(path), "--kernel", "trivial", "--block", "32")
    refused(ran, "edited.cubin: error: not a valid cubin: kernel _Z7trivialPi starts 0x100")
    assert not [p for p in ran.paths("run") if p.endswith("nvdisasm")]  # refused before it


# --- a macro bomb: nvcc's time and the files it writes ------------------------------------------


def _bomb(folder: Path, levels: int) -> Path:
    """A kernel whose one expression is a macro doubled ``levels`` times (2^levels terms)."""
    lines = ["#define A0 x+"]
    lines += [f"#define A{k} A{k - 1} A{k - 1}" for k in range(1, levels + 1)]
    lines.append(f"__global__ void bomb(int *out) {{ int x = out[1]; out[0] = A{levels} 0; }}")
    path = folder / "bomb.cu"
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_nvcc
def test_a_macro_bomb_is_stopped_at_the_compile_time_limit(tmp_path: Path) -> None:
    # 2^18 terms: 0.4 s to preprocess, then cicc for minutes (2^20 ran past 300 s, to the
    # default 600 s limit, which the message did not name)
    source = _bomb(tmp_path, 18)
    ran = shmem("trace", str(source), "--block", "32", "--compile-time-limit", "0.5")
    refused(
        ran,
        "bomb.cu: error: nvcc did not finish within 0.5 s, shmem's limit: a source that expands",
        "give --compile-time-limit SECONDS for more, or build the cubin yourself (nvcc -cubin",
        roots=[tmp_path],
    )


def test_the_compile_time_limit_is_a_finite_number_of_seconds(tmp_path: Path) -> None:
    source = _bomb(tmp_path, 1)
    for value in ("nan", "0", "-1", "1e9"):
        ran = shmem("trace", str(source), "--block", "32", "--compile-time-limit", value)
        refused(ran, "--compile-time-limit", roots=[tmp_path])


def kernel_spec(name: str, source: str, kernel: str) -> str:
    """A one-store spec named ``name`` whose ``kernel:`` is ``kernel`` of ``source``."""
    return f"""name: {name}
block: [32]
arrays:
  s: {{dtype: int, shape: [32]}}
accesses:
  - name: a
    array: s
    op: store
    index: [threadIdx.x]
kernel:
  source: {source}
  name: {kernel}
"""


BOMB_SPEC = kernel_spec("bomb", "bomb.cu", "bomb")


@needs_nvcc
def test_a_specs_macro_bomb_is_stopped_at_the_configs_compile_time_limit(tmp_path: Path) -> None:
    # a spec's kernel compiled for 600 s, with no way to say less
    _bomb(tmp_path, 18)
    (tmp_path / "bomb.yaml").write_text(BOMB_SPEC)
    (tmp_path / "shmem.toml").write_text("[tool.shmem]\ncompile-time-limit = 0.5\n")
    ran = shmem("lint", "--config", "shmem.toml", "bomb.yaml", cwd=tmp_path)
    assert ran.code == 0 and "Traceback" not in ran.text, ran.text  # SH008 is a warning
    assert "bomb.yaml:11:3: warning: kernel 'bomb' was not traced" in ran.text, ran.text
    said = (
        "nvcc did not finish within 0.5 s, shmem's limit: a source that expands without bound "
        "(a macro bomb?) or includes a pipe or a device compiles for ever: give [tool.shmem] "
        "compile-time-limit = SECONDS for more, or build the cubin yourself (nvcc -cubin "
        "-lineinfo) and name it in kernel.source [SH008"
    )
    assert said in ran.text, ran.text


@pytest.mark.slow
@pytest.mark.parametrize("value", ['"600"', "0", "-1", "1e9", "true", "nan", "[1]"])
def test_the_configs_compile_time_limit_is_a_number_of_seconds(tmp_path: Path, value: str) -> None:
    (tmp_path / "bomb.yaml").write_text(BOMB_SPEC)
    (tmp_path / "shmem.toml").write_text(f"[tool.shmem]\ncompile-time-limit = {value}\n")
    ran = shmem("lint", "--config", "shmem.toml", "bomb.yaml", cwd=tmp_path)
    refused(
        ran,
        "shmem.toml:2:1: error: [tool.shmem] compile-time-limit must be a number of seconds "
        "from 0.001 to 86400, got ",
        roots=[tmp_path],
    )


@pytest.mark.parametrize("value", [0, -1.0, float("nan"), float("inf"), 1e9, "600", True])
def test_the_apis_compile_time_limit_is_checked_before_any_compile(
    tmp_path: Path, value: object
) -> None:
    import shmem_cli

    source = _bomb(tmp_path, 18)
    with pytest.raises(ShmemError) as err:
        shmem_cli.trace(source, block=(32, 1, 1), compile_time_limit=value)  # type: ignore[arg-type]
    assert "compile_time_limit must be a positive number of seconds" in err.value.message


@needs_nvcc
def test_a_compile_that_writes_a_file_to_its_limit_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # gcc's preprocessor killed by SIGXFSZ: nvcc said "(no output)" past its compiler messages
    source = _bomb(tmp_path, 18)  # its device text: about 2 MB on one line
    monkeypatch.setattr(toolchain, "COMPILE_FILE_LIMIT", 1 << 20)
    folder = tmp_path / "build"
    folder.mkdir()
    with pytest.raises(toolchain.ToolError) as err:
        toolchain.compile_cu(source, "sm_90", folder, keep=True)
    said = str(err.value)
    assert said.startswith("nvcc was stopped: it wrote 1 MiB, shmem's limit for a file of one ")
    assert "to bomb.cpp1.ii: a source that expands without bound (a macro bomb)?" in said


def test_line_markers_are_read_a_piece_of_a_line_at_a_time(tmp_path: Path) -> None:
    # a macro bomb's device text is one line of up to the compile's file limit (1 GiB), which
    # was read whole; a '#' that a piece boundary puts first is inside that line, no marker
    (tmp_path / "a.h").write_text("")
    piece = build._PIECE
    text = b'# 1 "a.h"\n' + b"x" * piece + b'# 2 "inside.h"\n# 3 "b.h"\n'
    (tmp_path / "k.cpp1.ii").write_bytes(text)
    names = [Path(n).name for n in build.read_files(tmp_path)]
    assert names == ["a.h", "b.h"]


def test_a_marker_across_a_piece_is_read_and_each_name_resolved_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # headers that each include the next twice (25 of them) wrote a million markers of 25
    # names in nvcc's first 5 s, and each marker's name was resolved again: 87 s
    for name in ("a.h", "b.h", "c.h"):
        (tmp_path / name).write_text("")
    piece = build._PIECE
    head = b'# 1 "a.h"\n# 2 "b.h"\n' * 100_000
    text = head + b"x" * (piece - len(head) % piece - 5) + b'\n# 7 "c.h"\n# 8 "a.h"'
    (tmp_path / "k.cpp1.ii").write_bytes(text)
    resolved: list[str] = []
    real = build.os.path.realpath

    def counted(path: str | Path) -> str:
        resolved.append(str(path))
        return real(path)

    monkeypatch.setattr(build.os.path, "realpath", counted)
    names = [Path(n).name for n in build.read_files(tmp_path)]
    assert names == ["a.h", "b.h", "c.h"]
    assert len(resolved) == 3


# --- a spec's kernel in a Triton cache root whose entry is broken -----------------------------

ENTRY = TEST_DATA / "triton" / "cache" / "DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA"
KERNEL_SPEC = kernel_spec("k", "cache", "transpose_tiles")


def test_a_broken_entry_of_a_specs_cache_root_is_named(tmp_path: Path) -> None:
    # SH008 said "not Triton metadata (JSON nested too deeply)" and not which file of the root
    # (shmem trace named it)
    entry = tmp_path / "cache" / "entry"
    shutil.copytree(ENTRY, entry)
    (entry / "transpose_tiles.json").write_text('{"name": ' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "k.yaml").write_text(KERNEL_SPEC)
    ran = shmem("lint", str(tmp_path / "k.yaml"), cwd=tmp_path)
    assert ran.code == 0 and "Traceback" not in ran.text, ran.text  # a warning
    said = "entry/transpose_tiles.json: not Triton metadata (JSON nested too deeply) [SH008"
    assert said in ran.text, ran.text


def test_a_specs_nvcc_arguments_for_a_cubin_are_named_as_the_spec_names_them(
    tmp_path: Path,
) -> None:
    # SH008 said "--nvcc-arg applies only to a .cu file", an option the spec does not have
    shutil.copy(CUBIN, tmp_path / "h.cubin")
    spec = KERNEL_SPEC.replace("source: cache", "source: h.cubin").replace(
        "name: transpose_tiles", "name: trivial\n  nvcc: ['-DX=1']"
    )
    (tmp_path / "k.yaml").write_text(spec)
    ran = shmem("lint", "k.yaml", cwd=tmp_path)
    assert ran.code == 0 and "Traceback" not in ran.text, ran.text  # a warning
    assert "compiled code: kernel.nvcc applies only to a .cu file [SH008" in ran.text, ran.text
