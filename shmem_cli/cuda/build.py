"""Compiling a ``.cu`` for tracing: the architecture chosen, and what the very compile read
checked against the folders a build may read.

**What the build read.** A ``.cu`` that uses a library (CuTe, CUTLASS) includes headers
through macros (``#include CUDA_STD_HEADER(...)``) that no scan of the text can resolve.
So the compile itself says what it read: nvcc runs with ``--keep`` into shmem's temporary
folder, and the device-side preprocessed source it compiled (``*.cpp1.ii``) names, in its
line markers, every file the preprocessor opened. :func:`read_files` lists them and
:func:`compile_checked` refuses the build (its cubin is not used) when one lies outside the
allowed folders: the kernel's source tree, the include roots (``[tool.shmem]
include-roots``, and ``-I`` folders the user typed on the command line), the CUDA toolkit
and the host compiler's own include folders. The list checked is the list of the compile
whose cubin is traced, so nothing can change between the check and the build.

**The architecture.** Without ``--arch`` a ``.cu`` is compiled for the default (the
profile registry's, :data:`shmem_cli.hardware.arch.DEFAULT_ARCH`); when ptxas refuses it for
an instruction only its architecture-specific ``a`` variant has (wgmma, TMA, setmaxnreg), or
when that build traps or calls a function outside the cubin (``printf``) where an ``a`` build
has those instructions and it has not (CuTe and CUTLASS compile their Hopper paths only for
the ``a`` target: CuTe traps otherwise, CUTLASS 3.x's kernels print an error and return), it
is compiled for the ``a`` variant and the report says why. The ``a`` build is made only where
a file the first build read names a macro that differs between the two (:func:`names_a_feature`)
and the ``a`` build's preprocessing, run alone, gives another text than the first build
compiled (a header that tests the macro only for other architectures selects nothing):
elsewhere both compile the same text, and a kernel's own ``assert`` costs no second build.

**The cache.** Given a cache folder (opt-in: ``--build-cache DIR``),
:func:`compile_checked` takes the cubin of an earlier build whose inputs and read files are
unchanged (:mod:`.build_cache`), checks the files that build read against ``allowed`` as a
fresh compile's are, and keeps each new build there.
"""

from __future__ import annotations

import dataclasses
import filecmp
import functools
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..hardware.arch import DEFAULT_ARCH
from ..plumbing.errors import ShmemError, shorten
from ..plumbing.frozen import frozen
from . import toolchain
from .build_cache import Cached, key_of, lookup, open_cache, store

#: ptxas's words for an instruction the target lacks (``... not supported on .target 'sm_NN'``)
_NEEDS_A = re.compile(r"not supported on \.target '(sm_\d+)'|requires? (?:\.target )?'?sm_\d+a")
#: opcodes that only an architecture-specific (``a``) build has
_A_ONLY = re.compile(r"\b(?:HGMMA|UTMALDG|UTMASTG|UTMAPF|UBLKCP|UBLKRED|USETMAXREG)\b")
#: what a build does where its code needs the ``a`` target: CuTe traps (``BPT.TRAP``), CUTLASS
#: 3.x's kernels print an error and return (a call outside the cubin: ``printf``'s ``vprintf``)
_STOPS = re.compile(r"\bBPT\.TRAP\b|\bCALL\.ABS\b")
#: the toolkit's headers whose every mention of those macros defines one that
#: :func:`names_a_feature` looks for instead: ``__CUDA_ARCH_HAS_FEATURE__`` and
#: ``__CUDA_HAS_ARCH_[FAMILY_]SPECIFIC`` (``crt/host_defines.h``, read by every build),
#: ``NV_HAS_FEATURE_SM_NNa`` (``nv/target``'s, read with ``cuda_fp16.h``, ``mma.h``, ...), and
#: NVRTC's own (``ptx_isa.h``, under ``_CCCL_COMPILER(NVRTC)``)
_DERIVED = ("/crt/host_defines.h", "/nv/detail/__target_macros", "/cuda/std/__cccl/ptx_isa.h")
#: a line marker, after the line end before it (a literal first: ``re.M``'s ``^`` is tried at
#: every byte, 25 MB a second)
_MARKER = re.compile(rb'\n#(?:line)?[ \t]*[0-9]+[ \t]+"((?:[^"\\\n]|\\.)*)"')
MAX_FILES = toolchain.COMPILE_FILES  # files one compile may read
_PIECE, _OVERLAP = 1 << 20, 256  # bytes read at a time, and kept across pieces
#: folders of the host compiler's own headers when it cannot be asked
_SYSTEM_DEFAULT = ("/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib64/gcc")
#: what ptxas says of a build that succeeded that a report shows: its warnings (a spill, with
#: ``--warn-on-spills``) and its coded advisories (``ptxas info    : (C7511) Potential
#: Performance Loss: wgmma.mma_async instructions are serialized ...``); not ``-v``'s
#: statistics, nor nvcc's own words (an architecture's deprecation); ``msg``: its words
PTXAS_SAID = re.compile(
    r"ptxas(?:\s+\S+?, line \d+;)? *(?:warning *: *|info *: *(?=\(C\d+\)))(?P<msg>.*)"
)
MAX_WARNINGS, MAX_WARNING_CHARS = 200, 2000  # lines of ptxas kept, and characters of each
#: a diagnostic of nvcc's front end (``k.cu(3): warning #177-D: ...``) or of the host
#: compiler's preprocessor (``k.cu:1:2: warning: #warning ...``), located
DIAGNOSTIC = re.compile(
    r"^(?P<file>[^\s(][^()]*?)(?:\((?P<line>\d+)\)|:(?P<l2>\d+):(?P<col>\d+)):\s+"
    r"(?P<msg>(?:catastrophic error|fatal error|error|warning|remark|note)\b.*)$"
)
#: where nvcc says a template was instantiated, after a diagnostic in its header
INSTANTIATED = re.compile(r"\bat line (\d{1,9}) of (\S.{0,4095})$")


