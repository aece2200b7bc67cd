"""Which nvcc arguments a kernel build may take from a spec or from ``--nvcc-arg``.

nvcc hands the arguments it gets to the programs it runs (the host compiler's
preprocessor, cicc, ptxas) on command lines that a shell reads: on CUDA 13,
``-DX=$(cmd)`` becomes ``-D "X=$(cmd)"`` and the shell runs ``cmd``;
``-Xcompiler`` and ``--compiler-bindir`` run programs of the caller's choice;
``-include``, ``--options-file``, ``-MF``, ``--time`` and ``--keep-dir`` read or
write files by name. So an argument is accepted only when it is on this list, in
a form that is inert on a shell command line:

* ``-DNAME``, ``-DNAME=VALUE`` (also ``-D NAME``, ``--define-macro``): NAME a C
  identifier, VALUE made of letters, digits and ``_ . + -`` only;
* ``-UNAME`` (``--undefine-macro``);
* ``-IDIR`` (``--include-path``; ``-isystem``, ``--system-include``, passed as ``-I``): a
  folder the caller's ``inside`` accepts (for a spec: the kernel's source tree or an include
  root, :mod:`shmem_cli.cuda.sources`; the user's own command line: any), with no
  shell-special character in its path;
* ``-std=c++11`` ... ``-std=c++20``; ``--expt-relaxed-constexpr``,
  ``--expt-extended-lambda``, ``--extended-lambda``;
* ``-G``, ``--device-debug``, ``-lineinfo``, ``--generate-line-info``;
* ``-maxrregcount=N`` (``--maxrregcount``), ``-use_fast_math``, ``-ftz=``,
  ``-prec-div=``, ``-prec-sqrt=``, ``-fmad=`` (``true``/``false``), ``-O0``..``-O3``,
  ``-w``, ``--restrict``, ``-Wno-deprecated-gpu-targets``;
* ``-Xptxas OPTS`` (``--ptxas-options``) whose comma-separated options only tune
  code generation: ``-O0``..``-O3``, ``-v``, ``-maxrregcount=N``, ``-dlcm=``/``-dscm=``
  cache defaults, ``--allow-expensive-optimizations=``, the spill and local-memory
  warnings;
* taken and left out of the build, which they would not change: the link's ``-lNAME``
  (``--library``) and ``-LDIR`` (``--library-path``), as a program's build line has them
  (llm.c's ``-lcublas -lcublasLt``; a cubin is not linked), and nvcc's own ``-t N``
  (``--threads``: how many targets it builds at once; a kernel build has one).

Everything else is refused with the reason. :func:`check_nvcc_args` is the one
place this rule lives; the spec compiler and ``shmem trace`` call it before any
work, and :func:`shmem_cli.toolchain.compile_cu` calls it again on what it runs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..plumbing.errors import shorten
from ..plumbing.frozen import frozen

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MACRO_VALUE = re.compile(r"[A-Za-z0-9_.+\-]*\Z")
_BOOL = ("true", "false")
_STDS = ("c++11", "c++14", "c++17", "c++20")
_FLAGS = {
    "--expt-relaxed-constexpr",
    "-expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "-expt-extended-lambda",
    "--extended-lambda",
    "-extended-lambda",
    "-G",
    "--device-debug",
    "-lineinfo",
    "--generate-line-info",
    "-use_fast_math",
    "--use_fast_math",
    "-O0",
    "-O1",
    "-O2",
    "-O3",
    "-w",
    "--disable-warnings",
    "--restrict",
    "-restrict",
    "-Wno-deprecated-gpu-targets",
}
_BOOL_OPTIONS = (
    "-ftz",
    "--ftz",
    "-prec-div",
    "--prec-div",
    "-prec-sqrt",
    "--prec-sqrt",
    "-fmad",
    "--fmad",
)
_PTXAS_FLAGS = {
    "-O0",
    "-O1",
    "-O2",
    "-O3",
    "-v",
    "--verbose",
    "-warn-spills",
    "--warn-on-spills",
    "-warn-lmem-usage",
    "--warn-on-local-memory-usage",
    "-allow-expensive-optimizations",
    "--disable-optimizer-constants",
    "-disable-optimizer-consts",
}
_PTXAS_CHOICES = {
    "-dlcm": ("ca", "cg", "cv"),
    "--def-load-cache": ("ca", "cg", "cv"),
    "-dscm": ("wb", "cg", "cs", "wt"),
    "--def-store-cache": ("wb", "cg", "cs", "wt"),
    "-allow-expensive-optimizations": _BOOL,
    "--allow-expensive-optimizations": _BOOL,
}
#: what refused options do, for the message (the reason is the point)
_WHY = {
    "-Xcompiler": "passes options to the host compiler, which nvcc runs through a shell",
    "--compiler-options": "passes options to the host compiler, which nvcc runs through a shell",
    "-ccbin": "names the host compiler nvcc runs: a spec must not choose a program",
    "--compiler-bindir": "names the host compiler nvcc runs: a spec must not choose a program",
    "-include": "includes a file by name: #include it in the source, inside the tree",
    "--pre-include": "includes a file by name: #include it in the source, inside the tree",
    "--options-file": "reads more arguments from a file",
    "-optf": "reads more arguments from a file",
    "--time": "writes a file of its choosing",
    "--keep": "keeps nvcc's intermediate files",
    "--keep-dir": "writes files into a folder of its choosing",
    "--save-temps": "keeps nvcc's intermediate files",
    "-o": "names the output file (shmem chooses it)",
    "--output-file": "names the output file (shmem chooses it)",
    "-odir": "writes files into a folder of its choosing",
    "--output-directory": "writes files into a folder of its choosing",
    "-arch": "sets the target (use --arch, or the spec's arch)",
    "--gpu-architecture": "sets the target (use --arch, or the spec's arch)",
    "-gencode": "sets the target (use --arch, or the spec's arch)",
    "--generate-code": "sets the target (use --arch, or the spec's arch)",
    "-code": "sets the target (use --arch, or the spec's arch)",
    "--run": "runs the program it builds",
    "-Xlinker": "passes options to the host linker",
    "-Xnvlink": "passes options to the device linker",
    "-Xcudafe": "passes options to the CUDA front end",
    "-Xarchive": "passes options to the archiver",
    "--dryrun": "changes what nvcc does (prints instead of compiling)",
}
_WRITERS = ("-M", "--generate-dependencies", "--dependency-output", "-MF", "-MD", "-MMD")
#: options a kernel build takes and leaves out (:func:`_inert`): the link's, which a cubin
#: build ignores, and nvcc's count of targets built at once (one here); the value's form
_INERT = (
    ("-l", "--library", re.compile(r"[A-Za-z0-9_.+,\-]+\Z"), "a library's name"),
    ("-L", "--library-path", re.compile(r".+\Z", re.DOTALL), "a folder"),
    ("-t", "--threads", re.compile(r"[0-9]{1,4}\Z"), "a number of threads"),
)


class NvccArgError(ValueError):
    """An argument that is refused: ``index`` is its place in the list given."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def shell_special(text: str) -> str | None:
    """The first character of ``text`` that means something to a shell inside the double
    quotes nvcc puts around paths and macro values (``$ ` " \\``, or a control character),
    or None."""
    for ch in text:
        if ch in '$`"\\' or ord(ch) < 0x20 or ord(ch) == 0x7F:
            return ch
    return None


