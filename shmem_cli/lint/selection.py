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
    return RULES.codes_of(key)


def chosen(select: Iterable[str] = (), ignore: Iterable[str] = ()) -> frozenset[str]:
    """The codes of the rules that run."""
    return RULES.chosen(select, ignore) | {ALWAYS}