@frozen
class Build:
    """A compiled ``.cu``: the cubin, the architecture it was built for and why."""

    cubin: Path
    arch: str
    note: str | None = None  # why the ``a`` variant was chosen, when shmem chose it
    files: tuple[str, ...] = ()  # what the compile read (resolved)
    #: the cubin's whole SASS with its line table (``nvdisasm -gi -c``) where choosing the
    #: target read it, so that the trace does not disassemble the cubin again ("": not read)
    sass: str = ""
    cached: str | None = None  # the build cache folder it came from (None: compiled now)
    #: ptxas's warnings and advisories of the build (:data:`PTXAS_SAID`), each once, as said
    warnings: tuple[str, ...] = ()


def compile_checked(
    source: Path,
    arch: str | None,
    default: str,
    folder: Path,
    args: Sequence[str],
    *,
    allowed: Callable[[Path], bool],
    explain: Callable[[str], str] = toolchain.tail,
    cache: str | None = None,
    seconds: float = toolchain.COMPILE_SECONDS,
) -> Build:
    """Compile ``source`` for ``arch`` (None: ``default``, or its ``a`` variant where the code
    needs it), refusing a build that read a file ``allowed`` refuses; with a ``cache``, an
    unchanged earlier build's cubin (none whose files ``allowed`` refuses now: that one is
    built afresh, and refused as any build is) and the build kept
    (``cache``: its folder, made when the first build is kept); ``seconds``: the wall time of
    each compile."""
    kept = None if cache is None else open_cache(cache)
    key = None if kept is None else key_of(source, arch, default, args)
    if kept is None or key is None:
        return _choose(source, arch, default, folder, args, allowed, explain, seconds)
    hit = lookup(kept, key, folder / "cached", allowed)  # a file outside the roots: a miss
    if hit is not None:
        found = (hit.cubin, hit.arch, hit.note, hit.files, hit.sass)
        return Build(*found, str(kept.folder), hit.warnings)
    started = time.time_ns()
    build = _choose(source, arch, default, folder, args, allowed, explain, seconds)
    made = Cached(build.cubin, build.arch, build.note, build.files, build.sass, build.warnings)
    store(kept, key, made, started)
    return build


