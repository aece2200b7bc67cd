"""What rules see and return, and the wording they share.

An access rule gets an :class:`AccessCheck` (the analysis numbers of one access,
the expectation that applies to it and its iteration space); a file rule gets a
:class:`FileCheck`.
Both yield :class:`Hit` records; the core turns hits
into findings with the rule's code, name, severity and the access's place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from ...checks.report import Fact, Severity
from ...hardware import ops
from ...model import AccessResult, RequestDetail
from ...plumbing.errors import ShmemError
from ...plumbing.frozen import frozen
from ...spec.compile import Expect

if TYPE_CHECKING:
    from ...spec.compile import SpecFile
    from ...spec.space import Space
    from ..compiled_compare import Comparison, Verdict
    from ..kernel_trace import KernelUnavailable


@frozen
class AccessCheck:
    """One analyzed access and what is expected of it."""

    result: AccessResult
    expect: Expect | None  # effective: the access's own over the spec's over the config's
    own: Expect | None  # the access's own ``expect:`` block, if it has one
    space: Space | None = None  # the access's iteration space (spec, layout, declaration)
    #: the access against the compiled kernel at its line (the spec has kernel: and line:)
    compiled: Verdict | None = None
    #: the spec's kernel was traced (then the compiled code decides what is hoisted)
    kernel_traced: bool = False

    @property
    def conflicts_accepted(self) -> bool:
        """Whether the expectation allows bank conflicts at all.

        ``conflict_free: false`` allows them; so does a ``max_ways`` or
        ``max_wavefronts_per_request`` bound unless ``conflict_free: true`` is
        also stated. Without an expectation, conflicts are not allowed.
        """
        e = self.expect
        if e is None or e.conflict_free is True:
            return False
        if e.conflict_free is False:
            return True
        return e.max_ways is not None or e.max_wavefronts_per_request is not None


@frozen
class FileCheck:
    """One spec file: its path, and the error that stopped it from loading, if any."""

    path: str
    error: ShmemError | None
    spec: SpecFile | None = None
    #: the spec against its traced kernel, or why the kernel could not be traced
    compiled: Comparison | KernelUnavailable | None = None


@frozen
class Hit:
    """What a rule's check function reports: a message, its numbers, optionally a place."""

    message: str
    facts: tuple[Fact, ...] = ()
    line: int | None = None
    column: int | None = None
    access: str | None = None  # a file rule's hit about one access (for baselines)


AccessFn = Callable[[AccessCheck], Iterable[Hit]]
FileFn = Callable[[FileCheck], Iterable[Hit]]


@frozen
class Rule:
    """A registered rule; built from its module (see :func:`rule_from_module`)."""

    code: str
    name: str
    severity: Severity
    doc: str
    check_access: AccessFn | None = None
    check_file: FileFn | None = None

    @property
    def summary(self) -> str:
        """The first line of the docstring."""
        return self.doc.strip().splitlines()[0].strip() if self.doc.strip() else self.name

    @property
    def details(self) -> str:
        """The docstring after its first paragraph, dedented."""
        import textwrap

        text = textwrap.dedent("\n".join(self.doc.strip().splitlines()[1:])).strip()
        return text


def rule_from_module(module: ModuleType) -> Rule:
    """Read CODE, NAME, SEVERITY, SCOPE, ``check`` and the docstring of a rule module."""
    code, name, severity = module.CODE, module.NAME, module.SEVERITY
    scope, check, doc = module.SCOPE, module.check, module.__doc__
    if not (isinstance(code, str) and isinstance(name, str) and isinstance(severity, Severity)):
        raise TypeError(f"{module.__name__}: CODE, NAME and SEVERITY are malformed")
    if scope not in ("access", "file") or not callable(check) or not doc:
        raise TypeError(
            f"{module.__name__}: needs SCOPE 'access' or 'file', check() and a docstring"
        )
    if scope == "access":
        return Rule(code, name, severity, doc, check_access=check)
    return Rule(code, name, severity, doc, check_file=check)


