"""What a kernel file is (CUDA source, cubin, or a host executable or shared library) and
the cubins an executable holds: read from its fat binary (:mod:`.binary_formats.fatbin`),
or extracted with ``cuobjdump`` where the fat binary's entries are compressed."""

from __future__ import annotations

import os
import re
import struct
from pathlib import Path

from ...cuda.toolchain import INSPECT_MEMORY, MAX_CUBIN_BYTES, ToolError, require, run_checked
from ...plumbing import fsutil
from ...plumbing.bounded_read import read_prefix
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from .binary_formats.fatbin import cubins_in_file

ELF_MAGIC = b"\x7fELF"
#: cubins for the architecture read from one executable (one per translation unit; each is
#: written, read and searched for the kernel: about 10 ms each, 40 with cuobjdump)
MAX_CUBINS = 512
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,200}\Z")


@frozen
class Cubin:
    """A cubin ready to read: its path and where it came from."""

    path: Path
    origin: str  # "compiled from k.cu", "given", "extracted from app (name.sm_90.cubin)"


def embedded_cubins(binary: Path, *, cuobjdump: str | None = None) -> list[str]:
    """Names of the cubins embedded in an executable or shared library (``cuobjdump -lelf``)."""
    tool = cuobjdump or require("cuobjdump", f"to list the cubins in {binary}")
    try:
        listing = run_checked(
            [tool, "-lelf", str(binary.resolve())],
            file_limit=MAX_CUBIN_BYTES,
            memory_limit=INSPECT_MEMORY,
        )
    except ToolError as exc:  # a host file without device code: cuobjdump exits 255
        if NO_DEVICE_CODE in str(exc):
            return []
        raise
    names = []
    for line in listing.splitlines():
        # "ELF file    1: app.1.sm_90.cubin"
        head, sep, name = line.partition(":")
        if sep and head.strip().startswith("ELF file") and name.strip():
            names.append(name.strip())
    return names


def cubin_arch_of(name: str) -> str | None:
    """``sm_90`` from an embedded cubin's name such as ``app.1.sm_90.cubin``."""
    for part in reversed(name.split(".")):
        if part.startswith("sm_"):
            return part
    return None


def extract_cubins(
    binary: Path, arch: str, folder: Path, *, cuobjdump: str | None = None, chosen: bool = True
) -> list[Cubin]:
    """Every cubin for ``arch`` embedded in ``binary`` (one per translation unit), extracted
    into ``folder``; an error naming the architectures it has when none is for ``arch``, but
    where ``arch`` is only the default (``chosen`` False: no ``--arch``) and every cubin is for
    one other architecture (a FlashAttention build for sm_80 alone), whose cubins are taken."""
    try:  # the host file is read where its fat binaries are, never whole
        found = cubins_in_file(binary, arch)
    except ShmemError as exc:
        raise ToolError(exc.message) from None
    except (OSError, struct.error):
        found = []
    if found:
        _check_count(binary, arch, len(found))
        out = []
        for i, data in enumerate(found):
            # named by its place alone: the executable's own name may take all 255 bytes
            path = folder / f"fatbin{i}.{arch}.cubin"
            fsutil.write_bytes(path, data)
            out.append(Cubin(path, f"extracted from {binary} (fat binary entry {i})"))
        return out
    tool = cuobjdump or require("cuobjdump", f"to extract the cubins of {binary}")
    names = embedded_cubins(binary, cuobjdump=tool)
    if not names:
        raise ToolError(
            f"{binary} holds no cubin (cuobjdump -lelf lists none): a program built for PTX "
            "only (-arch=compute_XX), which the driver compiles when it loads, or none with "
            f"device code; build it with -arch={arch}, or trace the .cu"
        )
    # a name can be listed twice (cuobjdump -xelf extracts one file per name); a name is
    # the binary's own text: only plain file names are used (no folder, no option)
    plain = [n for n in names if _PLAIN_NAME.match(n)]
    matching = list(dict.fromkeys(n for n in plain if cubin_arch_of(n) == arch))
    have = sorted({cubin_arch_of(n) or n for n in names})
    archs = [a for a in have if a.startswith("sm_")]  # a name without one is no --arch
    if not matching and not chosen and archs == have and len(archs) == 1:
        arch = archs[0]  # the only architecture the binary was built for
        matching = list(dict.fromkeys(n for n in plain if cubin_arch_of(n) == arch))
    if not matching:
        newest = max(archs, key=lambda a: (int(re.sub(r"\D", "", a) or 0), a), default=None)
        hint = "" if newest is None else f"; trace one of those with --arch (--arch {newest})"
        raise ToolError(
            f"{binary} holds no cubin for {arch} (it has: {shorten(', '.join(have), 300)}){hint}"
        )
    _check_count(binary, arch, len(matching))
    out = []
    for name in matching:
        run_checked(
            [tool, "-xelf", name, str(binary.resolve())],
            cwd=folder,
            file_limit=MAX_CUBIN_BYTES,
            memory_limit=INSPECT_MEMORY,
        )
        path = folder / name
        if not os.path.isfile(path):
            raise ToolError(f"cuobjdump -xelf {name} wrote no file")
        out.append(Cubin(path, f"extracted from {binary} ({name})"))
    return out


