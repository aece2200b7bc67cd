"""The rule registry: every lint rule, in code order.

Each rule is a module in this package with ``CODE`` (stable, e.g. ``SH001``),
``NAME`` (stable, e.g. ``bank-conflict``), ``SEVERITY``, ``SCOPE`` (``"access"``
or ``"file"``), a ``check`` function and a docstring that is its documentation
(shown by ``shmem rules`` and in docs/lint.md). To add a rule, write the module
and list it in ``_MODULES``; :func:`register` adds one from elsewhere (a plug-in, a
test). :data:`RULES` is the registry that the lint run, ``shmem rules``,
``--select``/``--ignore`` and SARIF read.
"""

from __future__ import annotations

from types import ModuleType

from ...checks.registry import RuleRegistry
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
from ._base import AccessCheck, FileCheck, Hit, Rule, rule_from_module

__all__ = ["RULES", "AccessCheck", "FileCheck", "Hit", "Rule", "register"]

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

#: every lint rule, by code
RULES: RuleRegistry[Rule] = RuleRegistry("shmem lint")


def register(module: ModuleType) -> Rule:
    """Add the rule a module defines (``CODE``, ``NAME``, ``SEVERITY``, ``SCOPE``, ``check``
    and a docstring) to :data:`RULES`; ValueError when its code or name is taken."""
    return RULES.register(rule_from_module(module))


for _module in _MODULES:
    register(_module)
