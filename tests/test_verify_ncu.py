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

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.verify import ncu

from .conftest import TEST_DATA as DATA

LAUNCHES = ncu.parse_csv((DATA / "h200_probe2_ncu.csv").read_text())
LAB = {
    r["name"]: r["counters"] for r in json.loads((DATA / "h200_probe2_results.json").read_text())
}


def test_every_launch_is_read_in_order() -> None:
    assert len(LAUNCHES) == 141
    assert LAUNCHES[0].kernel == "smem_base_probe"
    assert LAUNCHES[1].kernel == "r2_000_double2_ld"
    assert {launch.compute_capability for launch in LAUNCHES} == {"9.0"}


def test_a_byte_order_mark_hides_no_header(tmp_path: Path) -> None:
    """The CSV lines of that output saved again with a BOM: the header line began with
    '\ufeff', not a quote, and was dropped with ncu's own lines."""
    path = tmp_path / "ncu.csv"
    lines = (DATA / "h200_probe2_ncu.csv").read_text().splitlines(keepends=True)
    csv_only = "".join(line for line in lines if line.startswith('"'))  # the header first
    path.write_bytes(b"\xef\xbb\xbf" + csv_only.encode())
    launches = ncu.read_csv(path)
    assert len(launches) == 141 and launches[1].kernel == "r2_000_double2_ld"


def test_counters_agree_with_the_lab_record() -> None:
    grouped = ncu.by_kernel(LAUNCHES)
    assert set(LAB) <= set(grouped)
    for name, counters in LAB.items():
        (launch,) = grouped[name]
        assert dict(launch.metrics) == counters, name


def test_the_counters_collected_are_those_the_csv_holds() -> None:
    # the counters without sass_ (predicated-off warps included) were added after this run
    newer = {f"smsp__inst_executed_op_shared_{u}.sum" for u in ("ld", "st", "atom")}
    assert set(ncu.metrics()) - newer <= set(LAUNCHES[1].metrics)
    assert "l1tex__data_bank_conflicts_type_arbitration.sum" in ncu.metrics()


def test_requests_and_wavefronts_per_op() -> None:
    first = ncu.by_kernel(LAUNCHES)["r2_000_double2_ld"][0]
    # a double2 load: 1 LDS.128 with 16 wavefronts; the lab's result store (STS.64) is op st
    load, store = ncu.measured(first, "load"), ncu.measured(first, "store")
    assert (load.requests, load.wavefronts, load.wavefronts_raw, load.arbitration) == (1, 16, 16, 0)
    assert (load.bank_conflicts, load.other_wavefronts) == (12, 2)  # 16 - ideal 4; the STS.64
    assert (store.requests, store.wavefronts, store.wavefronts_raw, store.arbitration) == (
        1,
        2,
        2,
        0,
    )


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


def _rows(launches: int, metrics: int = 1) -> str:
    head = '"ID","Kernel Name","Metric Name","Metric Value"\n'
    return head + "".join(
        f'"{i}","k{i}","m{j}","1"\n' for i in range(launches) for j in range(metrics)
    )


