"""Hostile inputs of the fifteenth adversarial round (docs/robustness.md, "What was found and
fixed", item 15), against what the two sessions before it added: ``--arg`` and ``--const``
number rules, the sm_90a second build, resident blocks of a persistent kernel, --suggest's
reading of a declaration, an older Triton entry's Python def and its TTGIR's callsites. Each
ends with a result or a located error (exit status 2), in bounded time and memory.
"""

from __future__ import annotations

import shutil
import struct
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.cuda import build
from shmem_cli.cuda.inline_siblings import MAX_VISITS, sibling_lines
from shmem_cli.cuda.launch import values
from shmem_cli.cuda.launch.c_types import INTEGRAL
from shmem_cli.cuda.launch.values import LaunchError
from shmem_cli.cuda.sass import parse, source_lines
from shmem_cli.trace.emulator.budget import Budget
from shmem_cli.trace.emulator.trace_error import TraceError
from shmem_cli.trace.fixes import declared
from shmem_cli.trace.kernel import line_table
from shmem_cli.trace.kernel.binary_formats.elf import Elf
from shmem_cli.trace.kernel.constants import typed_values
from shmem_cli.trace.pipeline import TraceRequest, trace_file
from shmem_cli.trace.triton import callsites, ttgir

from .conftest import HANG_S, TEST_DATA, needs_nvcc, needs_nvdisasm
from .hostile import HOSTILE, refused, shmem
from .test_hostile_triton import entry

# --- numbers given to a parameter of known type -----------------------------------------


@pytest.mark.parametrize("text", ["1e3", "1.5", "-0.0", "inf", "nan"])
@pytest.mark.parametrize(
    "ctype", ["int", "unsigned long long", "short", "char", "int32_t", "int64_t"]
)
def test_a_float_for_an_integer_parameter_is_refused(text: str, ctype: str) -> None:
    # '1e3' for an int stored 1e3f's bits (1,148,846,080), where C++ converts it to 1000
    # (and Triton's launcher refuses a float for an int32_t, as TTGIR names an i32)
    size = INTEGRAL[ctype]
    said = f"is not an integer, and its type is {ctype}"
    with pytest.raises(LaunchError, match=said):
        values.value_bytes(text, size, "--arg 7 (i)", ctype)


def test_a_word_for_an_integer_parameter_is_said_with_integers_only() -> None:
    # the examples of numbers it takes: no float, which an int refuses
    with pytest.raises(LaunchError) as exc:
        values.value_bytes("abc", 4, "--arg 7 (i)", "int")
    said = "--arg 7 (i): 'abc' is not a number (integers: 42, -1, 0x2a; true, false)"
    assert exc.value.message == said


def test_an_integer_parameter_takes_integers_and_raw_bits() -> None:
    assert values.value_bytes("1000", 4, "i", "int") == struct.pack("<i", 1000)
    assert values.value_bytes("0x3f800000", 4, "i", "int") == struct.pack("<f", 1.0)
    assert values.value_bytes("-1", 8, "l", "long long") == b"\xff" * 8
    # a parameter of no known type (a cubin's) still takes a float as its bits
    assert values.value_bytes("1.5", 4, "q") == struct.pack("<f", 1.5)


@pytest.mark.parametrize(("text", "byte"), [("2", 1), ("-1", 1), ("0x100", 1), ("00", 0), ("0", 0)])
def test_a_bool_takes_an_integer_as_cpp_converts_it(text: str, byte: int) -> None:
    # 2 was stored as the byte 2, -1 as 0xff: a bool the kernel's code never expects
    assert values.value_bytes(text, 1, "--arg 5 (t)", "bool") == bytes([byte])
    assert values.as_typed(text, 1, "bool") == str(byte)


@pytest.mark.parametrize("text", ["1e400", "-1e39", "\u0661", "1_0", "\uff11", "1.0\x00"])
def test_a_constant_float_takes_numbers_by_the_arg_rule(text: str) -> None:
    # --const parsed floats with Python's float(): 1e400 was stored as inf, and other
    # scripts' digits ('\u0661', Arabic-Indic one) were taken as numbers
    with pytest.raises(LaunchError, match="--const tf value 0: "):
        typed_values(text, "--const tf", "float")


