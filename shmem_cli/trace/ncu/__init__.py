"""``shmem trace --compare``: the trace beside Nsight Compute's measurements. ``exports``
reads its CSV pages (bounded), ``names`` tells its kernel names equal to shmem's, ``compare``
lines the source page up with the trace instruction by instruction and ``ops`` the raw
page's per-launch counters with the trace's per-op totals."""
