"""Whole steps: an instruction run by every thread of a block at once (a straight run's,
:func:`..scheduler._run_straight`), for the few families a warp stepping alone spends its
time in (issue 30: llm.c's one-warp attention block, about 20 million instructions a
thread). A whole step reads and writes the register files through rows made once per block
(:class:`.rows.Rows`), not through an operand's reader (two indexings and a dtype view per
operand); where its common case does not hold it runs the instruction's own step, which
gives the same result. Its family's rules stay in the family's module
(:mod:`..ops.floating`'s float32 test, :mod:`..ops.memory`'s shared access)."""
