"""The functional emulator: a block's SASS run vectorized over its threads (``execute``),
its state and operands, the opcode table (``op_table``) and decoding with it (``decode``),
the tensor units' shared-memory side (TMA boxes, wgmma descriptors) in ``tensor_units/``;
what makes threads wait (barriers, mbarriers) lives in ``sync/``, the opcode families in
``ops/``."""
