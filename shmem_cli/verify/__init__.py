"""``shmem verify``: check shmem's predictions against the user's own GPU.

For every access of every spec, :mod:`.codegen` writes a CUDA kernel that makes
exactly that access (one block, the same block shape, dtype, offsets, padding,
swizzle, loops and predicate), :mod:`.runner` compiles it with ``nvcc``, runs it
under Nsight Compute and dumps its SASS, :mod:`.sass` checks that the compiler
kept the intended shared-memory instruction, :mod:`.ncu` reads the counters,
and :mod:`.compare` sets predicted against measured. Nothing here prints:
:mod:`shmem_cli.commands.verify` does the I/O.
"""
