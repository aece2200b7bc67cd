"""``[tool.shmem]`` in the nearest ``pyproject.toml``.

Keys (command-line flags override them)::

    [tool.shmem]
    paths = ["access_specs"]          # what `shmem lint` checks when given no paths
    exclude = ["access_specs/wip/*"]  # glob patterns, relative to this file's directory
    fail-on = "error"                 # error | warning | info
    baseline = "shmem-baseline.json"  # accepted findings (see --baseline)
    expect = {max_ways = 2}           # default expectation under every spec's own
    select = ["SH001", "SH002"]       # only these rules (codes, code prefixes or names)
    ignore = ["loose-expectation"]    # every rule but these
    source-roots = [".", "third_party/cutlass/include"]  # what a spec's kernel build may read
    include-roots = ["/opt/cutlass/include"]  # libraries' headers a build may read (not scanned)
    build-cache = ".shmem-build"      # keep .cu builds here for later traces (default: none)
    compile-time-limit = 600          # seconds of each nvcc compile of a kernel (default 600)

The nearest ``pyproject.toml`` is searched from the current directory upwards,
stopping at the repository root (the directory holding ``.git``); a file without
a ``[tool.shmem]`` table gives the defaults. Unknown keys and wrong types are
errors located at their line, with the nearest valid key suggested.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..checks.report import LABELS, Severity
from ..plumbing.errors import ShmemError, SourcePos, shorten
from ..plumbing.frozen import frozen
from ..spec.compile import Expect

KEYS = (
    "paths",
    "exclude",
    "fail-on",
    "baseline",
    "expect",
    "select",
    "ignore",
    "source-roots",
    "include-roots",
    "build-cache",
    "compile-time-limit",
)
EXPECT_KEYS = ("max_ways", "max_wavefronts_per_request", "conflict_free")


@frozen
class LintConfig:
    """The lint settings of one project; ``source`` is None when no file was read."""

    source: Path | None = None
    base: Path = Path(".")  # relative paths in the file are relative to this directory
    paths: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    fail_on: Severity | None = None
    baseline: str | None = None
    expect: Expect | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    #: folders (absolute) a spec's kernel build may read; empty: each spec's repository
    source_roots: tuple[str, ...] = ()
    #: folders (absolute) of libraries' headers any kernel build may read (CUTLASS, CuTe)
    include_roots: tuple[str, ...] = ()
    #: the folder (absolute) keeping .cu builds for later traces; None: no cache
    build_cache: str | None = None
    #: the wall time of each nvcc compile of a spec's kernel, in seconds; None: the default
    compile_seconds: float | None = None


def find_pyproject(start: Path) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start``, not above the repository root."""
    here = start.resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if os.path.isfile(candidate):
            return candidate
        if os.path.exists(folder / ".git"):
            return None
    return None


def find_repo_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that holds ``.git``."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if os.path.exists(folder / ".git"):
            return folder
    return None


#: The largest pyproject.toml (or --config file) read.
#: the largest pyproject.toml (or --config file) read: Python's TOML reader takes about
#: 10 s a MiB of its slowest shapes (a list of small integers, many tables), and a 16 MiB
#: file took minutes; a project's pyproject.toml is a few KiB
MAX_CONFIG_BYTES = 1 << 20
#: strings of one list key (paths, exclude, select, ignore, the roots), and the characters
#: of each: every spec file is matched against every exclude pattern, and the glob of a
#: long pattern is slow to build and to match (300,000 patterns ran past 200 s on 40
#: specs; one pattern of 400 KB took 48 s on one)
MAX_STRINGS = 1_000
MAX_STRING_CHARS = 4_096
#: ``*`` wildcards of one exclude glob: each is a step of the pattern Python builds for it
#: (1,000 globs of 480 took 16 s to build before the first spec was linted; of 16, 0.5 s)
MAX_GLOB_STARS = 16


def strings_problem(what: str, values: Sequence[str], *, globs: bool = False) -> str | None:
    """What is wrong with ``what``, a list of paths or ``globs`` (a key of [tool.shmem], or an
    option given many times: ``--exclude``, ``--source-root``), past :data:`MAX_STRINGS`
    strings of :data:`MAX_STRING_CHARS` characters, or globs of :data:`MAX_GLOB_STARS`
    wildcards; None within them."""
    if len(values) > MAX_STRINGS:
        return (
            f"{what} has {len(values):,} strings; the most is {MAX_STRINGS:,} "
            "(name folders, or globs that cover many files)"
        )
    longest = max(map(len, values), default=0)
    if longest > MAX_STRING_CHARS:
        return (
            f"{what}: a string of {longest:,} characters; the most is "
            f"{MAX_STRING_CHARS:,} (a path, or a glob of one)"
        )
    stars = max((v.count("*") for v in values), default=0) if globs else 0
    if stars > MAX_GLOB_STARS:
        return (
            f"{what}: a glob of {stars:,} '*' wildcards; the most is {MAX_GLOB_STARS} "
            "(a folder's name excludes all it holds)"
        )
    return None