def _choose(
    source: Path,
    arch: str | None,
    default: str,
    folder: Path,
    args: Sequence[str],
    allowed: Callable[[Path], bool],
    explain: Callable[[str], str],
    seconds: float,
) -> Build:
    """:func:`compile_checked` without a cache: ``files`` are those every compile that
    chose the target read."""
    chosen = arch or default
    try:
        build = _compile(source, chosen, folder / "build", args, allowed, explain, seconds)
    except toolchain.ToolError as exc:
        m = _NEEDS_A.search(str(exc))
        if m is None or chosen.endswith("a"):
            raise
        if arch is not None:
            raise toolchain.ToolError(
                f"{exc}\nthis code needs the architecture-specific target: --arch {chosen}a"
            ) from None
        said = next((ln for ln in str(exc).splitlines() if _NEEDS_A.search(ln)), m.group(0))
        said = shorten(said.removeprefix("ptxas error: "), 200)
        build = _compile(source, chosen + "a", folder / "build_a", args, allowed, explain, seconds)
        note = f"compiled for {chosen}a: ptxas refused {chosen} ({said})"
        files = _union(read_files(folder / "build", _base(source)), build.files)
        return Build(build.cubin, build.arch, note, files, warnings=build.warnings)
    if arch is not None or chosen.endswith("a"):
        return build
    sass = toolchain.disassemble(build.cubin)
    stops = _STOPS.search(_code(sass))
    if (
        stops is None
        or not names_a_feature(build.files, chosen)
        or _same_text(source, chosen, folder, args, allowed, seconds)
    ):
        return dataclasses.replace(build, sass=sass)
    other = _compile(source, chosen + "a", folder / "build_a", args, allowed, explain, seconds)
    other_sass = toolchain.disassemble(other.cubin)
    # an opcode the sm_90 build runs too (cp.async.bulk's UBLKCP, TMA's UTMALDG) is no reason:
    # its printf or trap is the kernel's own (both builds' files decided it)
    added = set(_A_ONLY.findall(_code(other_sass))) - set(_A_ONLY.findall(_code(sass)))
    if not added:
        return dataclasses.replace(build, sass=sass, files=_union(build.files, other.files))
    how = "traps" if "BPT.TRAP" in stops.string else "prints an error"
    note = (
        f"compiled for {chosen}a: the {chosen} build {how} where the {chosen}a one runs "
        f"wgmma/TMA (give --arch {chosen} to trace the {chosen} build)"
    )
    files = _union(build.files, other.files)
    return Build(other.cubin, other.arch, note, files, other_sass, warnings=other.warnings)


def names_a_feature(files: Sequence[str], arch: str) -> bool:
    """Whether one of ``files`` names a macro that differs between the builds for ``arch`` and
    its ``a`` variant (nvcc 13 defines ``__CUDA_ARCH_FEAT_SMNN_ALL``, ``__CUDA_ARCH_SPECIFIC__``
    and ``__CUDA_ARCH_FAMILY_SPECIFIC__`` for ``sm_NNa`` only), or one the toolkit derives from
    them (:data:`_DERIVED`): where none does, both builds compile the same text."""
    number = arch.removeprefix("sm_")
    names = re.compile(
        rb"\b(?:__CUDA_ARCH_FEAT_(?:SM" + number.encode() + rb"_ALL\b|\s*##)"
        rb"|__CUDA_ARCH_(?:FAMILY_)?SPECIFIC__|__CUDA_HAS_ARCH_(?:FAMILY_)?SPECIFIC\b"
        rb"|__CUDA_ARCH_HAS_FEATURE__|NV_HAS_FEATURE_SM_" + number.encode() + rb"a\b)"
    )
    toolkit = toolkit_dirs()
    for name in files:
        if name.endswith(_DERIVED) and within(name, toolkit):
            continue
        try:
            if _holds(name, names):
                return True
        except OSError:
            return True  # unread: the second build decides, as before
    return False


def _holds(name: str, pattern: re.Pattern[bytes]) -> bool:
    """Whether the file ``name`` holds a match of ``pattern`` (a name of at most
    :data:`_OVERLAP` bytes), read a piece at a time: a header nvcc read through a computed
    ``#include`` is not size-checked before the build (300 MB of ``#if 0``: 336 MB held)."""
    tail = b""
    with open(name, "rb") as f:
        while piece := f.read(_PIECE):
            text = tail + piece
            if pattern.search(text):
                return True
            tail = text[-_OVERLAP:]
    return False


