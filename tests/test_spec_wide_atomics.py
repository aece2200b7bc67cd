"""A spec's ``exch`` and ``cas`` atomics on 4-, 8- and 16-byte elements cost (and ideal) what
the H200 measured for ATOMS.EXCH/CAS and their .64 and .128 forms on the same lanes and words
(tests/data/trace/semantics: kernels/sem_atomics.cu runs its atomic in 12 places, one SASS
instruction each, in one warp and in four); the other atomics are refused on those elements
at the array's line, with the widths each atomic takes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shmem_cli import analyze
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.compile import spec_from_mapping

from .conftest import TRACE_DATA

DATA = TRACE_DATA / "semantics"
MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}

# sem_atomics.cu's PLACES, in order: lane l takes part where bit l of the mask is set, on word
# (l & am) * stride, or on word u (7, a kernel parameter) where the place is uniform
PLACES = [  # (am, stride, lane mask, uniform)
    (0, 1, 0xFFFFFFFF, False),
    (0, 1, 0xFFFFFFFF, True),
    (0, 1, 0x0000FFFF, False),
    (0, 1, 0x80000421, False),
    (1, 1, 0xFFFFFFFF, False),
    (1, 32, 0xFFFFFFFF, False),
    (7, 1, 0xFFFFFFFF, False),
    (7, 1, 0x000000FF, False),
    (31, 1, 0xFFFFFFFF, False),
    (31, 2, 0xFFFFFFFF, False),
    (31, 32, 0xFFFFFFFF, False),
    (1, 1, 0x55555555, False),
]
# the measured kernels' elements: 32-bit unsigned, 64-bit unsigned, a 16-byte struct
ELEMENT = {"": "uint32", "64": "uint64", "128": "int4"}


def _spec(kernel: str, threads: int) -> dict[str, Any]:
    atomic = "cas" if kernel.startswith("sa_cas") else "exch"
    dtype = ELEMENT[kernel.removeprefix("sa_cas").removeprefix("sa_exch")]
    accesses = []
    for k, (am, stride, mask, uniform) in enumerate(PLACES):
        word = "7" if uniform else f"(lane & {am}) * {stride}"
        accesses.append(
            {
                "name": f"place {k}",
                "array": "s",
                "op": "atomic",
                "atomic": atomic,
                "index": [word],
                "when": f"((0x{mask:08x}u >> lane) & 1u) == 1u",
            }
        )
    return {
        "block": [threads],
        "arrays": {"s": {"dtype": dtype, "shape": [2048]}},
        "accesses": accesses,
    }


WIDE = [k for k in LAUNCHES if k.startswith(("sa_exch", "sa_cas")) and not k.endswith("_r2")]


def test_every_width_of_exch_and_cas_was_measured() -> None:
    assert sorted(WIDE) == sorted(
        f"sa_{op}{w}_t{t}"
        for op in ("exch", "cas")
        for w in ("", "64", "128")
        for t in (32, 128)
        if (op, w, t) != ("exch", "128", 128)  # the lab ran 128-bit exch in one warp only
    )


@pytest.mark.parametrize("launch_id", WIDE)
def test_a_spec_costs_each_place_as_the_h200_measured_it(launch_id: str) -> None:
    launch = LAUNCHES[launch_id]
    result = analyze(_spec(launch["kernel"], launch["block"][0]))
    assert result.error is None
    for run in (launch_id, f"{launch_id}_r2"):
        atoms = [i for i in MEASURED[run]["instructions"] if i["sass"].startswith("ATOMS")]
        assert len(atoms) == len(PLACES) == len(result.accesses)
        got = [(a.requests, a.wavefronts, a.ideal_wavefronts) for a in result.accesses]
        assert got == [(i["executed"], i["wavefronts"], i["ideal"]) for i in atoms], run


@pytest.mark.parametrize(
    ("dtype", "atomic", "said"),
    [
        ("int4", "add", "atomic: add on int4 (16 bytes) is not modelled"),
        ("int4", "inc", "atomic: inc on int4 (16 bytes) is not modelled"),
        ("uint64", "add", "atomics on uint64 compile to a compare-and-swap loop"),
        ("float", "exch", "atomic: exch on float32 (4 bytes) is not modelled"),
        ("uint16", "cas", "atomic: cas on uint16 (2 bytes) is not modelled"),
    ],
)
def test_other_atomics_on_wide_elements_are_refused_with_the_widths_each_takes(
    dtype: str, atomic: str, said: str
) -> None:
    mapping = {
        "block": [32],
        "arrays": {"a": {"dtype": dtype, "shape": [64]}},
        "accesses": [{"array": "a", "op": "atomic", "atomic": atomic, "index": ["lane"]}],
    }
    with pytest.raises(ShmemError) as err:
        spec_from_mapping(mapping, "t.yaml")
    assert said in err.value.message
    assert err.value.message.endswith(
        "; inc and add take 4-byte integers; exch and cas take 4- and 8-byte integers and "
        "16-byte elements"
    )


def test_lanes_split_over_half_warps_are_an_excess_not_a_bank_conflict() -> None:
    # lanes 0 and 16 exchange one 64-bit word: a wavefront for each half-warp, Nsight's ideal
    # 1 (both lanes' 16 bytes in one packed wavefront; atomloops x64_pair_one) and its bank
    # conflict counter 0 (docs/hardware-model.md section 8)
    spec = {
        "block": [32],
        "arrays": {"s": {"dtype": "uint64", "shape": [64]}},
        "accesses": [
            {"name": "pair", "array": "s", "op": "atomic", "atomic": "exch", "index": ["0"],
             "when": "lane % 16 == 0"},
        ],
    }  # fmt: skip
    (access,) = analyze(spec).accesses
    c = access.cost
    assert (c.wavefronts, c.ideal_wavefronts, c.excess_wavefronts) == (2, 1, 1)
    assert c.conflict_free and c.conflicted_requests == 0