def test_launches_past_the_bound_are_an_error_at_their_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each launch keeps a table of its metrics: 1.5 million one-row launches (25 MB, under
    the 64 MiB a file may hold) took 1 GiB."""
    assert ncu.MAX_LAUNCHES == 100_000
    monkeypatch.setattr(ncu, "MAX_LAUNCHES", 5)
    text = "==PROF== Connected\n" + _rows(5, 2)  # the CSV's header is line 2
    assert [launch.kernel for launch in ncu.parse_csv(text, "x.csv")][-1] == "k4"
    with pytest.raises(ShmemError) as err:
        ncu.parse_csv("==PROF== Connected\n" + _rows(6, 2), "x.csv")
    assert err.value.message.startswith("more than 5 launches: shmem verify's own profile")
    assert (err.value.path, err.value.line) == ("x.csv", 2 + 5 * 2 + 1)  # the sixth's row


def test_rows_past_the_bound_are_an_error_at_their_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ncu.MAX_ROWS == 1_000_000
    monkeypatch.setattr(ncu, "MAX_ROWS", 10)
    text = _rows(3, 3)  # the header and 9 rows: 10 CSV lines
    assert len(ncu.parse_csv(text + "\n" * 1000, "x.csv")) == 3
    with pytest.raises(ShmemError) as err:
        ncu.parse_csv(text + "\n" * 1000 + '"3","k3","m0","1"\n', "x.csv")
    assert "more than 10 CSV rows" in err.value.message and err.value.line == 1011


# --- the counter cases of issue 14, with counters measured on the H200 -------------------
# tests/data/trace/measured.json (the project's own kernels, one launch each)


def _trace_launch(launch_id: str) -> ncu.Launch:
    """A measured trace launch as the ncu counters verify reads."""
    doc = json.loads((DATA / "trace" / "measured.json").read_text())
    (m,) = [x for x in doc["launches"] if x["id"] == launch_id]
    metrics: dict[str, float] = {
        "l1tex__data_bank_conflicts_type_arbitration.sum": m["arbitration"]
    }
    for unit in ("ld", "st", "atom"):
        c = m["per_op"][unit]
        metrics[f"smsp__sass_inst_executed_op_shared_{unit}.sum"] = c["requests"]
        metrics[f"smsp__inst_executed_op_shared_{unit}.sum"] = c["requests_with_predicated_off"]
        metrics[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{unit}.sum"] = c["wavefronts"]
        metrics[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{unit}.sum"] = c[
            "bank_conflicts"
        ]
    metrics["smsp__sass_inst_executed_op_ldsm.sum"] = m["per_op"]["ldsm"]["requests"]
    metrics["smsp__sass_inst_executed_op_shared_stsm.sum"] = m["per_op"]["stsm"]["requests"]
    return ncu.Launch(launch_id, metrics)


def test_requests_come_from_the_sass_counter_not_the_predicated_off_warps() -> None:
    # cp.async copy: 2 LDS executed with active lanes; the @!PT LDS fillers after the
    # LDGSTS make the counter without sass_ read 8
    got = ncu.measured(_trace_launch("cp_async_copy_4_1"), "load")
    assert (got.requests, got.requests_with_predicated_off) == (2, 8)
    # tree reduction: the loop's loads are predicated (@!P LDS), 49 warp instructions ran
    # and 15 had an active lane; 56 wavefronts of which 41 bank conflicts
    got = ncu.measured(_trace_launch("tree_reduce"), "load")
    assert (got.requests, got.requests_with_predicated_off) == (15, 49)
    assert (got.wavefronts_raw, got.bank_conflicts) == (56, 41)
    assert got.basis(56) == ncu.RAW


def test_arbitration_from_the_kernel_s_other_traffic_is_not_subtracted() -> None:
    # stmatrix_store_16: arbitration 2, yet the 32 loads' raw counter is exactly 32 (the
    # structural count): the arbitration came from the stmatrix traffic
    got = ncu.measured(_trace_launch("stmatrix_store_16"), "load")
    assert (got.requests, got.wavefronts_raw, got.arbitration) == (32, 32, 2)
    assert got.basis(32) == ncu.RAW
    assert got.wavefronts == 30  # raw less arbitration: the old rule's mismatch with 32


def test_arbitration_in_the_op_s_own_count_of_a_single_access_kernel() -> None:
    # the verify run's column read of a 32x32 tile: raw 1030, arbitration 6, 1024 predicted
    launch = ncu.Launch(
        "k",
        {
            "smsp__sass_inst_executed_op_shared_ld.sum": 32.0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 1030.0,
            "l1tex__data_bank_conflicts_type_arbitration.sum": 6.0,
        },
    )
    got = ncu.measured(launch, "load")
    assert got.basis(1024) == ncu.LESS_ARBITRATION
    assert got.basis(1027) is None  # part of it only with other traffic to blame
    busy = ncu.Launch(
        "k",
        {**launch.metrics, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": 32.0},
    )
    assert ncu.measured(busy, "load").basis(1027) == ncu.PART_ARBITRATION