def _check_count(binary: Path, arch: str, count: int) -> None:
    if count > MAX_CUBINS:
        raise ToolError(
            f"{binary} holds {count:,} cubins for {arch}; shmem reads at most {MAX_CUBINS:,} "
            "of an executable: extract the one with the kernel (cuobjdump -lelf, then -xelf "
            "NAME) and trace that cubin"
        )


#: what to do with the files of the CUDA toolchain that hold a kernel shmem does not read
_NOT_A_KERNEL = {
    ".ptx": ": PTX, which ptxas compiles (ptxas -arch=sm_XX -o k.cubin k.ptx: trace k.cubin)",
    ".fatbin": ": a fat binary (cuobjdump -xelf all k.fatbin extracts its cubins: trace one)",
    ".a": ": an archive (ar x it, and trace the object file that holds the kernel)",
    ".ttgir": ": a file of a Triton cache entry, traced with its .json and .cubin beside it "
    "(trace the entry's folder)",
}


def kernel_input_kind(path: Path) -> str:
    """What a KERNEL argument is: ``cu`` (CUDA source), ``cubin`` or ``binary`` (ELF host file).

    A cubin is an ELF file too; it is told apart from a host executable by its
    machine field (EM_CUDA, 190).
    """
    suffix = path.suffix.lower()
    if suffix in (".cu", ".cuh"):
        return "cu"
    try:  # a regular file only: a FIFO or a device is refused, not waited on
        head = read_prefix(path, 20, what="the kernel file")
    except ShmemError as exc:
        raise ToolError(f"{shorten(str(path), 200)}: {exc.message}") from None
    if head[:4] == ELF_MAGIC and len(head) < 20:
        raise ToolError(f"{path} is cut off: {len(head)} bytes, too short for an ELF header")
    if head[:4] != ELF_MAGIC:
        if suffix == ".cubin":
            raise ToolError(f"{path} is not a cubin (no ELF header)")
        raise ToolError(
            f"{path} is neither CUDA source (.cu) nor a cubin nor an executable or "
            f"shared library with embedded cubins{_NOT_A_KERNEL.get(suffix, '')}"
        )
    if head[4:6] != b"\x02\x01":  # ELFCLASS64, ELFDATA2LSB
        raise ToolError(
            f"{path} is a {'32' if head[4] == 1 else '64' if head[4] == 2 else '?'}-bit "
            f"{'big' if head[5] == 2 else 'little' if head[5] == 1 else '?'}-endian ELF file: "
            "a cubin, and an executable or library with embedded cubins, is a 64-bit "
            "little-endian one (build the kernel with nvcc for an x86-64 or AArch64 host, or "
            "trace the .cu)"
        )
    machine = int.from_bytes(head[18:20], "little")
    return "cubin" if machine == EM_CUDA else "binary"


EM_CUDA = 190
#: what cuobjdump -lelf says (exit status 255) of an ELF file without a fat binary
NO_DEVICE_CODE = "does not contain device code"
