"""JSON rendering of any result with a ``to_json()`` (analyze, sweep, verify reports)."""

from __future__ import annotations

import json
from typing import Any, Protocol


class HasJson(Protocol):
    def to_json(self) -> dict[str, Any]: ...


def render_json(result: HasJson) -> str:
    """The result's JSON document, indented, with a final newline (no rich import)."""
    return json.dumps(result.to_json(), indent=2) + "\n"
