"""An executable's rows at the user's own lines, as a `.cu`'s are: the project's own host
program (tests/data/trace/exe_lines: `lines.cu`, whose kernel stores through a header
library of the project's own, `include/strided/store.h`, and loads shared memory itself).

`lines` was built by build.sh outside the repository (/tmp/shmem-exe-lines, since removed),
so its line table names files that are not where the test runs, as an executable built on
another machine does. Expected counts, by hand: 32 lanes store at a stride of 2 words
(`store<2>`): 64 words over 32 banks, two lanes a bank, 2 wavefronts for 1 request; the load
of `smem[lane]` is one word a lane, 1 wavefront.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.cuda import toolchain
from shmem_cli.cuda.sass import parse, source_lines
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.user_lines import compiled_files

from .conftest import TRACE_DATA, needs_nvcc, needs_nvdisasm

DATA = TRACE_DATA / "exe_lines"
needs_cuobjdump = pytest.mark.skipif(
    toolchain.which("cuobjdump") is None, reason="cuobjdump not found (pip install 'shmem[cuda]')"
)


def _rows(path: Path, **request: Any) -> list[tuple[str, int, str | None, int, int]]:
    """(file name, line, the inner line's file name, requests, wavefronts) of each row."""
    (kernel,) = trace_file(TraceRequest(path, block=(32, 1, 1), **request)).kernels
    return [
        (
            Path(a.site.file).name,
            a.site.line,
            None if a.site.inner is None else f"{Path(a.site.inner[0]).name}:{a.site.inner[1]}",
            a.cost.requests,
            a.cost.wavefronts,
        )
        for a in kernel.accesses
    ]


EXPECTED = [
    ("lines.cu", 10, "store.h:9", 1, 2),  # strided::store<2>(...), the library's store inside
    ("lines.cu", 12, None, 1, 1),  # the user's own load
]


@needs_nvdisasm
@needs_cuobjdump
def test_an_executable_built_elsewhere_has_its_rows_at_the_users_lines() -> None:
    assert _rows(DATA / "lines") == EXPECTED


@pytest.mark.slow  # an nvcc build
@needs_nvcc
@needs_nvdisasm
def test_the_cu_with_its_library_typed_gives_the_same_rows() -> None:
    include = f"-I{DATA / 'include'}"
    assert _rows(DATA / "lines.cu", nvcc_args=(include,), nvcc_trusted=True) == EXPECTED


@pytest.mark.slow  # an nvcc build
@needs_nvcc
@needs_nvdisasm
@needs_cuobjdump
def test_an_executable_built_where_it_is_traced_has_them_too(tmp_path: Path) -> None:
    # the header library inside the executable's own folder (its source tree), as a
    # repository that keeps a library beside its code: no include root says it is one
    project = tmp_path / "project"
    shutil.copytree(DATA / "include", project / "include")
    shutil.copy(DATA / "lines.cu", project / "lines.cu")
    nvcc = str(toolchain.which("nvcc"))
    build = [nvcc, "-O3", "-lineinfo", "-arch=sm_90", "-cudart", "shared", "-Iinclude"]
    subprocess.run([*build, "-o", "lines", "lines.cu"], cwd=project, check=True, timeout=300)
    assert _rows(project / "lines") == EXPECTED


SASS = """\t.section\t.text.k,"ax",@progbits
\t//## File "/elsewhere/lib/copy.h", line 3 inlined at "/elsewhere/k.cu", line 7
\t//## File "/elsewhere/k.cu", line 7
        /*0000*/                   LDS R2, [R1] ;
\t//## File "/elsewhere/lib/copy.h", line 3 inlined at "/elsewhere/kern.cuh", line 9
\t//## File "/elsewhere/kern.cuh", line 9
        /*0010*/                   LDS R3, [R1] ;
\t//## File "/opt/lib/include/copy.cu", line 4 inlined at "/elsewhere/k.cu", line 8
\t//## File "/elsewhere/k.cu", line 8
        /*0020*/                   LDS R4, [R1] ;
"""


def test_a_binarys_rows_prefer_a_compiled_file_and_else_keep_the_users_rule() -> None:
    """Hand-made chains of a binary built elsewhere: a library line inlined in a .cu is
    placed at the .cu's line; one inlined in a header that defines the kernel (no compiled
    file in the chain) as the user's rule says (here: nothing is the user's, the innermost);
    a .cu in an include root is the library's."""
    (fn,) = parse(SASS)
    compiled = compiled_files(["/opt/lib/include"])
    files = ("/x/k.cu", "/x/K.CPP", "/x/k.cuh", "/opt/lib/include/copy.cu")
    assert [compiled(f) for f in files] == [True, True, False, False]
    assert source_lines(fn, lambda f: False, compiled) == {
        0x0: ("/elsewhere/k.cu", 7),
        0x10: ("/elsewhere/lib/copy.h", 3),
        0x20: ("/elsewhere/k.cu", 8),
    }
    # the user's rule (a header of the tree: the user's) where no compiled file is in the chain
    mine = source_lines(fn, lambda f: f.endswith("kern.cuh"), compiled)
    assert mine[0x10] == ("/elsewhere/kern.cuh", 9) and mine[0x0] == ("/elsewhere/k.cu", 7)
