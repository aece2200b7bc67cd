"""A lab's predict script traces its launches on the command line with the arguments the Hopper
lab's harness gives the GPU (tests/hopper_lab.py's trace_args, shared, not copied): the
command traces what :func:`tests.hopper_lab.run` traces in-process."""

from __future__ import annotations

import json

from click.testing import CliRunner

from shmem_cli.cli import main

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

CLUSTERHIST = TRACE_DATA / "clusterhist"


def test_the_command_names_every_field_of_the_launch() -> None:
    args = lab.trace_args("hist_same", CLUSTERHIST)
    assert args[:5] == [str(CLUSTERHIST / "cluster_hist.sm_90.cubin"), "-k",
                        "_Z12cluster_histPKiPii", "--block", "256,1,1"]  # fmt: skip
    assert args[5:11] == ["--grid", "16,1,1", "--dynamic-smem", "0", "--cluster", "4,1,1"]
    given = args[11:]
    assert given[::2] == ["--arg"] * 3
    assert given[1] == f"0=@{CLUSTERHIST / 'inputs' / 'keys_same.bin'}"
    assert given[3].startswith("1=@") and given[3].endswith("zeros-1024.bin")  # 1,024 B, as given
    assert given[5] == "2=0x1000"  # the int recorded, given as its bits (4,096)


@needs_nvdisasm
def test_the_command_traces_what_the_lab_runs_in_process() -> None:
    kt, _ = lab.run("hist_same", CLUSTERHIST)
    res = CliRunner().invoke(
        main, ["trace", *lab.trace_args("hist_same", CLUSTERHIST), "-f", "json"]
    )
    assert res.exit_code == 0, res.output[-2000:]
    (kernel,) = json.loads(res.output)["files"][0]["kernels"]
    assert kernel["totals"] == kt.to_json()["totals"]
    assert kernel["not_modelled"] == kt.to_json()["not_modelled"]
