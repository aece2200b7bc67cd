"""The measured H200 cases for the tests; the reader is measured/h200.py (docs/tools uses it
too)."""

from measured.h200 import (
    DATA,
    PROBE_SETS,
    c_expr,
    case_to_spec,
    first_iteration,
    is_cas_loop,
    loop_invariant,
    probe_cases,
    public_cases,
)

__all__ = [
    "DATA",
    "PROBE_SETS",
    "c_expr",
    "case_to_spec",
    "first_iteration",
    "is_cas_loop",
    "loop_invariant",
    "probe_cases",
    "public_cases",
]
