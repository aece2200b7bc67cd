"""A registry of check rules: what ``shmem rules`` lists, ``--select``/``--ignore`` pick
from and SARIF describes.

A rule is anything with a code (stable, e.g. ``SH001``), a name (stable, e.g.
``bank-conflict``), a severity, a summary and details (:class:`~.report.RuleInfo`);
the registry keeps them by code, refuses a second rule with a code or a name already
taken, and answers a key (a code in any case, a code prefix, or a name) with the
codes it names. ``shmem lint``'s rules are one registry
(:data:`shmem_cli.lint.rules.RULES`); a rule joins it with :meth:`RuleRegistry.register`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from .report import RuleInfo

R = TypeVar("R", bound=RuleInfo)


class RuleRegistry(Generic[R]):
    """The rules of one command, in code order."""

    def __init__(self, tool: str) -> None:
        self.tool = tool  # "shmem lint"
        self._rules: dict[str, R] = {}

    def register(self, rule: R) -> R:
        """Add ``rule``; ValueError when its code or name is taken."""
        for other in self._rules.values():
            if other.code.upper() == rule.code.upper() or other.name == rule.name:
                raise ValueError(
                    f"{self.tool}: rule {rule.code} {rule.name} clashes with "
                    f"{other.code} {other.name} (codes and names are unique)"
                )
        self._rules[rule.code.upper()] = rule
        return rule

    def unregister(self, code: str) -> None:
        """Remove the rule with ``code`` (a rule added for a while, e.g. by a test)."""
        self._rules.pop(code.upper(), None)

    @property
    def rules(self) -> tuple[R, ...]:
        return tuple(self._rules[code] for code in sorted(self._rules))

    def __iter__(self) -> Iterator[R]:
        return iter(self.rules)

    def __len__(self) -> int:
        return len(self._rules)

    def lookup(self, key: str) -> R | None:
        """A rule by code (any case) or name."""
        text = key.strip()
        found = self._rules.get(text.upper())
        if found is not None:
            return found
        return next((r for r in self._rules.values() if r.name == text.lower()), None)

    def get(self, code: str) -> R:
        rule = self.lookup(code)
        if rule is None:
            raise KeyError(code)
        return rule

    def codes_of(self, key: str) -> frozenset[str]:
        """The codes a key names (a code, a code prefix: ``SH00``, or a name); ValueError
        with the known keys when it names none."""
        text = key.strip()
        rules = self.rules
        by_name = {r.code for r in rules if r.name == text.lower()}
        by_code = {r.code for r in rules if r.code.startswith(text.upper())} if text else set()
        found = by_name | by_code
        if not found:
            known = ", ".join(f"{r.code} ({r.name})" for r in rules)
            raise ValueError(f"unknown rule {key!r}; known: {known}")
        return frozenset(found)

    def chosen(self, select: Iterable[str] = (), ignore: Iterable[str] = ()) -> frozenset[str]:
        """The codes of the rules that run: ``select`` (empty: every rule) less ``ignore``."""
        selected = [self.codes_of(k) for k in select]
        codes = frozenset().union(*selected) if selected else frozenset(r.code for r in self.rules)
        for key in ignore:
            codes -= self.codes_of(key)
        return codes
