"""A kernel that checks its launch as llm.c's do, ``printf`` the reason then ``__trap()``
(tests/data/trace/traps/kernels/traps.cu): a launch that fails the check stops at the trap's
line with what the kernel printed; one that passes traces; a trap with no ``printf`` before
it says only that it trapped."""

from __future__ import annotations

import json

from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "traps" / "traps.sm_90.cubin"
LAUNCH = ["trace", str(CUBIN), "--block", "128", "--grid", "2", "--no-tables"]


@needs_nvdisasm
def test_a_trap_after_a_printf_quotes_what_the_kernel_printed() -> None:
    res = CliRunner().invoke(main, [*LAUNCH, "-k", "checked_rows", "--arg", "n=100"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "traps.cu:8:1: error: the kernel reached a breakpoint or trap" in said
    assert "after it printed 'n must be a multiple of 128': the kernel's own check failed" in said
    assert "Traceback" not in res.output
    # the launch the check allows: one STS and one LDS a warp, 4 warps, 2 blocks
    ok = CliRunner().invoke(
        main, [*LAUNCH, "-k", "checked_rows", "--arg", "n=128", "--format", "json"]
    )
    assert ok.exit_code == 0, ok.output
    (kernel,) = json.loads(ok.output)["files"][0]["kernels"]
    assert kernel["totals"]["store"]["requests"] == 8 == kernel["totals"]["load"]["requests"]


@needs_nvdisasm
def test_a_trap_without_a_printf_says_only_that_it_trapped() -> None:
    res = CliRunner().invoke(main, [*LAUNCH, "-k", "silent_trap", "--arg", "n=100"])
    assert res.exit_code == 2, res.output
    said = " ".join(res.output.split())
    assert "traps.cu:17:1: error: the kernel reached a breakpoint or trap" in said
    assert "printed" not in said
