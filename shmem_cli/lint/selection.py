"""Which rules run: ``--select``/``--ignore`` (and the same keys of ``[tool.shmem]``).

A key is a rule code (``SH001``, any case), a code prefix (``SH00``: SH001 to
SH009) or a rule name (``bank-conflict``). ``select`` empty means every rule;
``ignore`` then removes rules. ``invalid-spec`` (SH100) always runs: a spec that
cannot be read is an error (exit status 2) whatever is selected.
"""

from __future__ import annotations

from collections.abc import Iterable

from .rules import RULES

#: the rule that cannot be turned off
ALWAYS = "SH100"


def codes_of(key: str) -> frozenset[str]:
    """The codes a key names; ValueError (with the known keys) when it names none."""
    text = key.strip()
    by_name = {r.code for r in RULES if r.name == text.lower()}
    by_code = {r.code for r in RULES if r.code.startswith(text.upper())} if text else set()
    found = by_name | by_code
    if not found:
        known = ", ".join(f"{r.code} ({r.name})" for r in RULES)
        raise ValueError(f"unknown rule {key!r}; known: {known}")
    return frozenset(found)


def chosen(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> frozenset[str]:
    """The codes of the rules that run."""
    selected = [codes_of(k) for k in select]
    codes = frozenset().union(*selected) if selected else frozenset(r.code for r in RULES)
    for key in ignore:
        codes -= codes_of(key)
    return codes | {ALWAYS}
