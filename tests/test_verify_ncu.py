"""The Nsight Compute CSV reader, on real ncu output recorded on the H200.

tests/data/h200_probe2_ncu.csv is the raw ``ncu --csv --print-units base``
output of the probe2 lab run (140 kernels plus the base-address probe, program
output and ``==PROF==`` lines included). The lab's own parser recorded the same
counters in tests/data/h200_probe2_results.json; ours must read the same.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shmem_cli.errors import ShmemError
from shmem_cli.verify import ncu

DATA = Path(__file__).parent / "data"
LAUNCHES = ncu.parse_csv((DATA / "h200_probe2_ncu.csv").read_text())
LAB = {
    r["name"]: r["counters"] for r in json.loads((DATA / "h200_probe2_results.json").read_text())
}


def test_every_launch_is_read_in_order() -> None:
    assert len(LAUNCHES) == 141
    assert LAUNCHES[0].kernel == "smem_base_probe"
    assert LAUNCHES[1].kernel == "r2_000_double2_ld"
    assert {launch.compute_capability for launch in LAUNCHES} == {"9.0"}


def test_counters_agree_with_the_lab_record() -> None:
    grouped = ncu.by_kernel(LAUNCHES)
    assert set(LAB) <= set(grouped)
    for name, counters in LAB.items():
        (launch,) = grouped[name]
        assert dict(launch.metrics) == counters, name


def test_the_counters_collected_are_those_the_csv_holds() -> None:
    assert set(ncu.METRICS) <= set(LAUNCHES[1].metrics)
    assert "l1tex__data_bank_conflicts_type_arbitration.sum" in ncu.METRICS


def test_requests_and_wavefronts_per_op() -> None:
    first = ncu.by_kernel(LAUNCHES)["r2_000_double2_ld"][0]
    # a double2 load: 1 LDS.128 with 16 wavefronts; the lab's result store (STS.64) is op st
    assert ncu.measured(first, "load") == ncu.Measured(
        requests=1, wavefronts=16, wavefronts_raw=16, arbitration=0
    )
    assert ncu.measured(first, "store") == ncu.Measured(1, 2, 2, 0)


def test_arbitration_is_subtracted_from_the_raw_wavefronts() -> None:
    launch = ncu.Launch(
        "k",
        {
            "smsp__sass_inst_executed_op_ldsm.sum": 32.0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 131.0,
            "l1tex__data_bank_conflicts_type_arbitration.sum": 3.0,
        },
    )
    assert ncu.measured(launch, "ldmatrix") == ncu.Measured(32, 128, 131, 3)
    with pytest.raises(ShmemError, match="lacks smsp__sass_inst_executed_op_shared_stsm.sum"):
        ncu.measured(launch, "stmatrix")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0.0),
        ("12", 12.0),
        ("1,024", 1024.0),
        ("1,234,567", 1234567.0),
        ("3.50", 3.5),
        ("n/a", None),
        ("", None),
    ],
)
def test_metric_values(text: str, value: float | None) -> None:
    assert ncu.parse_value(text) == value


def test_output_without_csv_rows_is_an_error() -> None:
    with pytest.raises(ShmemError, match="no CSV rows"):
        ncu.parse_csv("==PROF== Connected to process 1\n==ERROR== ERR_NVGPUCTRPERM\n", "x.csv")


def test_a_csv_without_metric_columns_is_an_error() -> None:
    with pytest.raises(ShmemError, match="lacks Metric Name, Metric Value"):
        ncu.parse_csv('"ID","Kernel Name","gpu__time_duration.sum"\n"0","k","5"\n', "x.csv")
