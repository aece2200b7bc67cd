"""Finding and running NVIDIA's tools (nvcc, nvdisasm, cuobjdump, ncu, cu++filt).

One module serves ``shmem trace`` and ``shmem verify``. A tool is looked up on
``PATH``, then in ``$CUDA_HOME/bin``, ``$CUDA_PATH/bin`` and ``/usr/local/cuda/bin``,
then (nvdisasm, cuobjdump, cu++filt) in the ``bin`` folders of NVIDIA's Python
wheels (``nvidia-cuda-nvdisasm``, ``nvidia-cuda-cuobjdump``: ``pip install
'shmem[cuda]'``), which put them under ``site-packages/nvidia/cu13/bin/``.

Failures are :class:`ToolError` whose message says what is missing and how to
get it, or what the tool printed; the commands turn it into exit status 2.
"""

from __future__ import annotations

import glob
import os
import shlex
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from ..plumbing.errors import shorten

# what to install for each tool, in words
INSTALL_HINTS: dict[str, str] = {
    "nvcc": "install the CUDA toolkit and put nvcc on PATH (or set CUDA_HOME), "
    "or give a compiled .cubin instead of the .cu file",
    "nvdisasm": "pip install 'shmem[cuda]' (the nvidia-cuda-nvdisasm wheel), "
    "or install the CUDA toolkit",
    "cuobjdump": "pip install 'shmem[cuda]' (the nvidia-cuda-cuobjdump wheel), "
    "or install the CUDA toolkit",
    "ncu": "install Nsight Compute and put ncu on PATH",
    "nvidia-smi": "install the NVIDIA driver",
}
WHEEL_TOOLS = ("nvdisasm", "cuobjdump", "cu++filt")
DEFAULT_CUDA_BIN = "/usr/local/cuda/bin"
TOOL_TIMEOUT = 600.0  # seconds for one compile or disassembly
#: the default wall time of one nvcc compile of a ``.cu`` (``--compile-time-limit``): a macro
#: that doubles 20 times is preprocessed in 2 s, and cicc then ran past 300 s on it
COMPILE_SECONDS = TOOL_TIMEOUT
#: what a compile stopped at a limit is told to do (the way around, and the option)
COMPILE_WAY = (
    "give --compile-time-limit SECONDS for more, or build the cubin yourself (nvcc -cubin "
    "-lineinfo) and trace it"
)
_COMPILE_HINT = (
    "a source that expands without bound (a macro bomb?) or includes a pipe or a device "
    f"compiles for ever: {COMPILE_WAY}"
)
#: what a compile stopped for opening a FIFO or a device is told (:func:`run`'s ``special``)
_SPECIAL_HINT = (
    "a header or a computed #include (a macro's name) names it, and a compile would wait on "
    "it or read it for ever; include regular files only (save the data to a file)"
)
OUTPUT_LIMIT = 64 << 20  # the most of a tool's standard output or error that is read
#: a cubin (given, extracted from a fat binary, or written by a tool) and SASS listings
MAX_CUBIN_BYTES = 64 << 20
#: cuobjdump and nvdisasm: address space and the largest file they may write
INSPECT_MEMORY = 768 << 20
#: zero-filled bytes (NOBITS sections: a ``__device__`` array, shared memory) of a cubin past
#: which nvdisasm is given a copy without them: it holds them in memory (a 1 GiB ``__device__``
#: array took 1.1 GB, past :data:`INSPECT_MEMORY`: "Memory allocation failure")
NOBITS_COPY = 64 << 20
SHT_SYMTAB, SHT_NOBITS = 2, 8
#: nvcc and its children: the largest file they may write (preprocessed source, PTX, cubin)
COMPILE_FILE_LIMIT = 1 << 30
#: files one compile may read (its preprocessed source's line markers: build.read_files), and
#: so the files a kept build records (build_cache)
COMPILE_FILES = 20_000
#: nvcc and each of its children: address space (a CUTLASS kernel's cicc needs a few GiB; a
#: preprocessor made to read a device file without end stops here)
COMPILE_MEMORY = 16 << 30
#: the host compilers whose preprocessing step nvcc names (``--dryrun``) that
#: :func:`preprocess_device` runs alone
_HOST_COMPILERS = frozenset({"gcc", "g++", "c++", "cc", "clang", "clang++"})


class ToolError(Exception):
    """A CUDA tool is missing or failed; the message says which and why."""


class ToolMissing(ToolError):
    """A CUDA tool was not found; the message says what to install."""