def test_a_constant_float_still_takes_what_it_took() -> None:
    assert typed_values("inf", "c", "float") == struct.pack("<f", float("inf"))
    assert typed_values("-0", "c", "float") == struct.pack("<f", 0.0)
    assert typed_values("2.5", "c", "double") == struct.pack("<d", 2.5)
    assert typed_values("1", "c", "half") == struct.pack("<e", 1.0)


# --- a persistent kernel whose tile counter never ends its loop ---------------------------

CUBIN5 = HOSTILE / "hostile5.sm_90.cubin"


@needs_nvdisasm
def test_resident_blocks_whose_tickets_never_end_are_bounded_as_a_block_alone() -> None:
    # the 132 blocks take tickets from one counter, so they run together from the start as
    # resident blocks, and never get the ticket that ends their loop: that batch was bounded
    # only by the launch's 180 s (181 s), where a block run alone first has 40 s
    request = TraceRequest(
        CUBIN5, kernel="tickets_forever", block=(256, 1, 1), grid=(132, 1, 1),
        budget=Budget(alone_seconds=1.0),
    )  # fmt: skip
    start = time.monotonic()
    with pytest.raises(TraceError) as err:
        trace_file(request)
    assert time.monotonic() - start < HANG_S  # a liveness guard, not a timing
    said = err.value.message
    assert "time limit of 1 s for the 132 resident blocks run first, in block" in said, said
    assert "hostile5.cu:1" in said and "raise --time-limit" in said, said


# --- the sm_90a second build's look at the files the first read ----------------------------


def _feature_file(tmp_path: Path, size: int, at: int) -> Path:
    name = b"__CUDA_ARCH_FEAT_SM90_ALL"
    path = tmp_path / "computed.h"
    with open(path, "wb") as f:
        f.write(b"#if 0\n" + b"/" * (at - 6) + name + b"\n")
        f.truncate(size)  # the rest zeros, not held
    return path


@pytest.mark.slow
@pytest.mark.parametrize("at", [100, (1 << 20) - 10, (48 << 20) - 40])
def test_a_header_is_looked_through_a_piece_at_a_time(tmp_path: Path, at: int) -> None:
    # a header nvcc read through a computed #include is not size-checked before the build,
    # and names_a_feature read each whole (300 MB of '#if 0': 329 MiB held, 49 now)
    path = _feature_file(tmp_path, 48 << 20, at)
    build.toolkit_dirs()  # asked once (cached), not counted
    tracemalloc.start()
    try:
        assert build.names_a_feature([str(path)], "sm_90")
        assert not build.names_a_feature([str(path)], "sm_100")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


# --- --suggest's look at a shared array's declaration --------------------------------------


def _macro_tower(op: str, levels: int, base: str = "3") -> dict[str, str]:
    """``X1`` is four ``X0`` joined by ``op``, ``X2`` four ``X1``, ... (a source's #defines)."""
    names = {"X0": base}
    for i in range(1, levels + 1):
        names[f"X{i}"] = "(" + op.join([f"X{i - 1}"] * 4) + ")"
    return names


def test_a_macro_is_evaluated_once_however_often_it_is_named() -> None:
    # each name was evaluated again wherever it was named: 4^10 walks took 11.6 s, 4^16 years
    start = time.monotonic()
    assert declared.evaluate("X14", _macro_tower("+", 14)) == 3 * 4**14
    assert declared.evaluate("X16", _macro_tower("+", 16)) is None  # 17 macros deep: as before
    assert declared.evaluate("A", {"A": "B + 1", "B": "A + 1"}) is None  # naming itself
    assert time.monotonic() - start < HANG_S  # a liveness guard, not a timing


@pytest.mark.parametrize(
    "expr",
    [
        "X14",  # (3^4)^4... 14 deep: a number of 4^14 digits, past any array's size
        "-" * 1000 + "1",  # a RecursionError traceback
        "1" + "+1" * 100_000,  # the same, and 200,000 characters parsed
        "(1 << 62) * " * 100 + "1",
    ],
)
def test_an_expression_past_any_size_is_none(expr: str) -> None:
    start = time.monotonic()
    assert declared.evaluate(expr, _macro_tower("*", 14)) is None
    assert time.monotonic() - start < HANG_S  # a liveness guard, not a timing