@frozen
class IncludeDir:
    """An ``-I`` folder: as written and resolved (absolute)."""

    written: str
    path: Path


def check_nvcc_args(
    args: Sequence[str],
    *,
    base: Path,
    inside: Callable[[Path], bool],
) -> tuple[list[str], list[IncludeDir]]:
    """The arguments in the one form nvcc gets (``-DX=1``, ``-I/abs/dir``), and the
    include folders; an :class:`NvccArgError` for the first refused one.

    ``base`` is the folder relative ``-I`` paths start from (the spec's folder, or the
    current one); ``inside(path)`` says whether a resolved folder is in the tree."""
    out: list[str] = []
    dirs: list[IncludeDir] = []
    i = 0
    while i < len(args):
        arg, where = args[i], i
        if "\0" in arg:
            raise NvccArgError(where, "an nvcc argument holds a NUL character")
        value, i = _value(args, i, "-D", "--define-macro")
        if value is not None:
            out.append("-D" + _macro(value, where))
        elif (found := _value(args, i, "-U", "--undefine-macro"))[0] is not None:
            value, i = found
            if not _IDENT.match(value or ""):
                raise NvccArgError(where, f"-U needs a macro name (a C identifier), got {_q(arg)}")
            out.append(f"-U{value}")
        elif (found := _include_value(args, i))[0] is not None:
            value, i = found
            folder = _include_dir(value or "", base, inside, where)
            dirs.append(folder)
            out.append("-I" + str(folder.path))
        elif (found := _first(args, i, ("-Xptxas", "--ptxas-options")))[0] is not None:
            value, i = found
            out.append("-Xptxas=" + ",".join(_ptxas(value or "", where)))
        elif (found := _first(args, i, ("-std", "--std")))[0] is not None:
            value, i = found
            if value not in _STDS:
                raise NvccArgError(
                    where, f"-std must be one of {', '.join(_STDS)}, got {_q(value or '')}"
                )
            out.append(f"-std={value}")
        elif (found := _first(args, i, ("-maxrregcount", "--maxrregcount")))[0] is not None:
            value, i = found
            out.append("-maxrregcount=" + _registers(value or "", where))
        elif arg in _FLAGS:
            out.append(arg)
        elif arg.partition("=")[0] in _BOOL_OPTIONS:
            name, _, flag = arg.partition("=")
            if flag not in _BOOL:
                raise NvccArgError(where, f"{name} takes =true or =false, got {_q(arg)}")
            out.append(arg)
        elif (last := _inert(args, i)) is not None:
            i = last  # (checked, not passed: it would not change the cubin)
        else:
            raise NvccArgError(where, refusal(arg))
        i += 1
    return out, dirs


