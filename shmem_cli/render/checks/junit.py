"""``shmem lint --format junit``: JUnit XML for CI test-report viewers.

One ``<testsuite>`` per spec file, one ``<testcase>`` per access (a spec that
does not load is one test case named ``spec``). A finding at or above
``--fail-on`` is a ``<failure>`` of its access's test case; lower findings are
listed in the test case's ``<system-out>``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ...checks.report import CheckedFile, CheckReport, Finding, Severity
from .lint_text import location

# characters XML 1.0 cannot carry, even escaped
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

SPEC_CASE = "spec"


def xml_text(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _failure(case: ET.Element, f: Finding) -> None:
    el = ET.SubElement(case, "failure", message=xml_text(f"{f.title}: {f.message}"), type=f.code)
    el.text = xml_text(f"{location(f)}: {f.severity.label}: {f.message} [{f.title}]")


def _suite(file: CheckedFile, fail_on: Severity) -> ET.Element:
    cases: dict[str | None, list[Finding]] = {a.name: [] for a in file.accesses}
    for f in file.findings:
        key = f.access if f.access in cases else None
        cases.setdefault(key, []).append(f)
    suite = ET.Element("testsuite", name=xml_text(file.path))
    failures = 0
    lines = {a.name: a.line for a in file.accesses}
    for name, found in cases.items():
        case = ET.SubElement(
            suite,
            "testcase",
            name=xml_text(name if name is not None else SPEC_CASE),
            classname=xml_text(file.path),
            file=xml_text(file.path),
        )
        line = (
            lines.get(name) if name is not None else next((f.line for f in found if f.line), None)
        )
        if line is not None:
            case.set("line", str(line))
        failing = [f for f in found if f.severity >= fail_on]
        for f in failing:
            _failure(case, f)
        failures += bool(failing)
        rest = [f for f in found if f.severity < fail_on]
        if rest:
            out = ET.SubElement(case, "system-out")
            out.text = xml_text(
                "\n".join(
                    f"{location(f)}: {f.severity.label}: {f.message} [{f.title}]" for f in rest
                )
            )
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", "0")
    return suite


def render_junit(
    report: CheckReport, *, fail_on: Severity = Severity.ERROR, tool: str = "shmem lint"
) -> str:
    root = ET.Element("testsuites", name=tool)
    tests = failures = 0
    for file in report.files:
        suite = _suite(file, fail_on)
        root.append(suite)
        tests += int(suite.get("tests", "0"))
        failures += int(suite.get("failures", "0"))
    root.set("tests", str(tests))
    root.set("failures", str(failures))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
