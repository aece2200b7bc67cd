"""Rows found again by their bytes: beside :class:`.distinct_rows.DistinctRows`' table of
hashes, a memo of the rows of every lane on (a warp's one request, most steps of a warp
stepping alone) from their addresses' bytes to their number, so that a row a loop recorded
before costs one dictionary look, not its hash's two dot products and the comparison of the
row kept. Only a row that :meth:`~.distinct_rows.DistinctRows.add_row` would find at once
again is kept (never one a hash collision put elsewhere): the numbers are the same as
without it. The memos of a trace's instructions share a bound of their own
(:data:`SEEN_BYTES`), apart from the records' (they change no count and no fold)."""

from __future__ import annotations

#: the bytes a trace's memos may hold in all (an entry: its bytes and the table's share)
SEEN_BYTES = 4 << 20
_PER_ENTRY = 120


class SeenBudget:
    """The bytes the memos of one recorder's instructions may still take."""

    def __init__(self, limit: int = SEEN_BYTES) -> None:
        self.limit = self.left = limit

    def free(self) -> None:
        """Every memo was dropped (the records folded): the whole bound is free again."""
        self.left = self.limit


class RowsSeen:
    """One instruction's memo: a row's bytes -> its number among the distinct rows."""

    def __init__(self, budget: SeenBudget) -> None:
        self.budget = budget
        self.rows: dict[bytes, int] = {}

    def keep(self, raw: bytes, number: int) -> None:
        """Keep ``raw``'s number, where the bound has room."""
        size = len(raw) + _PER_ENTRY
        if size <= self.budget.left:
            self.budget.left -= size
            self.rows[raw] = number
