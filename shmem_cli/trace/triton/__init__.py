"""The Triton front end: a cache entry read, its launch made as Triton's launcher makes
it, and ``trace_triton`` (ahead-of-time compile, then trace)."""