def cuda_dirs() -> list[str]:
    """The ``bin`` folders of the CUDA toolkit installs named by the environment, then the
    default."""
    dirs = []
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            dirs.append(os.path.join(os.environ[var], "bin"))
    dirs.append(DEFAULT_CUDA_BIN)
    return dirs


def wheel_bin_dirs() -> list[str]:
    """The ``bin`` folders of NVIDIA's CUDA wheels installed beside shmem (``nvidia/*/bin``)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations or ()) if spec is not None else []
    out: list[str] = []
    for root in roots:
        # nvidia/cu13/bin (CUDA 13 wheels), nvidia/cuda_nvdisasm/bin (CUDA 12 wheels)
        out += sorted(glob.glob(os.path.join(root, "*", "bin")), reverse=True)
    return out


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def which(tool: str) -> str | None:
    """``tool`` on PATH, else in the usual CUDA, wheel and Nsight Compute install folders."""
    found = shutil.which(tool)
    if found:
        return found
    candidates = [os.path.join(d, tool) for d in cuda_dirs()]
    if tool in WHEEL_TOOLS:
        candidates += [os.path.join(d, tool) for d in wheel_bin_dirs()]
    if tool == "ncu":
        candidates += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)
        candidates += sorted(glob.glob("/usr/local/NVIDIA-Nsight-Compute*/ncu"), reverse=True)
    for c in candidates:
        if _executable(c):
            return c
    return None


def require(tool: str, purpose: str) -> str:
    """The path of ``tool``, or a :class:`ToolError` saying what to install."""
    found = which(tool)
    if found is None:
        hint = INSTALL_HINTS.get(tool, "install the CUDA toolkit")
        raise ToolMissing(f"{tool} is needed {purpose} but was not found: {hint}")
    return found


def tail(text: str, lines: int = 15) -> str:
    """The last lines of a tool's output, for error messages."""
    return "\n".join(text.strip().splitlines()[-lines:])


