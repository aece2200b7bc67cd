"""A ``@triton.jit`` helper called from two lines: its rows name the call each came from
(tests/data/triton/helper_calls, Triton 3.9.0, whose line table holds the inlining chain).
The kernel's ``.py`` lies outside the cache entry's tree, as every Triton user's does; its
calls are the user's lines all the same (not Triton's or Inductor's library)."""

from __future__ import annotations

from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.trace.triton.callsites import triton_source_file

from .conftest import TEST_DATA, needs_nvdisasm

CACHE = TEST_DATA / "triton" / "helper_calls" / "cache"


@needs_nvdisasm
def test_the_helpers_rows_are_split_by_the_line_that_called_it() -> None:
    result = shmem_cli.trace(CACHE)
    helper = [a for a in result.accesses if a.line in (11, 12)]  # tile_mm's loads and dot
    assert helper and all(a.site.caller is not None for a in helper)
    assert {a.site.caller[1] for a in helper if a.site.caller} == {21, 22}  # its two calls
    per_line = {(ln.line, ln.caller[1] if ln.caller else None): ln for ln in result.kernel.lines}
    assert {(11, 21), (11, 22), (12, 21), (12, 22)} <= set(per_line)
    assert sum(per_line[k].instructions for k in per_line if k[0] in (11, 12)) == len(helper)
    assert per_line[(23, None)].instructions > 0  # the kernel's own store line names no call
    out = CliRunner().invoke(main, ["trace", str(CACHE), "--no-tables"])
    assert out.exit_code == 0, out.output
    assert "kernels.py:11 (from 21)" in out.output and "kernels.py:12 (from 22)" in out.output


def test_the_users_python_is_told_from_tritons_and_inductors() -> None:
    assert triton_source_file("/home/me/attn.py")
    assert not triton_source_file("/venv/lib/python3.11/site-packages/triton/language/standard.py")
    assert not triton_source_file("/venv/site-packages/torch/_inductor/runtime/triton_helpers.py")
    assert not triton_source_file("/home/me/k.cu")
