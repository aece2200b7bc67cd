"""The engine against every shared-memory case measured on the H200."""

from __future__ import annotations

from typing import Any

import pytest

from shmem_cli import analyze
from shmem_cli.errors import ShmemError

from .hwtruth import case_to_spec, is_cas_loop, probe_cases, public_cases

PUBLIC = public_cases()
PROBES = probe_cases()


def test_corpus_is_complete() -> None:
    assert len(PUBLIC) == 167


def _check(case: dict[str, Any]) -> None:
    result = analyze(case_to_spec(case))
    (acc,) = result.accesses
    measured = case["measured"]
    assert (acc.requests, acc.wavefronts) == (measured["requests"], measured["wavefronts"]), case[
        "name"
    ]


@pytest.mark.parametrize("case", PUBLIC, ids=[c["name"] for c in PUBLIC])
def test_public_case(case: dict[str, Any]) -> None:
    _check(case)


@pytest.mark.parametrize("case", [c for c in PROBES if not is_cas_loop(c)], ids=lambda c: c["name"])
def test_probe_case(case: dict[str, Any]) -> None:
    _check(case)


@pytest.mark.parametrize("case", [c for c in PROBES if is_cas_loop(c)], ids=lambda c: c["name"])
def test_cas_loop_atomics_are_refused(case: dict[str, Any]) -> None:
    with pytest.raises(ShmemError, match="compare-and-swap"):
        analyze(case_to_spec(case))