@pytest.mark.slow
@needs_nvcc
def test_suggest_past_a_declaration_of_macros_named_4_to_the_16_times(tmp_path: Path) -> None:
    # a declaration under #if 0 is still read for its size: --suggest ran past 60 s (killed)
    towers = "\n".join(f"#define {k} {v}" for k, v in _macro_tower("+", 16).items())
    source = tmp_path / "k.cu"
    source.write_text(
        f"{towers}\n__global__ void k(float *out) {{\n#if 0\n  __shared__ float s[X16];\n"
        "#endif\n  __shared__ float s[32 * 32];\n"
        "  s[threadIdx.x * 32 % 1024 + threadIdx.x / 32] = threadIdx.x;\n"
        "  __syncthreads();\n  out[threadIdx.x] = s[threadIdx.x];\n}\n"
    )
    ran = shmem("trace", str(source), "-b", "256", "--suggest", "--no-tables", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    assert ran.seconds < HANG_S
    assert "s[32 * (32 + 4)]" in ran.text  # the padding it suggests


# --- a Triton entry's Python def, where an older TTGIR names no parameter ------------------

ENTRY_34 = (
    TEST_DATA / "triton/versions/3.4.0/cache/7WGM7ECP7WZ2CPD6GPXBOO6VN2NJ5Z5ZIU5WDHKWZXJZJAFWHLHQ"
)


@pytest.mark.parametrize(
    "text",
    [
        "def softmax_rows(a, b: tl.constexpr, c={'k': 1}, d=lambda x: x) -> Dict[str, int]:\n",
        "class K:\n    def softmax_rows(\n  a,\n        b: tl.constexpr, c: 'x:y',\n  d):\n",
        "def softmax_rows(a, b: tl.constexpr,\n    c, d): return 1\nx = (",  # a file cut short
        "def softmax_rows_2(z):\n  pass\ndef softmax_rows(a, b: tl.constexpr, c, d):\n",
    ],
)
def test_a_defs_header_alone_is_parsed(text: str) -> None:
    node = ttgir._def_header(text, "softmax_rows")
    assert node is not None
    assert [a.arg for a in node.args.args] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("text", ["def softmax_rows(a, b", "def softmax_rows(a, '''b):", ""])
def test_a_def_python_cannot_read_names_nothing(text: str) -> None:
    assert ttgir._def_header(text, "softmax_rows") is None


@pytest.mark.slow
@pytest.mark.parametrize("filler", ["x = 1\n", "[" * 50 + "]" * 50 + "\n"])
@needs_nvdisasm
def test_a_4_mib_python_file_named_by_the_ttgir_is_not_parsed_whole(
    tmp_path: Path, filler: str
) -> None:
    # its first #loc names tests/data/triton/kernels.py, found under the folder shmem runs in:
    # 4 MiB of Python there was parsed whole for the def (2.5-2.8 GB, 16-19 s)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(ENTRY_34, repo / "cache" / "E")
    kernels = repo / "tests" / "data" / "triton" / "kernels.py"
    kernels.parent.mkdir(parents=True)
    body = filler * ((4 << 20) // len(filler) - 100)
    kernels.write_text(body + "\ndef softmax_rows(out_ptr, in_ptr, n_cols, row_stride): pass\n")
    ran = shmem("trace", str(repo / "cache" / "E"), "--list-params", cwd=repo)
    assert ran.code == 0, ran.text[-2000:]
    assert ran.peak_mib < 200, ran.peak_mib
    assert "n_cols" in ran.text  # named from the def


# --- a TTGIR's callsite aliases -------------------------------------------------------------


def _callsite_tower(calls: int, depth: int = 64) -> str:
    """A kernel line called through ``depth`` frames of Triton's standard.py, and ``calls``
    more library lines each inlined at the top of that tower."""
    lines = [
        '#loc1 = loc("/k/kernels.py":5:0)',
        '#loc2 = loc("/t/triton/language/standard.py":9:0)',
    ]
    lines.append("#loc3 = loc(callsite(#loc2 at #loc1))")
    lines += [f"#loc{k} = loc(callsite(#loc2 at #loc{k - 1}))" for k in range(4, depth + 2)]
    for j in range(calls):
        a = 100 + 2 * j
        lines.append(f'#loc{a} = loc("/t/triton/language/standard.py":{j + 10}:0)')
        lines.append(f"#loc{a + 1} = loc(callsite(#loc{a} at #loc{depth + 1}))")
    return "\n".join(lines) + "\n"


def _library(file: str) -> bool:
    return "/triton/language/" in file


@pytest.mark.slow
@pytest.mark.parametrize(("calls", "depth"), [(10_000, 14), (24_900, 64), (200_000, 64)])
def test_callsites_of_a_huge_ttgir_are_bounded(calls: int, depth: int) -> None:
    # 600,000 callsites 64 frames deep (62 MiB) took 66 s and a gigabyte: each library frame
    # of each chain stored the chain again from it on; now a chain is followed 16 frames, and
    # past 50,000 aliases nothing is placed
    text = _callsite_tower(calls, depth)
    tracemalloc.start()
    start = time.monotonic()
    try:
        found = callsites.library_callers(text, _library)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - start < HANG_S  # a liveness guard, not a timing
    assert peak < 200 << 20, peak
    kernel = (("/k/kernels.py", 5),)
    if calls * 2 + depth > callsites.MAX_ALIASES:
        assert found == {}
    elif depth < callsites.MAX_DEPTH:  # every library line placed at the kernel's
        assert len(found) == calls + 1 and set(found.values()) == {kernel}
    else:  # the tower's lower frames reach the kernel's line; the calls above it do not
        assert found == {("/t/triton/language/standard.py", 9): kernel}


@pytest.mark.parametrize("ctype", ["float*", "float const*", "Params*"])
def test_a_float_for_a_pointer_is_refused(ctype: str) -> None:
    # a spec's kernel.args {1: 1e3} for 'const float *in' stored 1e3's double bits as the
    # address (0x408f400000000000: 'not a device address' after the launch)
    with pytest.raises(LaunchError, match="is not an integer.*give an address"):
        values.value_bytes("1e3", 8, "kernel.args 1 (in)", ctype)
    assert values.value_bytes("0x7f0000000000", 8, "in", ctype) == (0x7F0000000000).to_bytes(
        8, "little"
    )


# --- the line table's sibling calls ----------------------------------------------------------


def _sibling_chains(rows: int, depth: int) -> tuple[str, list[tuple[tuple[str, int], ...]]]:
    """SASS of ``rows`` instructions, each a library line inlined through a line of its own
    (lib.h:i in mid.h:i in k.cu:7), and line-table links that take every mid.h line up a
    chain of ``depth`` library lines to k.cu:9 (so each is in doubt between 7 and 9)."""
    out = ['\t.section\t.text.k,"ax",@progbits']
    for i in range(1, rows + 1):
        out.append(
            f'\t//## File "/p/include/lib.h", line {i} inlined at "/p/include/mid.h", line {i}'
        )
        out.append(f'\t//## File "/p/include/mid.h", line {i} inlined at "/p/k.cu", line 7')
        out.append('\t//## File "/p/k.cu", line 7')
        out.append(f"        /*{(i - 1) * 16:04x}*/                   LDS R0, [R1] ;")
    links = [(("/p/include/mid.h", i), ("/p/include/deep.h", 1)) for i in range(1, rows + 1)]
    links += [(("/p/include/deep.h", j), ("/p/include/deep.h", j + 1)) for j in range(1, depth)]
    links.append((("/p/include/deep.h", depth), ("/p/k.cu", 9)))
    return "\n".join(out) + "\n", links


def _user_file(file: str) -> bool:
    return not file.startswith("/p/include/")


@pytest.mark.parametrize(("rows", "depth"), [(50, 100), (5_000, 50_000)])
def test_sibling_calls_are_looked_for_in_bounded_time(rows: int, depth: int) -> None:
    # every row's walk up its callers went the whole chain again: 1,000 rows of a chain of
    # 10,000 library lines took 3.6 s (quadratic); past a million visits no more is marked
    sass, links = _sibling_chains(rows, depth)
    (fn,) = parse(sass)
    lines = source_lines(fn, _user_file)
    start = time.monotonic()
    marked = sibling_lines(fn, lines, _user_file, links)
    assert time.monotonic() - start < HANG_S  # a liveness guard, not a timing
    if rows * depth <= MAX_VISITS:
        assert len(marked) == rows and set(marked.values()) == {(("/p/k.cu", 9),)}
    else:
        assert 0 < len(marked) < rows  # those walked before the bound


def test_a_listing_of_a_deep_inlining_chain_is_read_in_linear_time() -> None:
    # each '//## File' line made the chain a new tuple: 40,000 before one instruction (an
    # nvdisasm listing of a crafted line table, or a build cache's) took 3.9 s, quadratic
    levels = 200_000
    sass = '\t.section\t.text.k,"ax",@progbits\n' + "".join(
        f'\t//## File "/p/include/lib.h", line {i} inlined at "/p/k.cu", line 7\n'
        for i in range(levels)
    )
    sass += '\t//## File "/p/k.cu", line 9\n        /*0000*/                   LDS R0, [R1] ;\n'
    start = time.monotonic()
    (fn,) = parse(sass)
    assert time.monotonic() - start < HANG_S  # a liveness guard, not a timing
    (ins,) = fn.instructions
    assert len(ins.locations) == levels + 1
    assert ins.locations[0] == ("/p/include/lib.h", 0) and ins.locations[-1] == ("/p/k.cu", 9)


# --- a Triton entry's metadata ---------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        {"backend": "hip", "arch": "gfx942", "warp_size": 64},
        ["cuda", 90, 64],  # Triton 3.2's target as a list
    ],
)
@needs_nvdisasm
def test_a_warp_of_64_threads_is_refused(tmp_path: Path, target: Any) -> None:
    # a target's warp_size 64 (an AMD GPU's) made the block num_warps x 64 = 256 threads for
    # a cubin compiled for 128, traced without a word
    folder = entry(tmp_path, target=target, warp_size=...)  # the target says it alone
    ran = shmem("trace", str(folder), "-g", "1", "--no-tables", cwd=tmp_path)
    refused(ran, "unexpected metadata: 'warp_size' is 64; a launch takes 32")