# --- wording ----------------------------------------------------------------------------


def lane_list(lanes: Sequence[int], limit: int = 6) -> str:
    """``0,1,...,31`` for an evenly spaced run, else up to ``limit`` lanes and a count."""
    ls = sorted(set(lanes))
    if len(ls) <= limit:
        return ",".join(map(str, ls))
    step = ls[1] - ls[0]
    if all(b - a == step for a, b in zip(ls, ls[1:], strict=False)):
        return f"{ls[0]},{ls[1]},...,{ls[-1]}"
    return ",".join(map(str, ls[:limit])) + f",... ({len(ls)} lanes)"


@frozen
class BankPileUp:
    """The busiest bank of a request: its phase, the lanes that use it, its words."""

    phase: int
    bank: int
    lanes: tuple[int, ...]
    words: int  # distinct 4-byte words
    accesses: int  # wavefronts the bank is busy (== words unless atomics do not combine)


def busiest_bank(detail: RequestDetail | None) -> BankPileUp | None:
    """The bank that needs the most wavefronts in its phase (first one on ties)."""
    if detail is None:
        return None
    cells: dict[tuple[int, int], list[tuple[int, tuple[int, ...]]]] = {}
    for wave in detail.wavefronts:
        for cell in wave.cells:
            cells.setdefault((wave.phase, cell.bank), []).append((cell.word, cell.lanes))
    if not cells:
        return None
    (phase, bank), used = max(sorted(cells.items()), key=lambda kv: len(kv[1]))
    lanes = tuple(sorted({lane for _, ls in used for lane in ls}))
    return BankPileUp(phase, bank, lanes, len({w for w, _ in used}), len(used))


def describe_pile_up(result: AccessResult) -> str:
    """``lanes 0,1,...,31 hit bank 0 (32 different words)`` for the worst request."""
    pile = busiest_bank(result.cost.detail)
    if pile is None or pile.accesses < 2:
        return ""
    what = (
        f"{pile.words} different words"
        if pile.words == pile.accesses
        else f"{pile.accesses} accesses to {pile.words} word{'s' if pile.words != 1 else ''}"
    )
    where = ""
    if result.cost.detail is not None and result.cost.detail.phases > 1:
        unit = ops.get(result.cost.op).phase_word
        where = f" in {unit} {pile.phase}"
    return f"lanes {lane_list(pile.lanes)} hit bank {pile.bank}{where} ({what})"


def describe_worst(result: AccessResult) -> str:
    """The worst request: where, its wavefronts against the ideal, and its busiest bank."""
    ref = result.cost.shown
    if ref is None:
        return ""
    text = f"worst request ({ref.describe()}): {ref.wavefronts} wavefronts, ideal {ref.ideal}"
    pile = describe_pile_up(result)
    return f"{text}; {pile}" if pile else text


def access_facts(result: AccessResult) -> tuple[Fact, ...]:
    """The numbers every access finding carries (JSON ``facts``)."""
    facts: list[Fact] = [
        ("max_ways", result.cost.max_ways),
        ("wavefronts", result.cost.wavefronts),
        ("ideal_wavefronts", result.cost.ideal_wavefronts),
        ("requests", result.cost.requests),
        ("conflicted_requests", result.cost.conflicted_requests),
    ]
    ref = result.cost.shown
    if ref is not None:
        facts += [
            ("worst_warp", ref.warp),
            ("worst_iteration", ref.iteration),
            ("worst_wavefronts", ref.wavefronts),
            ("worst_ideal_wavefronts", ref.ideal),
        ]
    pile = busiest_bank(result.cost.detail)
    if pile is not None and pile.accesses > 1:
        facts += [("worst_bank", pile.bank), ("worst_lanes", ",".join(map(str, pile.lanes)))]
    return tuple(facts)


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
