"""Baselines: accept the findings that exist today, fail only on new ones.

A baseline file is JSON listing findings by file, access name and rule code
(plus the message, for people reading it). A finding is *baselined* when an
entry with the same file, access and rule is left to match it; each entry
matches one finding, so a second, new finding of the same kind still counts.
Lines and messages do not take part: moving an access or a change in its
numbers keeps it accepted, renaming the access or the file does not.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..checks.report import CheckReport, Finding
from ..plumbing import json_text
from ..plumbing.bounded_read import read_bounded
from ..plumbing.errors import ShmemError, shorten

SCHEMA_VERSION = 1
#: The largest baseline read (about 200 bytes per finding: some 300,000 findings).
MAX_BASELINE_BYTES = 64 << 20
#: ``{``, ``[``, ``,`` and ``:`` bytes of a baseline, counted before Python builds its values
#: (each at most one; those in strings counted too): a finding of the messages shmem writes
#: has about 25, so 8 million are some 300,000 findings, and 64 MiB of ``{},{},...`` (22
#: million dicts, 1.75 GB) is refused
MAX_TOKENS = 8_000_000

Key = tuple[str, str, str]


def key_of(finding: Finding) -> Key:
    return (json_text.spelled(finding.path), json_text.spelled(finding.access or ""), finding.code)


def render_baseline(findings: Iterable[Finding]) -> str:
    """The baseline file's text for these findings (sorted, so diffs stay small)."""
    entries = sorted(
        (
            {
                "file": f.path,
                "access": f.access,
                "rule": f.code,
                "name": f.rule,
                "message": f.message,
            }
            for f in findings
        ),
        key=lambda e: (e["file"], e["access"] or "", e["rule"], e["message"]),
    )
    doc = {"schema_version": SCHEMA_VERSION, "tool": "shmem", "findings": entries}
    return json_text.dumps(doc, ensure_ascii=False) + "\n"


def load_baseline(path: str | Path) -> Counter[Key]:
    """The accepted findings of a baseline file; raises ShmemError if it is not one."""
    name = str(path)
    if not os.path.lexists(name):
        raise ShmemError(
            "baseline file not found (create it with --write-baseline)", path=name, code="baseline"
        )
    raw = read_bounded(name, MAX_BASELINE_BYTES, what="baseline", code="baseline", text=True)
    tokens = sum(raw.count(token) for token in (b"{", b"[", b",", b":"))
    if tokens > MAX_TOKENS:
        raise ShmemError(
            f"baseline holds {tokens:,} of the characters {{ [ , : that JSON values take, "
            f"more than the {MAX_TOKENS:,} of some 300,000 findings: not a baseline shmem "
            "wrote (write a new one with --write-baseline)",
            path=name,
            code="baseline",
        )
    try:
        data: Any = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ShmemError(
            f"baseline is not UTF-8 text (byte {exc.start})", path=name, code="baseline"
        ) from None
    except RecursionError:
        raise ShmemError(
            "baseline is nested too deeply to be a shmem baseline "
            "(write a new one with --write-baseline)",
            path=name,
            code="baseline",
        ) from None
    except json.JSONDecodeError as exc:
        from ..plumbing.errors import SourcePos, json_reason

        raise ShmemError(
            f"baseline is not valid JSON: {json_reason(exc.msg)}",
            path=name,
            pos=SourcePos(exc.lineno, exc.colno),
            code="baseline",
        ) from None
    except ValueError as exc:  # a number with thousands of digits
        raise ShmemError(
            f"baseline holds a value shmem does not read: {shorten(str(exc))}",
            path=name,
            code="baseline",
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
        raise ShmemError(
            "not a shmem baseline (expected an object with a 'findings' list)",
            path=name,
            code="baseline",
        )
    version = data.get("schema_version")
    if type(version) is not int or version != SCHEMA_VERSION:  # true == 1 in Python
        raise ShmemError(
            f"unsupported baseline schema_version {shorten(json.dumps(version))} "
            f"(this shmem writes {SCHEMA_VERSION})",
            path=name,
            code="baseline",
        )
    accepted: Counter[Key] = Counter()
    for i, entry in enumerate(data["findings"]):
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("file"), str)
            and isinstance(entry.get("rule"), str)
            and isinstance(entry.get("access"), str | None)
        )
        if not ok:
            raise ShmemError(
                f"baseline entry {i} needs 'file' and 'rule' strings and an 'access' "
                "string or null",
                path=name,
                code="baseline",
            )
        # spelled as written now: a baseline of an older shmem holds a stray byte's surrogate
        where = (json_text.spelled(entry["file"]), json_text.spelled(entry["access"] or ""))
        accepted[(*where, entry["rule"])] += 1
    return accepted


def apply_baseline(report: CheckReport, accepted: Counter[Key]) -> CheckReport:
    """The report without its accepted findings, counting them and the unused entries."""
    left = Counter(accepted)
    files = []
    matched = 0
    for file in report.files:
        kept = []
        for f in file.findings:
            k = key_of(f)
            if left[k] > 0:
                left[k] -= 1
                matched += 1
            else:
                kept.append(f)
        files.append(replace(file, findings=tuple(kept)))
    return CheckReport(
        files=tuple(files),
        baselined=report.baselined + matched,
        fixed=sum(left.values()),
    )