def _inert(args: Sequence[str], i: int) -> int | None:
    """The index of the last token of an option :data:`_INERT` names at ``args[i]``
    (``-lcublas``, ``-l cublas``, ``--library=cublas``, ``-t 0``, ``--threads=0``), its value
    checked; None for another argument (``-t`` takes no joined value: ``-time`` is not
    ``-t ime``)."""
    arg = args[i]
    for short, long, form, says in _INERT:
        if arg in (short, long):
            if i + 1 >= len(args):
                raise NvccArgError(i, f"nvcc argument {arg!r} needs a value after it")
            value, last = args[i + 1], i + 1
        elif arg.startswith((long + "=", short + "=")):
            value, last = arg.partition("=")[2], i
        elif short != "-t" and arg.startswith(short) and not arg.startswith("--"):
            value, last = arg[len(short) :], i
        else:
            continue
        if not form.match(value):
            raise NvccArgError(i, f"{short} takes {says}, got {_q(value)}")
        return last
    return None


def macro_spans(args: Sequence[str]) -> Iterator[tuple[int, int, str]]:
    """Where ``args`` define or undefine a macro, in every spelling :func:`check_nvcc_args`
    takes (``-DNAME=V``, ``-D NAME``, ``--define-macro=NAME``, ``-UNAME``, ...): the index of
    the first and of the last token, and the macro's name; other arguments are passed over."""
    i = 0
    while i < len(args):
        for short, long in (("-D", "--define-macro"), ("-U", "--undefine-macro")):
            try:
                value, last = _value(args, i, short, long)
            except NvccArgError:  # an option without its value: no macro named
                value, last = None, i
            if value is not None:
                yield i, last, value.partition("=")[0]
                i = last
                break
        i += 1


def _value(args: Sequence[str], i: int, short: str, long: str) -> tuple[str | None, int]:
    """The value of option ``short``/``long`` at ``args[i]`` (``-Xv``, ``-X v``,
    ``--long=v``, ``--long v``) and the index of its last token; (None, i) if it is
    another option."""
    arg = args[i]
    for name in (long, short):
        if name and arg == name:
            if i + 1 >= len(args):
                raise NvccArgError(i, f"nvcc argument {arg!r} needs a value after it")
            return args[i + 1], i + 1
        if name == long and arg.startswith(long + "="):
            return arg[len(long) + 1 :], i
    if short and arg.startswith(short) and not arg.startswith("--"):
        return arg[len(short) :], i
    return None, i


