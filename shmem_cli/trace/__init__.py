"""``shmem trace``: the shared-memory traffic of a compiled CUDA kernel, without a GPU."""