def run(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float | None = TOOL_TIMEOUT,
    stdin: str | None = None,
    file_limit: int | None = None,
    memory_limit: int | None = None,
    special: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run a tool and capture its output (never raises for a non-zero exit status).

    The tool runs as :func:`shmem_cli.tool_process.run_tool` runs it: its own process
    group, a private TMPDIR removed afterwards, output capped at :data:`OUTPUT_LIMIT`.
    A time limit raises :class:`subprocess.TimeoutExpired`, another limit a
    :class:`ToolError` saying which; ``special``: a tool that opens a FIFO, a device or a
    socket is stopped at once (a :class:`ToolError` naming the file)."""
    from ..plumbing.tool_process import ToolLimit, ToolRefused, run_tool

    start = time.monotonic()
    try:
        done = run_tool(
            args,
            cwd=cwd,
            timeout=timeout,
            output_limit=OUTPUT_LIMIT,
            file_limit=file_limit,
            memory_limit=memory_limit,
            stdin=stdin,
            special=special,
        )
    except ToolRefused as exc:
        # the hint on a line of its own: the file named may be a long path (a line stays short)
        raise ToolError(f"{Path(args[0]).name} was stopped: {exc};\n  {_SPECIAL_HINT}") from None
    except ToolLimit as exc:
        if timeout is not None and time.monotonic() - start >= timeout:
            raise subprocess.TimeoutExpired(list(args), timeout) from None
        raise ToolError(str(exc)) from None
    return subprocess.CompletedProcess(list(args), done.returncode, done.stdout, done.stderr)


def run_checked(
    args: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float | None = TOOL_TIMEOUT,
    file_limit: int | None = None,
    memory_limit: int | None = None,
    explain: Callable[[str], str] = tail,
    hint: str = "",
    special: bool = False,
    said: list[str] | None = None,
) -> str:
    """Run a tool; its standard output, or a :class:`ToolError` with what it printed
    (``explain`` picks what of its messages is shown; ``hint``, said after a time limit, what
    to do; ``said``: given, gets the standard error of a run that succeeded)."""
    name = Path(args[0]).name
    try:
        res = run(
            args,
            cwd=cwd,
            timeout=timeout,
            file_limit=file_limit,
            memory_limit=memory_limit,
            special=special,
        )
    except subprocess.TimeoutExpired:
        late = f"{name} did not finish within {timeout:g} s"
        raise ToolError(f"{late}, shmem's limit: {hint}" if hint else late) from None
    except OSError as exc:
        raise ToolError(f"cannot run {args[0]}: {exc.strerror or exc}") from None
    if res.returncode != 0:
        shown = explain(res.stderr or res.stdout) or "(no output)"
        status = (
            f"killed by signal {-res.returncode}"
            if res.returncode < 0
            else f"exit status {res.returncode}"
        )
        raise ToolError(f"{name} failed ({status}):\n{shown}")
    if said is not None:
        said.append(res.stderr)
    return res.stdout


# --- from a kernel file to a cubin ------------------------------------------------------------


def compile_cu(
    source: Path,
    arch: str,
    folder: Path,
    extra: Sequence[str] = (),
    *,
    nvcc: str | None = None,
    explain: Callable[[str], str] = tail,
    keep: bool = False,
    seconds: float = COMPILE_SECONDS,
    said: list[str] | None = None,
) -> Path:
    """``nvcc -cubin -lineinfo -O3 -arch=ARCH [extra] -o folder/kernel.cubin source``.

    ``extra`` must already be in the form :func:`shmem_cli.nvcc_args.check_nvcc_args`
    gives (it is checked again here, and so are the paths, for characters a shell
    would act on); ``explain`` picks what of nvcc's messages a failure shows; ``keep``
    keeps nvcc's intermediate files in ``folder`` (the preprocessed source it compiled:
    :mod:`.build` reads what the compile read from it). ``seconds``: its wall time; a compile
    past it, or one whose step wrote a file of :data:`COMPILE_FILE_LIMIT` bytes (its kept files
    looked at), is a :class:`ToolError` that names the limit and the way around it. ``said``:
    given, gets nvcc's messages (ptxas's warnings; ptxas runs with ``--warn-on-spills``
    unless the arguments make its warnings errors)."""
    args, out = _nvcc_command(source, arch, folder, extra, nvcc, keep=keep)
    limit = COMPILE_FILE_LIMIT
    try:
        run_checked(
            args,
            cwd=folder,
            timeout=seconds,
            file_limit=limit,
            memory_limit=COMPILE_MEMORY,
            explain=explain,
            hint=_COMPILE_HINT,
            special=True,
            said=said,
        )
    except ToolError:
        full = [e for e in os.scandir(folder) if _size_of(e) >= limit]
        if full:
            raise ToolError(
                f"nvcc was stopped: it wrote {limit >> 20:,} MiB, shmem's limit for a file of "
                f"one compile, to {shorten(full[0].name)}: a source that expands without "
                "bound (a macro bomb)? Build the cubin yourself (nvcc -cubin -lineinfo) and "
                "trace it"
            ) from None
        raise
    if not os.path.isfile(out):
        raise ToolError(f"nvcc wrote no cubin for {source}")
    return out


def _size_of(entry: os.DirEntry[str]) -> int:
    """A compile folder's entry's size if it is a regular file (not followed), else 0."""
    try:
        return (
            entry.stat(follow_symlinks=False).st_size if entry.is_file(follow_symlinks=False) else 0
        )
    except OSError:
        return 0


def preprocess_device(
    source: Path,
    arch: str,
    folder: Path,
    extra: Sequence[str] = (),
    *,
    nvcc: str | None = None,
    seconds: float = COMPILE_SECONDS,
) -> Path | None:
    """The device text :func:`compile_cu` of ``source`` for ``arch`` would compile, written
    into ``folder`` (its ``*.cpp1.ii``): nvcc's own command for that step (``--dryrun``), the
    host compiler's preprocessor, run alone. None where nvcc names no such step that can be
    run alone (another host compiler, or words for a shell to expand)."""
    args, _ = _nvcc_command(source, arch, folder, extra, nvcc, keep=True)
    done = run([args[0], "--dryrun", *args[1:]], cwd=folder, timeout=60)
    said = (done.stderr + done.stdout).splitlines()
    steps = [ln[3:] for ln in said if ln.startswith("#$ ") and ".cpp1.ii" in ln and " -E " in ln]
    if done.returncode != 0 or len(steps) != 1:
        return None
    try:
        words = shlex.split(steps[0])
    except ValueError:
        return None
    if not words or Path(words[0]).name not in _HOST_COMPILERS or any("$" in w for w in words):
        return None
    run_checked(
        words,
        cwd=folder,
        timeout=seconds,
        file_limit=COMPILE_FILE_LIMIT,
        memory_limit=COMPILE_MEMORY,
        special=True,
    )
    made = sorted(folder.glob("*.cpp1.ii"))
    return made[0] if len(made) == 1 else None


def _nvcc_command(
    source: Path,
    arch: str,
    folder: Path,
    extra: Sequence[str],
    nvcc: str | None,
    *,
    keep: bool,
) -> tuple[list[str], Path]:
    """:func:`compile_cu`'s nvcc command and the cubin it writes, its words checked."""
    from .nvcc_args import NvccArgError, check_nvcc_args, shell_special

    try:
        again, _ = check_nvcc_args(extra, base=folder, inside=lambda _: True)
    except NvccArgError as exc:
        raise ToolError(exc.message) from None
    if again != list(extra):
        raise ToolError("nvcc arguments must be checked before compiling")
    src = source.resolve()
    out = folder / "kernel.cubin"
    for text in (str(src), str(out), arch):
        bad = shell_special(text)
        if bad is not None:
            raise ToolError(
                f"{shorten(text)!r} holds {bad!r}, which nvcc would hand to a shell; "
                "rename the file or folder"
            )
    nvcc = nvcc or require("nvcc", f"to compile {source}")
    args = [nvcc, "-cubin", "-lineinfo", "-O3", f"-arch={arch}", *extra, "-o", str(out)]
    if not any("warning-as-error" in a or "Werror" in a for a in extra):
        args.append("-Xptxas=--warn-on-spills")  # a spill said as a warning, without -v
    if keep:
        args += ["--keep", "--keep-dir", str(folder)]
    return [*args, str(src)], out