def _include_value(args: Sequence[str], i: int) -> tuple[str | None, int]:
    """:func:`_value` of an include folder: ``-I``/``--include-path``, or ``-isystem`` /
    ``--system-include`` (CMake's spelling for a library's headers; nvcc gets ``-I``: the
    two differ only in the host compiler's warnings)."""
    found = _value(args, i, "-I", "--include-path")
    if found[0] is None:
        found = _value(args, i, "-isystem", "--system-include")
        if found[0] is not None and args[i].startswith("-isystem="):
            return found[0][1:], found[1]
    return found


def _first(args: Sequence[str], i: int, longs: Sequence[str]) -> tuple[str | None, int]:
    """:func:`_value` of the first of several spellings of an option without a short form."""
    for long in longs:
        value, j = _value(args, i, "", long)
        if value is not None:
            return value, j
    return None, i


def refusal(arg: str) -> str:
    """Why ``arg`` is refused, in words, with what is allowed."""
    name = arg.partition("=")[0]
    why = _WHY.get(name)
    if why is None and name.startswith(_WRITERS):
        why = "writes a dependency file of its choosing"
    head = f"nvcc argument {_q(arg)} is not allowed"
    if why:
        head += f": it {why}"
    return (
        head + "; a kernel build may take -D/-U macros, -I/-isystem folders (a spec's: inside "
        "its source tree), -std=, --expt-*, -G, -lineinfo, -maxrregcount=, -Xptxas "
        "code-generation options, and (left out: they would not change the cubin) -l/-L and -t"
    )


def _q(text: str) -> str:
    return repr(shorten(text))


def _macro(value: str, where: int) -> str:
    name, eq, body = value.partition("=")
    if not _IDENT.match(name):
        raise NvccArgError(
            where, f"-D needs NAME or NAME=VALUE with NAME a C identifier, got {_q(value)}"
        )
    if not _MACRO_VALUE.match(body):
        bad = next(ch for ch in body if not _MACRO_VALUE.match(ch))
        raise NvccArgError(
            where,
            f"-D{shorten(name)}: the value {_q(body)} holds {bad!r}; a macro value from a spec "
            "may hold only letters, digits and _ . + - (nvcc hands it to a shell); put a "
            "longer definition in the source",
        )
    return name + eq + body


def _registers(value: str, where: int) -> str:
    if not re.fullmatch(r"[0-9]{1,3}", value) or not 16 <= int(value) <= 255:
        raise NvccArgError(where, f"-maxrregcount takes a number 16..255, got {_q(value)}")
    return str(int(value))


def _ptxas(value: str, where: int) -> list[str]:
    out = []
    for opt in (o.strip() for o in value.split(",")):
        name, eq, setting = opt.partition("=")
        if opt in _PTXAS_FLAGS:
            out.append(opt)
        elif name in ("-maxrregcount", "--maxrregcount") and eq:
            out.append(f"{name}={_registers(setting, where)}")
        elif name in _PTXAS_CHOICES and setting in _PTXAS_CHOICES[name]:
            out.append(opt)
        else:
            raise NvccArgError(
                where,
                f"-Xptxas option {_q(opt)} is not allowed: only options that tune code "
                "generation (-O0..-O3, -v, -maxrregcount=N, -dlcm=, -dscm=, "
                "--allow-expensive-optimizations=, --warn-on-spills)",
            )
    return out


def _include_dir(value: str, base: Path, inside: Callable[[Path], bool], where: int) -> IncludeDir:
    if not value:
        raise NvccArgError(where, "-I needs a folder")
    if value != value.strip():  # --nvcc-arg='-I /x' is one argument: the folder ' /x'
        raise NvccArgError(
            where, f"-I {_q(value)}: a folder name that starts or ends with a space; give "
            f"-I{value.strip()} (one argument, no space) or -I and the folder as two",
        )  # fmt: skip
    try:
        path = (base / value).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        raise NvccArgError(where, f"-I {_q(value)}: cannot resolve the folder ({exc})") from None
    bad = shell_special(str(path))
    if bad is not None:
        raise NvccArgError(
            where, f"-I {_q(value)}: the path holds {bad!r}, which nvcc would hand to a shell"
        )
    if not inside(path):
        raise NvccArgError(
            where,
            f"-I {_q(value)} is outside the kernel's source tree; keep it inside, or name a "
            "wider folder in [tool.shmem] source-roots (shmem trace: --source-root)",
        )
    if not os.path.isdir(path):
        raise NvccArgError(where, f"-I {_q(value)}: no such folder")
    return IncludeDir(value, path)
