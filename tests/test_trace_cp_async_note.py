"""Why a cp.async row has requests and no wavefronts is said under the tables: a 16-byte
``cp.async.cg`` whose lanes all copy costs the shared pipe nothing (the H200's rule,
shmem_cli/hardware/async_copy.py), which a reader of ``cp_async 320 0`` otherwise takes for
a fault. The kernel: tests/data/triton/cache's fp16 ``matmul_tiles`` (its K tail's copies
zero-fill some lanes and cost wavefronts; the others cost none)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TEST_DATA, TRACE_DATA, needs_nvdisasm

ENTRY = TEST_DATA / "triton" / "cache" / "BNA37UX6NG47NQSUZID23JEHSIPE3YFLJEPGHWSGJUGSKGQ6TXBA"
LAUNCH = ["--grid", "2,2", "--arg", "m=64", "--arg", "n=64", "--arg", "k=128"]


def _trace(*args: str) -> str:
    out = CliRunner().invoke(main, ["trace", *args])
    assert out.exit_code == 0, out.output
    return out.output


@needs_nvdisasm
def test_copies_without_wavefronts_are_explained_once() -> None:
    doc = json.loads(_trace(str(ENTRY), *LAUNCH, "--format", "json"))
    copies = [a for a in doc["files"][0]["kernels"][0]["accesses"] if a["op"] == "cp_async"]
    free = [a for a in copies if a["requests"] and not a["wavefronts"]]
    assert free and len(free) < len(copies)  # the zero-filling copies cost: not named
    text = _trace(str(ENTRY), *LAUNCH, "--no-tables")
    said = f"note: {len(free)} cp.async instruction(s) ({sum(a['requests'] for a in free):,} "
    assert text.count("cost no wavefronts") == 1 and said in text
    flat = " ".join(text.split())
    assert "only zero-filled lanes do" in flat
    # the K tail's copies cost: the note says their figure is their zero fills' alone
    assert all("LDGSTS.E.BYPASS.128" in a["sass"] for a in copies)
    other = f"The other {len(copies) - len(free)} cp.async.cg instruction(s) cost only in the "
    assert other in flat and "executions that zero-filled lanes" in flat


@needs_nvdisasm
def test_a_kernel_without_cp_async_has_no_such_note() -> None:
    text = _trace(str(TRACE_DATA / "column_read.sm_90.cubin"), "--block", "32,32", "--no-tables")
    assert "cp.async" not in text