def disassemble(cubin: Path, *, nvdisasm: str | None = None, functions: Sequence[int] = ()) -> str:
    """The SASS of a cubin with its line table, inlining included: ``nvdisasm -gi -c`` text
    (of the ``functions`` only, by symbol index, when given: ``-fun``). A cubin of more than
    :data:`NOBITS_COPY` zero-filled bytes is given as a copy without them
    (:func:`nobits_emptied`)."""
    tool = nvdisasm or require("nvdisasm", f"to disassemble {cubin}")
    only = ["-fun", ",".join(str(f) for f in functions)] if functions else []
    emptied = nobits_emptied(cubin)
    if emptied is None:
        return _nvdisasm([tool, "-gi", "-c", *only, str(cubin.resolve())])
    from ..plumbing.fsutil import write_bytes

    with tempfile.TemporaryDirectory(prefix="shmem-nvdisasm-") as tmp:
        copy = Path(tmp) / "kernel.cubin"
        write_bytes(copy, emptied)
        return _nvdisasm([tool, "-gi", "-c", *only, str(copy)])


#: what to do where nvdisasm refuses a cubin shmem's own reader took (a corrupt section,
#: instruction words no SM has, or an SM newer than the toolkit's nvdisasm)
NVDISASM_WAY = (
    "nvdisasm cannot read this cubin: it is damaged, or for an SM this nvdisasm does not know; "
    "rebuild it (nvcc -cubin -lineinfo -arch=sm_XX), or put a newer CUDA toolkit on PATH"
)


def _nvdisasm(args: list[str]) -> str:
    return run_checked(
        args,
        file_limit=OUTPUT_LIMIT + (1 << 20),
        memory_limit=INSPECT_MEMORY,
        explain=lambda said: f"{tail(said) or '(no output)'}\n{NVDISASM_WAY}",
    )


def nobits_emptied(cubin: Path) -> bytes | None:
    """The cubin's bytes with its NOBITS sections, and the symbols in them, of size 0, where
    they claim more than :data:`NOBITS_COPY` bytes; else (or where it is no 64-bit
    little-endian ELF file with a whole section table: nvdisasm says so) None. nvdisasm
    makes such sections real in its memory, though no instruction is in them; its listing
    of a cubin without them is the same byte for byte."""
    from ..plumbing.bounded_read import read_bounded

    data = read_bounded(cubin, MAX_CUBIN_BYTES, what="cubin", code="invalid-kernel")
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        return None
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shentsize != 64 or shoff + shnum * 64 > len(data):
        return None
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + k * 64) for k in range(shnum)]
    nobits = {k for k, h in enumerate(headers) if h[1] == SHT_NOBITS}
    if sum(headers[k][5] for k in nobits) <= NOBITS_COPY:
        return None
    out = bytearray(data)
    for k in nobits:
        struct.pack_into("<Q", out, shoff + k * 64 + 32, 0)  # sh_size
    for _name, kind, _flags, _addr, offset, size in headers:
        if kind != SHT_SYMTAB or offset + size > len(data):
            continue
        for at in range(offset, offset + size // 24 * 24, 24):
            if struct.unpack_from("<H", data, at + 6)[0] in nobits:  # st_shndx
                struct.pack_into("<Q", out, at + 16, 0)  # st_size
    return bytes(out)
