"""docs/tutorial.md stays true: every command in it runs and prints what the page shows.

When shmem's output changes on purpose, refresh the page with
``python3 docs/tools/update_tutorial.py`` and review the diff.
"""

from __future__ import annotations

import re
from types import ModuleType
from typing import Any

import pytest

from .conftest import ROOT, module_from_file

TUTORIAL = ROOT / "docs" / "tutorial.md"
README = ROOT / "README.md"


def load_tool() -> ModuleType:
    path = ROOT / "docs" / "tools" / "update_tutorial.py"
    return module_from_file("update_tutorial", path, register=True)


tool = load_tool()
EXAMPLES = list(tool.examples(TUTORIAL.read_text(encoding="utf-8")))


def test_the_tutorial_has_its_lesson() -> None:
    commands = [e.command for e in EXAMPLES]
    assert len(commands) >= 10
    for needed in (
        "shmem analyze access_specs/tutorial_sequential.yaml",
        "shmem analyze access_specs/tutorial_broadcast.yaml",
        "shmem analyze access_specs/column_read_32x32.yaml",
        "shmem sweep access_specs/column_read_32x32.yaml --pad 0..4",
    ):
        assert needed in commands
    assert any("column_read_32x33" in c for c in commands)
    assert any("float4_tiles" in c for c in commands)
    assert any("ldmatrix_swizzled_128B" in c for c in commands)
    assert any("reduction" in c and "--heatmap" in c for c in commands)
    assert any(c.startswith("shmem trace ") for c in commands)


def test_parser_splits_commands_and_outputs() -> None:
    text = "intro\n```console\n$ shmem a\nline 1\nline 2\n$ shmem b\n```\n```yaml\n$ no\n```\n"
    got = list(tool.examples(text))
    assert [(e.command, e.shown, e.line) for e in got] == [
        ("shmem a", "line 1\nline 2", 3),
        ("shmem b", "", 6),
    ]


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"line{e.line}" for e in EXAMPLES])
def test_tutorial_output_is_current(example: Any) -> None:
    actual = tool.run(example.command)
    assert actual == tool.normalize(example.shown), (
        f"docs/tutorial.md line {example.line}: the output of `{example.command}` changed; "
        "run python3 docs/tools/update_tutorial.py"
    )


def test_yaml_excerpts_are_taken_from_the_specs() -> None:
    pattern = r"^```yaml\n# (access_specs/\S+)\n(.*?)^```$"
    blocks = re.findall(pattern, TUTORIAL.read_text(), re.S | re.M)
    assert blocks
    for path, body in blocks:
        assert body in (ROOT / path).read_text(), path


def test_every_spec_the_docs_name_exists() -> None:
    for doc in (TUTORIAL, README):
        for path in set(re.findall(r"access_specs/[\w.]+\.yaml", doc.read_text())):
            assert (ROOT / path).is_file(), f"{doc.name} names {path}"


def test_readme_picture_is_made_by_shmem() -> None:
    readme = README.read_text()
    for path, args in tool.PICTURES:
        assert f"]({path})" in readme
        command = " ".join(("shmem", *args, "--svg", path))
        assert command in readme, "the README says how its picture was made"
        svg = (ROOT / path).read_text()
        assert svg.startswith("<svg") and "32-way" in svg.replace("&#160;", " ")


def test_readme_first_spec_does_what_the_readme_says() -> None:
    import yaml

    from shmem_cli.analysis.analyze import analyze

    block = re.search(r"## A first spec\n\n```yaml\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    spec = yaml.safe_load(block[1])
    (column,) = analyze(spec).accesses
    assert (column.cost.max_wavefronts_per_request, column.max_ways) == (32, 32)
    spec["arrays"]["tile"]["pad"] = 1
    (padded,) = analyze(spec).accesses
    assert padded.cost.max_wavefronts_per_request == 1 and padded.conflict_free
