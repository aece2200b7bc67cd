"""JSON rendering of an analysis report."""

from __future__ import annotations

import json

from ..model import Report


def render_json(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2) + "\n"
