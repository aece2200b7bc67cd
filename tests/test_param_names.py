"""Parameter names from a library's declaration (shmem_cli.trace.kernel.signature and
shmem_cli.cuda.named_sources): a kernel declared in an include root with macros for its
keywords, as CUTLASS 3.x declares ``cutlass::device_kernel``.

The library texts here are this project's own, written in the pattern such a library
uses: a header that defines the keyword macro, another that declares the kernel with it
(and with an attribute macro before the parameter's type). Expected names are read off
these texts by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shmem_cli.cuda.named_sources import library_texts
from shmem_cli.trace.kernel.signature import (
    declaration_macros,
    declarator_name,
    naming_text,
    param_names,
)
from shmem_cli.trace.pipeline import TraceRequest, kernel_parameters

from .conftest import needs_nvcc, needs_nvdisasm

MACROS = "#pragma once\n#define MYLIB_GLOBAL __global__ static\n#define MYLIB_HOST __host__\n"
KERNEL = """#pragma once
#include "macros.h"
#if !defined(MYLIB_GRID_CONSTANT)
#  if defined(__CUDA_ARCH__)
#    define MYLIB_GRID_CONSTANT __grid_constant__  // where the target has it
#  else
#    define MYLIB_GRID_CONSTANT
#  endif
#endif
namespace mylib {
/// the one kernel every operator runs through
template <typename Op>
MYLIB_GLOBAL
#ifdef __CUDACC__
__launch_bounds__(Op::Threads, 1)
#endif
void run_op(MYLIB_GRID_CONSTANT typename Op::Params const params)
{
  extern __shared__ char smem[];
  Op op;
  op(params, smem);
}
}  // namespace mylib
"""


def test_a_kernel_declared_with_a_macro_for_global_is_named() -> None:
    assert param_names([MACROS, KERNEL], "mylib::run_op<Scale<float> >", 1) == ["params"]
    # the macro's definition is in another text: without it MYLIB_GLOBAL says nothing
    assert param_names([KERNEL], "mylib::run_op<Scale<float> >", 1) is None


@pytest.mark.parametrize(
    ("source", "names"),
    [
        ("#define A __global__\n#define B A\nB void k(int x, int y) {}", ["x", "y"]),
        ("#define MYLIB_HOST __host__\nMYLIB_HOST void k(int x, int y) {}", None),
        ("#define G(x) __global__\nG(1) void k(int x, int y) {}", None),  # function-like
        ("#define G __global__\n#define X 1\nvoid k(int x, int y) {}", None),  # not before k
        (
            "#define G __global__\n#if A\nG\n#else\n__device__\n#endif\nvoid k(int x, int y)",
            ["x", "y"],
        ),
    ],
    ids=["through-another-macro", "host-macro", "function-like", "elsewhere", "in-a-branch"],
)
def test_which_macros_count_as_global(source: str, names: list[str] | None) -> None:
    assert param_names([source], "k", 2) == names


def test_braces_inside_launch_bounds_do_not_end_the_declaration() -> None:
    # the launch bounds computed from a layout built with braces (CuTe's tutorials' style);
    # a kernel of our own in that style, its third parameter unnamed
    source = (
        "template <class Shape, class Layout>\n"
        "__global__ static\n"
        "__launch_bounds__(decltype(size(Layout{}))::value)\n"
        "void\n"
        "tile_copy(Shape shape, float const* in, Layout , float* out)\n"
        "{ }\n"
    )
    assert param_names([source], "tile_copy<Shape, Layout>", 4) == ["shape", "in", None, "out"]
    # a brace outside any parenthesis still ends what came before: no __global__ after it
    plain = "__global__ void other() {}\nvoid tile_copy(int shape, int in, int x, int out) {}"
    assert param_names([plain], "tile_copy", 4) is None


def test_attribute_macros_are_skipped_in_a_declarator() -> None:
    # a macro before the type is one more word: a named parameter keeps its name, but an
    # unnamed one would take its type's name unless the macro is known to be an attribute
    assert declarator_name("MYLIB_GRID_CONSTANT typename Op::Params const params") == "params"
    assert declarator_name("MYLIB_GRID_CONSTANT Params", {"MYLIB_GRID_CONSTANT"}) is None
    source = "#define GC\n__global__ void k(GC Params, GC int n) {}"
    assert param_names([source], "k", 2) == [None, "n"]


def test_declaration_macros() -> None:
    text = (
        "#define EMPTY\n#define GC __grid_constant__\n#define BOTH __restrict__ __grid_constant__\n"
        "#define N 128\n#define ATTR __attribute__((unused))\n#define KG __global__ static\n"
        "#define F(x) __global__\n"
    )
    kernel, attributes = declaration_macros([text])
    assert kernel == {"__global__", "KG"}
    assert attributes == {"EMPTY", "GC", "BOTH"}


def test_naming_text_keeps_a_mention_whole_else_the_global_macros() -> None:
    assert naming_text(KERNEL, {"run_op"}) == KERNEL
    assert naming_text(MACROS, {"run_op"}) == "#define MYLIB_GLOBAL __global__ static"
    assert naming_text("/* #define X __global__ */ int y;", {"run_op"}) is None
    assert naming_text("int run_op_count;", set()) is None
    many = {f"kernel{i}" for i in range(100)}
    assert naming_text("void kernel42(int);", many) == "void kernel42(int);"
    assert naming_text("void kernel420(int);", many) is None  # a word, not a part of one


def test_library_texts_reads_only_the_allowed_folders(tmp_path: Path) -> None:
    lib, tree, other = tmp_path / "lib", tmp_path / "tree", tmp_path / "other"
    for folder in (lib, tree, other):
        folder.mkdir()
        (folder / "k.h").write_text(f"// {folder.name}\n__global__ void run_op(int n);\n")
        (folder / "unrelated.h").write_text("int x;\n")
    paths = [str(f / name) for f in (other, lib, tree) for name in ("k.h", "unrelated.h")]
    read: list[Path] = [tree / "k.h"]  # read already: not again
    texts = library_texts(
        [*paths, str(tmp_path / "missing.h")],
        [str(lib)],
        lambda p: tree in p.parents,
        lambda text: naming_text(text, {"run_op"}),
        read,
    )
    assert [t.splitlines()[0] for t in texts] == ["// lib"]
    assert read == [tree / "k.h", lib / "k.h", lib / "unrelated.h", tree / "unrelated.h"]


OWN_CU = """#include <mylib/kernel.h>
struct Scale {
  static constexpr int Threads = 64;
  struct Params { float* out; float factor; };
  __device__ void operator()(Params const& p, char*) { p.out[threadIdx.x] *= p.factor; }
};
void launch(Scale::Params p) { mylib::run_op<Scale><<<1, Scale::Threads>>>(p); }
"""


@pytest.mark.slow
@needs_nvcc
@needs_nvdisasm
@pytest.mark.parametrize("how", ["include-root", "typed"])
def test_a_library_kernel_of_a_build_is_named(tmp_path: Path, how: str) -> None:
    include, proj = tmp_path / "lib" / "include", tmp_path / "proj"
    (include / "mylib").mkdir(parents=True)
    proj.mkdir()
    (include / "mylib" / "macros.h").write_text(MACROS)
    (include / "mylib" / "kernel.h").write_text(KERNEL)
    (proj / "k.cu").write_text(OWN_CU)
    request = TraceRequest(
        proj / "k.cu",
        nvcc_args=(f"-I{include}",),
        source_roots=(str(proj),),
        include_roots=(str(include),) if how == "include-root" else (),
        nvcc_trusted=how == "typed",
    )
    ((kernel, params),) = kernel_parameters(request)
    assert kernel.name.startswith("mylib::run_op<")
    assert [p.name for p in params] == ["params"]