def _same_text(
    source: Path,
    arch: str,
    folder: Path,
    args: Sequence[str],
    allowed: Callable[[Path], bool],
    seconds: float,
) -> bool:
    """Whether the build for ``arch``'s ``a`` variant would compile the very device text the
    one in ``folder / "build"`` compiled (its preprocessing alone, compared byte for byte):
    then the macros the two define differently select no code (``cuda_fp8.h`` tests
    ``__CUDA_ARCH_FAMILY_SPECIFIC__`` for sm_100 on), and both builds are the same. False
    where it cannot tell: the ``a`` build then decides."""
    kept = sorted((folder / "build").glob("*.cpp1.ii"))
    probe = folder / "probe_a"
    probe.mkdir(parents=True, exist_ok=True)
    try:
        text = toolchain.preprocess_device(source, arch + "a", probe, args, seconds=seconds)
    except (OSError, toolchain.ToolError, subprocess.TimeoutExpired):
        return False
    if text is None or len(kept) != 1:
        return False
    _check(read_files(probe, _base(source)), source, allowed)
    return filecmp.cmp(text, kept[0], shallow=False)


def _union(*lists: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for files in lists for name in files))


def _code(sass: str) -> str:
    """A listing without its line table (``//## File "..."`` lines name source files)."""
    return "\n".join(line for line in sass.splitlines() if "//##" not in line)


def _compile(
    source: Path,
    arch: str,
    folder: Path,
    args: Sequence[str],
    allowed: Callable[[Path], bool],
    explain: Callable[[str], str],
    seconds: float,
) -> Build:
    folder.mkdir(parents=True, exist_ok=True)
    said: list[str] = []
    try:
        cubin = toolchain.compile_cu(
            source, arch, folder, args, explain=explain, keep=True, seconds=seconds, said=said
        )
    except toolchain.ToolError:
        _check(read_files(folder, _base(source)), source, allowed)  # says more than the failure
        raise
    files = read_files(folder, _base(source))
    _check(files, source, allowed)
    return Build(cubin, arch, None, tuple(files), warnings=build_warnings("".join(said)))


def build_warnings(text: str) -> tuple[str, ...]:
    """The lines of nvcc's messages ``text`` (of a build that succeeded) that a report may
    show, at most :data:`MAX_WARNINGS` of each kind, of :data:`MAX_WARNING_CHARS` characters:
    those :data:`PTXAS_SAID` keeps, each once; then, in nvcc's order, the front end's
    warnings (:data:`DIAGNOSTIC`) and what nvcc says after each up to the next diagnostic
    that is not a note: its notes (``note #3287-D: because of a "deprecated" attribute``) and
    where a template was instantiated (:data:`INSTANTIATED`); not the source lines it quotes,
    nor its ``Remark:`` on suppressing them."""
    ptxas: dict[str, None] = {}
    front: list[str] = []
    after = False  # in what nvcc says after a warning
    for raw in text.splitlines():
        line = raw.strip()[:MAX_WARNING_CHARS]
        if PTXAS_SAID.match(line):
            ptxas.setdefault(line)
            continue
        m = DIAGNOSTIC.match(line)
        if m is not None:
            msg = m.group("msg")
            after = msg.startswith("warning") or (after and msg.startswith("note"))
        if after and (m is not None or INSTANTIATED.search(line)):
            front.append(line)
    return (*tuple(ptxas)[:MAX_WARNINGS], *front[:MAX_WARNINGS])


def _base(source: Path) -> Path:
    """The folder a ``#line``'s relative name is taken in: the source's."""
    return Path(os.path.realpath(source)).parent


def _check(files: Sequence[str], source: Path, allowed: Callable[[Path], bool]) -> None:
    for name in files:
        if not allowed(Path(name)):
            raise ShmemError(
                f"the build read {shorten(name, 200)}, which is outside the kernel's source "
                "tree and its include roots (a computed #include?); keep the sources inside, "
                "name the folder with --nvcc-arg=-I... on the command line, or add it to "
                "[tool.shmem] include-roots",
                path=str(source),
                code="refused",
            )


