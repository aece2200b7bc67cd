"""PyYAML's safe loader, bounded as it composes: nodes, nesting, aliases and anchors.

:mod:`shmem_cli.spec.source` converts what it composes into plain data; the bounds here
refuse a hostile document (a "billion laughs", 100,000 aliases, nesting 20,000 deep) at the
event past them, with its ``file:line:column``, before any node is converted.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.events import AliasEvent
from yaml.nodes import Node

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.spec.yaml_errors import mark_pos

#: Most nodes (values and keys) a document may have once aliases are expanded.
MAX_NODES = 100_000
#: Most aliases (``*name``) and anchors (``&name``) a document may hold, counted as PyYAML
#: composes it: a spec repeats a few values (a merge key per access at most), while a bomb
#: of 100,000 of them parsed for 2 to 4 s before MAX_NODES refused it; these take 0.1 s.
MAX_ALIASES = 4096
MAX_ANCHORS = 1024
#: Deepest nesting of lists and mappings.
MAX_DEPTH = 100


_YAML = "tag:yaml.org,2002:"
_INT = _YAML + "int"
_FLOAT = _YAML + "float"
_TIMESTAMP = _YAML + "timestamp"


def _without_colons(rx: re.Pattern[str]) -> re.Pattern[str]:
    """``rx``, matching no text with a colon (YAML 1.1's base-60 ``1:30``)."""
    return re.compile("(?!.*:)" + rx.pattern, rx.flags)


class Loader(yaml.SafeLoader):
    """SafeLoader that bounds composition and leaves dates as strings."""

    # ``yaml.safe_load`` turns ``2024-01-01`` into a date; a spec only needs
    # plain JSON-like values, so the implicit timestamp resolver is dropped. YAML 1.1's
    # base-60 numbers are dropped too: ``1:30`` (90) stays the text it reads as, which an
    # expression or a loop range then refuses at its column (``j: 8:32`` meant 8..32).
    yaml_implicit_resolvers = {
        first: [
            (tag, _without_colons(rx) if tag in (_INT, _FLOAT) else rx)
            for tag, rx in resolvers
            if tag != _TIMESTAMP
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str, path: str) -> None:
        super().__init__(stream)
        self.shmem_path = path
        self.shmem_depth = 0
        self.shmem_nodes = 0
        self.shmem_aliases = 0
        self.shmem_anchors = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        # Bound recursion (PyYAML's composer is recursive) and total size
        # before any conversion happens.
        self.shmem_nodes += 1
        if self.shmem_nodes > MAX_NODES:
            raise ShmemError(
                f"YAML document too large (limit {MAX_NODES} nodes)",
                path=self.shmem_path,
                pos=mark_pos(self.peek_event().start_mark),  # type: ignore[no-untyped-call]
            )
        self._count_references()
        self.shmem_depth += 1
        try:
            if self.shmem_depth > MAX_DEPTH:
                raise ShmemError(
                    f"YAML nesting too deep (limit {MAX_DEPTH} levels)",
                    path=self.shmem_path,
                    pos=mark_pos(self.peek_event().start_mark),  # type: ignore[no-untyped-call]
                )
            node = super().compose_node(parent, index)
            assert node is not None
            return node
        finally:
            self.shmem_depth -= 1

    def _count_references(self) -> None:
        """Refuse the alias (``*name``) or anchor (``&name``) past its bound where it is."""
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, AliasEvent):
            self.shmem_aliases += 1
            count, limit, what = self.shmem_aliases, MAX_ALIASES, "aliases (*name)"
        elif getattr(event, "anchor", None) is not None:
            self.shmem_anchors += 1
            count, limit, what = self.shmem_anchors, MAX_ANCHORS, "anchors (&name)"
        else:
            return
        if count > limit:
            raise ShmemError(
                f"too many YAML {what}: more than {limit:,} in one spec; a spec repeats a "
                "few values with them (write the rest out, or loop in an access instead)",
                path=self.shmem_path,
                pos=mark_pos(event.start_mark),
            )
