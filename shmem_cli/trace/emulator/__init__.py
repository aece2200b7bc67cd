"""The functional emulator: a block's SASS run vectorized over its threads (``execute``),
its state and operands, the opcode table (``op_table``) and decoding with it (``decode``),
the async proxy's pieces (mbarriers, TMA, wgmma); the opcode families live in ``ops/``."""
