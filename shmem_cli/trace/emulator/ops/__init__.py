"""The opcode families: one module each, registering its opcodes with ``op_table.op``."""
