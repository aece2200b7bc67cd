"""Every JSON document shmem writes (analyze, sweep, trace, lint's JSON, SARIF and baselines),
made valid UTF-8 JSON whatever the names in it.

A file name that is not UTF-8 reaches Python with each of its stray bytes as a lone surrogate
(``os.fsdecode``: byte 0xff is U+DCFF), which ``json.dumps`` writes as the escape
``\\udcff`` (or as the code point itself, which no UTF-8 encoder takes); strict JSON parsers
(Rust's serde_json, Go's, jq's) refuse both. Here each stray byte is spelled as the four
characters ``\\xff`` (in the JSON text ``"\\\\xff"``), which says the byte; any other lone
surrogate as ``\\udXXX`` in the same way. A name with no stray byte is written as it is, and a
character outside the BMP stays one character.
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE = re.compile("[\ud800-\udfff]")
#: the surrogates ``os.fsdecode`` makes of the bytes 0x80-0xff
_ESCAPED = range(0xDC80, 0xDD00)


def _spell(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code - 0xDC00:02x}" if code in _ESCAPED else f"\\u{code:04x}"


def spelled(text: str) -> str:
    """``text`` with each lone surrogate spelled out (``\\xff`` for a name's stray byte)."""
    return _LONE.sub(_spell, text) if _LONE.search(text) else text


def _plain(value: Any) -> Any:
    if isinstance(value, str):
        return spelled(value)
    if isinstance(value, dict):
        return {spelled(k) if isinstance(k, str) else k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def dumps(doc: Any, *, indent: int | None = 2, ensure_ascii: bool = True) -> str:
    """``json.dumps(doc)``, every string of it free of lone surrogates. The document is walked
    only where the fast dump shows a surrogate (an escape ``\\ud...``, or the code point)."""
    text = json.dumps(doc, indent=indent, ensure_ascii=ensure_ascii)
    suspect = "\\ud" in text if ensure_ascii else _LONE.search(text) is not None
    if not suspect:
        return text
    return json.dumps(_plain(doc), indent=indent, ensure_ascii=ensure_ascii)