def read_files(folder: Path, base: Path | None = None) -> list[str]:
    """Every file the preprocessed sources nvcc kept in ``folder`` name in their line
    markers, in order of first mention; a relative name resolved against ``base`` (the
    source's folder; default ``folder``). A file the preprocessor opened has an absolute name
    (the source and every ``-I`` folder are given absolute): a relative one is a ``#line``'s
    (``#line 3 "k.cu"`` of a generated source), which names the source it was made from."""
    seen: dict[str, None] = {}
    for kept in sorted(folder.glob("*.ii")):
        for raw in _marker_names(kept):
            if raw.startswith("<") and raw.endswith(">"):  # <built-in>, <command-line>
                continue
            seen.setdefault(os.path.realpath((base or folder) / raw), None)
            if len(seen) > MAX_FILES:
                raise ShmemError(
                    f"the build read more than {MAX_FILES:,} files", code="invalid-kernel"
                )
    return list(seen)


def _marker_names(path: Path) -> Iterator[str]:
    """The file names of ``path``'s line markers, each once, found a piece of the file at a
    time (a line of more than :data:`_PIECE` bytes is no marker): a macro bomb's preprocessed
    text is one line of up to the compile's file limit (1 GiB), and headers that each include
    the next twice write a million markers of 25 names in 5 s (read a line at a time, each
    name resolved again: 87 s)."""
    seen: set[bytes] = set()
    carry = b""
    with open(path, "rb") as f:
        while piece := f.read(_PIECE):
            text = carry + piece
            cut = text.rfind(b"\n") + 1
            yield from _new_names(b"\n" + text[:cut], seen)  # each piece starts a line
            carry = text[cut:] if len(text) - cut <= _PIECE else b"-"  # "-": inside a long line
    yield from _new_names(b"\n" + carry, seen)


def _new_names(text: bytes, seen: set[bytes]) -> Iterator[str]:
    """The names of ``text``'s line markers that are not in ``seen`` (added to it)."""
    for raw in dict.fromkeys(_MARKER.findall(text)):  # in order, each once
        if raw not in seen:
            seen.add(raw)
            yield re.sub(rb"\\(.)", rb"\1", raw).decode("utf-8", errors="surrogateescape")


@functools.cache
def system_dirs() -> tuple[str, ...]:
    """The host compiler's own include folders (``g++ -E -v``), resolved."""
    gxx = toolchain.which("g++") or toolchain.which("c++")
    found: list[str] = []
    if gxx is not None:
        try:
            done = toolchain.run([gxx, "-E", "-x", "c++", "-v", "-"], stdin="", timeout=30)
            text = done.stderr
            if "search starts here:" in text:
                body = text.split("#include <...> search starts here:", 1)[-1]
                body = body.split("End of search list.", 1)[0]
                found = [line.strip() for line in body.splitlines() if line.strip()]
        except (OSError, toolchain.ToolError, subprocess.TimeoutExpired):
            found = []  # the usual folders then
    dirs = [*found, *_SYSTEM_DEFAULT]
    return tuple(dict.fromkeys(os.path.realpath(d) for d in dirs))


def toolkit_dirs() -> tuple[str, ...]:
    """The CUDA toolkit's include folders, as nvcc itself names them (``--dryrun``: its
    ``INCLUDES`` and ``SYSTEM_INCLUDES``), resolved; none where no nvcc is found (not
    remembered: the nvcc found later has its own)."""
    tool = toolchain.which("nvcc")
    return () if tool is None else _toolkit_dirs(tool)


@functools.cache
def _toolkit_dirs(tool: str) -> tuple[str, ...]:
    """:func:`toolkit_dirs` of the nvcc at ``tool``."""
    try:
        done = toolchain.run(
            [tool, "--dryrun", "-cubin", f"-arch={DEFAULT_ARCH}", "-o", "x.cubin", "x.cu"],
            timeout=60,
        )
    except (OSError, toolchain.ToolError, subprocess.TimeoutExpired):
        return ()  # none known: only the tree and the include roots are allowed
    dirs = []
    for m in re.finditer(r"^#\$ (?:SYSTEM_)?INCLUDES=(.*)$", done.stderr + done.stdout, re.M):
        dirs += [d for d in re.findall(r'"?(?:-I|-isystem" ")?"?([^" ]+)"?', m.group(1))]
    return tuple(dict.fromkeys(os.path.realpath(d) for d in dirs if d.startswith("/")))


def within(path: Path | str, roots: Sequence[str]) -> bool:
    """Whether ``path`` (resolved) lies in one of the resolved ``roots``."""
    real = os.path.realpath(path)
    return any(real == r or real.startswith(r.rstrip("/") + "/") for r in roots)