@needs_nvdisasm
@pytest.mark.slow  # 7 s: a sampled grid
def test_the_largest_grid_of_ticket_blocks_is_sampled_as_any_grid() -> None:
    # the blocks after the resident ones ran to half of the launch's 180 s (a grid of 2^62
    # blocks of one ticket each, 32 threads: 74 s, 633 MiB); they are sampled now by the
    # budget, as any grid's blocks after its first (7 s, 160 MiB)
    ran = shmem(
        "trace", str(CUBIN5), "-k", "one_ticket", "-b", "32", "-g", "2147483647,65535,65535",
        "--no-tables",
    )  # fmt: skip
    assert ran.code == 0, ran.text[-2000:]
    assert ran.seconds < HANG_S and ran.peak_mib < 400, (ran.seconds, ran.peak_mib)
    assert "note: sampled grid" in ran.text
    assert "blocks take work from one another" in ran.text


# --- the line table's relocations ------------------------------------------------------------


def _relocations_again(cubin: Path, into: Path, copies: int, of: str = ".debug_line") -> Path:
    """``cubin`` with its ``.rela`` section of ``of`` repeated ``copies`` times, appended."""
    data = bytearray(cubin.read_bytes())
    elf = Elf(bytes(data), "")
    rel = elf.by_name[f".rela{of}"]
    more = elf.body(rel) * copies
    at = (len(data) + 7) & ~7
    data += bytes(at - len(data)) + more
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    header = shoff + elf.sections.index(rel) * struct.unpack_from("<H", data, 0x3A)[0]
    struct.pack_into("<QQ", data, header + 24, at, len(more))
    into.write_bytes(bytes(data))
    return into


