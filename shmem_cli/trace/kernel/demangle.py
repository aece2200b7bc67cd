"""Demangled kernel names: NVIDIA's cu++filt or c++filt when found, else a small demangler.

The small demangler covers what kernel names usually hold (Itanium C++ ABI):
namespaces, template arguments (types and integer literals), pointers,
references, const and volatile, builtin types, substitutions (``S_``, ``S0_``)
and template parameters (``T_``). Anything else leaves the name mangled, which
``--kernel`` still accepts.

A kernel's name comes from a cubin anyone can commit, so the small demangler is bounded: it
follows at most :data:`MAX_DEPTH` nested types (``P`` 5,000 times was a ``RecursionError``),
and every piece it builds counts against one :class:`Budget` of :data:`MAX_WORK` characters
for all the names of a file (a substitution can copy a name into itself, so 325 mangled
characters can spell 74 million demangled ones: a 728-byte cubin took minutes). A name past either
bound stays mangled.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable

from ...cuda import toolchain

BUILTIN = {
    "v": "void",
    "b": "bool",
    "c": "char",
    "a": "signed char",
    "h": "unsigned char",
    "s": "short",
    "t": "unsigned short",
    "i": "int",
    "j": "unsigned int",
    "l": "long",
    "m": "unsigned long",
    "x": "long long",
    "y": "unsigned long long",
    "n": "__int128",
    "o": "unsigned __int128",
    "f": "float",
    "d": "double",
    "e": "long double",
    "w": "wchar_t",
    "z": "...",
}
LITERAL_SUFFIX = {"j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}
#: types nested in one another that the small demangler follows (3 Python frames each at most)
MAX_DEPTH = 128
#: characters the small demangler may build, every piece counted, for the names of one file
MAX_WORK = 64 << 20


class _Fail(Exception):
    pass


class Budget:
    """Characters the small demangler may still build (shared by the names of one file)."""

    def __init__(self, left: int = MAX_WORK) -> None:
        self.left = left


class _Parser:
    def __init__(self, text: str, budget: Budget) -> None:
        self.s = text
        self.i = 0
        self.subs: list[str] = []
        self.template_args: list[str] = []
        self.depth = 0
        self.budget = budget

    def built(self, text: str) -> str:
        """``text``, counted against the budget (past it: the name stays mangled)."""
        self.budget.left -= len(text)
        if self.budget.left < 0:
            raise _Fail
        return text

    def peek(self, n: int = 1) -> str:
        return self.s[self.i : self.i + n]

    def take(self, token: str) -> bool:
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def number(self) -> int:
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if start == self.i:
            raise _Fail
        return int(self.s[start : self.i])

    def source_name(self) -> str:
        n = self.number()
        name = self.s[self.i : self.i + n]
        if len(name) != n:
            raise _Fail
        self.i += n
        return "(anonymous namespace)" if name.startswith("_GLOBAL__N") else name

    def substitution(self) -> str:
        if self.take("St"):
            return "std"
        if not self.take("S"):
            raise _Fail
        if self.take("_"):
            k = 0
        else:
            start = self.i
            while self.i < len(self.s) and self.s[self.i] != "_":
                self.i += 1
            k = int(self.s[start : self.i], 36) + 1
            self.i += 1
        if k >= len(self.subs):
            raise _Fail
        return self.subs[k]

    def template_param(self) -> str:
        self.i += 1  # T
        k = 0 if self.take("_") else self.number() + 1
        if not self.take("_") and k:
            raise _Fail
        if k >= len(self.template_args):
            raise _Fail
        return self.template_args[k]

    def template_arguments(self) -> list[str]:
        if not self.take("I"):
            raise _Fail
        args = []
        while not self.take("E"):
            if self.i >= len(self.s):
                raise _Fail
            if self.take("L"):
                kind = self.s[self.i]
                self.i += 1
                negative = self.take("n")
                value = self.number()
                if not self.take("E"):
                    raise _Fail
                if kind == "b":
                    args.append("true" if value else "false")
                else:
                    suffix = LITERAL_SUFFIX.get(kind, "")
                    args.append(self.built(("-" if negative else "") + str(value) + suffix))
            else:
                args.append(self.type())
        return args

    def name(self) -> tuple[str, bool]:
        """A (possibly nested, possibly templated) name and whether it ends in template args."""
        if self.take("N"):
            while self.peek() in ("K", "V", "r"):
                self.i += 1
            parts: list[str] = []
            templated = False
            while not self.take("E"):
                if self.i >= len(self.s):
                    raise _Fail
                if self.peek() == "I":
                    args = self.template_arguments()
                    if not parts:
                        raise _Fail
                    parts[-1] += self.built("<" + ", ".join(args) + ">")
                    self.template_args = args
                    templated = True
                elif self.peek() == "S":
                    parts.append(self.substitution())
                    templated = False
                    continue
                else:
                    parts.append(self.source_name())
                    templated = False
                self.subs.append(self.built("::".join(parts)))
            return "::".join(parts), templated
        if self.peek() == "S" and self.peek(2) != "St":
            base = self.substitution()
        else:
            std = self.take("St")
            base = ("std::" if std else "") + self.source_name()
        if self.peek() == "I":
            self.subs.append(base)
            args = self.template_arguments()
            self.template_args = args
            return self.built(base + "<" + ", ".join(args) + ">"), True
        return base, False

    def type(self) -> str:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _Fail
            return self.built(self._type())
        finally:
            self.depth -= 1

    def _type(self) -> str:
        c = self.peek()
        if c in BUILTIN:
            self.i += 1
            return BUILTIN[c]
        if c in ("P", "R", "O", "K", "V"):
            self.i += 1
            inner = self.type()
            out = {
                "P": inner + "*",
                "R": inner + "&",
                "O": inner + "&&",
                "K": inner + " const",
                "V": inner + " volatile",
            }[c]
            self.subs.append(out)
            return out
        if c == "T":
            out = self.template_param()
            self.subs.append(out)
            return out
        if c == "S" and self.peek(2) != "St":
            out = self.substitution()
            if self.peek() == "I":
                out += self.built("<" + ", ".join(self.template_arguments()) + ">")
                self.subs.append(out)
            return out
        if c.isdigit() or c == "N" or self.peek(2) == "St":
            saved = self.template_args
            out, _ = self.name()
            self.template_args = saved
            self.subs.append(out)
            return out
        raise _Fail


def demangle(mangled: str, budget: Budget | None = None) -> str:
    """``void colread<32>(float*, float const*, int)`` from ``_Z7colreadILi32EEvPfPKfi``;
    the name itself when it is not mangled (``extern "C"``), not understood, or past the
    bounds (:data:`MAX_DEPTH`, ``budget``: a fresh :class:`Budget` when not given)."""
    if not mangled.startswith("_Z"):
        return mangled
    p = _Parser(mangled, budget or Budget())
    p.i = 2
    try:
        name, templated = p.name()
        ret = p.type() + " " if templated else ""
        params: list[str] = []
        while p.i < len(p.s):
            params.append(p.type())
    except (_Fail, IndexError, ValueError):
        return mangled
    if params == ["void"]:
        params = []
    try:
        return p.built(f"{ret}{name}({', '.join(params)})")
    except _Fail:
        return mangled


def _run_filter(command: list[str], names: list[str]) -> dict[str, str]:
    """What a demangling filter prints for ``names``, one line each; empty where it fails."""
    try:
        res = toolchain.run(command, timeout=60, stdin="\n".join(names) + "\n")
    except (OSError, subprocess.TimeoutExpired):
        return {}
    lines = res.stdout.splitlines() if res.returncode == 0 else []
    return dict(zip(names, lines, strict=True)) if len(lines) == len(names) else {}


def demangle_all(names: Iterable[str]) -> dict[str, str]:
    """Demangled names by cu++filt or c++filt (one run), else by :func:`demangle` (one
    :class:`Budget` for them all)."""
    wanted = [n for n in names if n.startswith("_Z")]
    out = {n: n for n in names if not n.startswith("_Z")}
    tool = toolchain.which("cu++filt") or toolchain.which("c++filt")
    if wanted and tool:
        out.update(_run_filter([tool], wanted))
        # GNU c++filt gives a name back mangled past its recursion limit (CUTLASS 3.x
        # kernels nest templates hundreds deep): those again without the limit
        deep = [n for n in wanted if out.get(n, n) == n]
        if deep and "cu++filt" not in tool:
            out.update(_run_filter([tool, "--no-recurse-limit"], deep))
    budget = Budget()
    for n in wanted:
        if n not in out or out[n] == n:
            out[n] = demangle(n, budget)
    return out


def short_name(signature: str) -> str:
    """The kernel's name as written in C++: ``MatrixMulCUDA<32>`` from
    ``void MatrixMulCUDA<32>(float*, float*, float*, int, int)`` (no return type, no params)."""
    text = signature.strip()
    if not text.endswith(")"):
        return text
    # the parameter list is the last top-level parenthesized group
    depth = 0
    start = -1
    for k in range(len(text) - 1, -1, -1):
        ch = text[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                start = k
                break
    if start <= 0:
        return text
    head = text[:start]
    # the return type (templates only) is separated from the name by a blank outside <> and ()
    depth = 0
    cut = 0
    for k, ch in enumerate(head):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == " " and depth == 0:
            cut = k + 1
    return head[cut:]
