"""``shmem trace``: the shared-memory traffic of a compiled CUDA kernel, without a GPU.

The emulator part: ``sass`` parses nvdisasm's text, ``state`` holds a thread block's
machine state, ``decode`` and the ``ops_*`` modules give each opcode its meaning,
``emulator`` runs a block and ``records`` collects the shared-memory requests it
makes for the wavefront engine.
"""
