"""The analyses built on the engine: a spec analyzed access by access (``analyze``),
the one loop and sum over requests (``totals``), fixes (``suggest``), loop invariance
(``invariance``), likely vectorization (``vectorize``) and variant sweeps (``sweep/``)."""