def load_config(path: Path) -> LintConfig:
    """Read ``[tool.shmem]`` from a pyproject.toml; raises a located ShmemError if it is bad."""
    from ..plumbing.bounded_read import read_bounded

    raw = read_bounded(path, MAX_CONFIG_BYTES, what="config", code="config", text=True)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        head = raw[: exc.start].decode("utf-8", "replace")
        line, column = head.count("\n") + 1, len(head) - head.rfind("\n")
        raise ShmemError(
            f"cannot read config: byte 0x{raw[exc.start]:02x} is not UTF-8 "
            "(save the file as UTF-8)",
            path=str(path),
            pos=SourcePos(line, column),
            code="config",
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(str(exc), path) from None
    except (ValueError, RecursionError):  # a number of thousands of digits, deep nesting
        raise ShmemError(
            "the TOML holds a number too long or nesting too deep to read",
            path=str(path),
            code="config",
        ) from None
    reader = _Reader(path, text)
    tool = data.get("tool")
    if tool is not None and not isinstance(tool, dict):
        raise reader.error("[tool] must be a table", "tool", "")
    table = (tool or {}).get("shmem")
    if table is None:
        return LintConfig(source=path, base=path.parent)
    return reader.read(table)


_TOML_AT = re.compile(r"^(.*) \(at line (\d+), column (\d+)\)\Z", re.S)


def _toml_error(message: str, path: Path) -> ShmemError:
    """tomllib's message, its ``(at line N, column M)`` made the error's position."""
    m = _TOML_AT.match(message)
    pos = SourcePos(int(m.group(2)), int(m.group(3))) if m else None
    text = m.group(1) if m else message
    if pos == SourcePos(1, 1) and text == "Invalid statement":
        text += " (a byte-order mark? save the file as UTF-8 without one)"
    return ShmemError(f"invalid TOML: {text}", path=str(path), pos=pos, code="config")


def _toml(value: Any) -> str:
    """A value as the file writes it, short: ``true``, ``"2"``, ``1.5``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + shorten(value.replace("\\", "\\\\").replace('"', '\\"')) + '"'
    return shorten(value)


class _Reader:
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.lines = text.split("\n")  # TOML's lines end at LF only

    def where(self, key: str, table: str = "tool.shmem") -> SourcePos | None:
        """Best effort: the line that sets ``table.key`` (a key in its ``[table]``, a dotted
        key, a header), else the line of the nearest table above it that one sets (an
        inline table's key)."""
        wanted = f"{table}.{key}" if table else key
        found: dict[str, SourcePos] = {}
        section = ""
        for n, line in enumerate(self.lines, 1):
            head = re.match(r"^\s*\[\[?([^\[\]]+)\]\]?\s*(#.*)?\Z", line)
            if head:
                section = re.sub(r"[\s\"']", "", head.group(1))
                found.setdefault(section, SourcePos(n, 1))
                continue
            assign = re.match(r"^(\s*)([\w\-.\"' ]+?)\s*=", line)
            if assign:
                name = re.sub(r"[\s\"']", "", assign.group(2))
                full = f"{section}.{name}" if section else name
                found.setdefault(full, SourcePos(n, len(assign.group(1)) + 1))
        parts = wanted.split(".")
        for end in range(len(parts), 0, -1):
            pos = found.get(".".join(parts[:end]))
            if pos is not None:
                return pos
        return None

    def error(self, message: str, key: str, table: str = "tool.shmem") -> ShmemError:
        return ShmemError(message, path=str(self.path), pos=self.where(key, table), code="config")

    def unknown(self, key: str, known: tuple[str, ...], table: str) -> ShmemError:
        near = difflib.get_close_matches(key.replace("_", "-"), known, n=1, cutoff=0.5)
        near = near or difflib.get_close_matches(key, known, n=1, cutoff=0.5)
        hint = f"did you mean {near[0]!r}?" if near else "valid keys: " + ", ".join(known)
        return self.error(f"unknown key {key!r} in [{table}]; {hint}", key, table)

    def strings(self, table: dict[str, Any], key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(f"[tool.shmem] {key} must be a list of strings", key)
        if any("\0" in v for v in value):
            raise self.error(f"[tool.shmem] {key}: a string holds a NUL character (remove it)", key)
        problem = strings_problem(f"[tool.shmem] {key}", value, globs=key == "exclude")
        if problem is not None:
            raise self.error(problem, key)
        return tuple(value)

    def read(self, table: Any) -> LintConfig:
        if not isinstance(table, dict):
            raise self.error("[tool.shmem] must be a table", "shmem", "tool")
        for key in table:
            if key not in KEYS:
                raise self.unknown(key, KEYS, "tool.shmem")
        fail_on = None
        if "fail-on" in table:
            value = table["fail-on"]
            if not isinstance(value, str) or value.lower() not in LABELS:
                raise self.error(
                    f"[tool.shmem] fail-on must be one of {', '.join(LABELS)}, got {_toml(value)}",
                    "fail-on",
                )
            fail_on = Severity.parse(value)
        baseline = table.get("baseline")
        if baseline is not None and not isinstance(baseline, str):
            raise self.error("[tool.shmem] baseline must be a file name (a string)", "baseline")
        cache = table.get("build-cache")
        if cache is not None and (not isinstance(cache, str) or not cache or "\0" in cache):
            why = "[tool.shmem] build-cache must be a folder name (a string)"
            raise self.error(why, "build-cache")
        if cache is not None:
            self.check_cache(cache)
        paths = self.strings(table, "paths")
        self.own_files("paths", paths, "shmem lint DIR")
        self.own_files("baseline", [baseline] if baseline else [], "--baseline FILE")
        return LintConfig(
            source=self.path,
            base=self.path.parent,
            paths=paths,
            exclude=self.strings(table, "exclude"),
            fail_on=fail_on,
            baseline=baseline,
            expect=self.expect(table.get("expect")),
            select=self.rule_keys(table, "select"),
            ignore=self.rule_keys(table, "ignore"),
            source_roots=tuple(
                str((self.path.parent / r).resolve()) for r in self.strings(table, "source-roots")
            ),
            include_roots=tuple(
                str((self.path.parent / r).resolve()) for r in self.strings(table, "include-roots")
            ),
            build_cache=None if cache is None else str((self.path.parent / cache).resolve()),
            compile_seconds=self.seconds(table, "compile-time-limit"),
        )

    def seconds(self, table: dict[str, Any], key: str) -> float | None:
        """A number of seconds (``--time-limit``'s range), None where the key is not set."""
        from ..trace.emulator.budget import SECONDS_RANGE

        value = table.get(key)
        if value is None:
            return None
        low, high = SECONDS_RANGE
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            raise self.error(
                f"[tool.shmem] {key} must be a number of seconds from {low:g} to {high:g}, got "
                f"{_toml(value)}",
                key,
            )
        return float(value)

    def own_files(self, key: str, values: Sequence[str], option: str) -> None:
        """The files a config has lint read (its specs, its baseline) are its project's own:
        inside the repository that holds the config (else the config's folder), links
        resolved. A cloned repository's pyproject.toml could otherwise have lint read, and
        quote in its errors, any file of the machine (``baseline = "/etc/shadow"`` printed
        its first line); the command line names any."""
        project = find_repo_root(self.path.parent) or Path(os.path.realpath(self.path.parent))
        for value in values:
            try:
                target = Path(os.path.realpath(self.path.parent / value))
            except (OSError, ValueError):  # a name too long: not read either
                continue
            if target != project and project not in target.parents:
                raise self.error(
                    f"[tool.shmem] {key}: {shorten(value, 200)!r} is outside the project "
                    f"({shorten(str(project), 200)}): a project's config names only its own "
                    f"files; give one elsewhere on the command line ({option})",
                    key,
                )

    def check_cache(self, cache: str) -> None:
        """A build cache that could never be made is the config's error, said once at its
        key (not each kernel's build failing); the folder itself is made by the first build
        kept."""
        from ..cuda.build_cache import folder_problem

        why = folder_problem(self.path.parent / cache)
        if why is not None:
            shown = shorten(cache, 200)
            where = f"relative to {shorten(str(self.path.resolve().parent), 200)}"
            raise self.error(f"[tool.shmem] build-cache {shown!r} ({where}) {why}", "build-cache")

    def rule_keys(self, table: dict[str, Any], key: str) -> tuple[str, ...]:
        from .selection import codes_of

        keys = self.strings(table, key)
        for k in keys:
            try:
                codes_of(k)
            except ValueError as exc:
                raise self.error(f"[tool.shmem] {key}: {exc}", key) from None
        return keys

    def expect(self, value: Any) -> Expect | None:
        if value is None:
            return None
        table = "tool.shmem.expect"
        if not isinstance(value, dict):
            raise self.error("[tool.shmem] expect must be a table, e.g. {max_ways = 2}", "expect")
        for key in value:
            if key not in EXPECT_KEYS:
                raise self.unknown(key, EXPECT_KEYS, table)
        for key in ("max_ways", "max_wavefronts_per_request"):
            v = value.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise self.error(
                    f"[{table}] {key} must be a positive integer, got {_toml(v)}", key, table
                )
        cf = value.get("conflict_free")
        if cf is not None and not isinstance(cf, bool):
            raise self.error(
                f"[{table}] conflict_free must be true or false, got {_toml(cf)}",
                "conflict_free",
                table,
            )
        out = Expect(
            max_ways=value.get("max_ways"),
            max_wavefronts_per_request=value.get("max_wavefronts_per_request"),
            conflict_free=cf,
        )
        return None if out.empty else out
