"""The rule registry: every lint rule, in code order.

Each rule is a module in this package with ``CODE`` (stable, e.g. ``SH001``),
``NAME`` (stable, e.g. ``bank-conflict``), ``SEVERITY``, ``SCOPE`` (``"access"``
or ``"file"``), a ``check`` function and a docstring that is its documentation
(shown by ``shmem rules`` and in docs/lint.md). To add a rule, write the module
and list it in ``_MODULES``.
"""

from __future__ import annotations

from . import (
    bank_conflict,
    compiled_coverage,
    compiled_mismatch,
    expectation_exceeded,
    idle_access,
    invalid_spec,
    likely_vectorized,
    loop_invariant_access,
    loose_expectation,
    stale_expectation,
)
from ._base import AccessCheck, FileCheck, Rule, rule_from_module

__all__ = ["RULES", "AccessCheck", "FileCheck", "Rule", "lookup"]

_MODULES = (
    bank_conflict,
    expectation_exceeded,
    stale_expectation,
    loose_expectation,
    idle_access,
    loop_invariant_access,
    compiled_mismatch,
    compiled_coverage,
    likely_vectorized,
    invalid_spec,
)

RULES: tuple[Rule, ...] = tuple(
    sorted((rule_from_module(m) for m in _MODULES), key=lambda r: r.code)
)

_BY_KEY = {key: rule for rule in RULES for key in (rule.code.upper(), rule.name)}
if len(_BY_KEY) != 2 * len(RULES):  # pragma: no cover - caught by the tests
    raise RuntimeError("two lint rules share a code or a name")


def lookup(key: str) -> Rule | None:
    """A rule by code (any case) or name."""
    return _BY_KEY.get(key) or _BY_KEY.get(key.upper())


def get(code: str) -> Rule:
    rule = lookup(code)
    if rule is None:
        raise KeyError(code)
    return rule