def test_a_line_table_of_more_relocations_than_sequences_is_not_read(tmp_path: Path) -> None:
    # each relocation of .debug_line patches a sequence's DW_LNE_set_address (11 bytes):
    # 2.6 million of them naming one symbol (a 60 MiB cubin) held 609 MiB for 11 s
    path = _relocations_again(CUBIN5, tmp_path / "k.cubin", 100_000)
    assert line_table.line_rows(CUBIN5, "_Z15tickets_foreverPjPf").links != ()  # read as it was
    tracemalloc.start()
    try:
        assert line_table.line_rows(path, "_Z15tickets_foreverPjPf").links == ()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < (8 << 20) + 2 * path.stat().st_size, peak  # the file, nothing per relocation


@needs_nvdisasm
def test_a_constant_bank_of_more_relocations_than_words_is_refused(tmp_path: Path) -> None:
    # each relocation of a constant bank patches a slot of it: 2.6 million naming one symbol
    # (a 60 MiB cubin) were each read, named and kept (462 MiB, 19 s)
    calls = TEST_DATA / "trace" / "external" / "calls.sm_90.cubin"
    path = _relocations_again(calls, tmp_path / "k.cubin", 10_000, of=".nv.constant4")
    ran = shmem("trace", str(path), "-k", "printf_value", "-b", "32", "--no-tables")
    refused(ran, "k.cubin: error: not a valid cubin: .rela.nv.constant4 holds 70,000 relocations")
