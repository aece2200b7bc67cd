"""From diagnosis to fix on compiled kernels: the kernel's shared arrays and their
declarations, layout changes costed on traced requests, ``--suggest`` and the compiled sweep."""
