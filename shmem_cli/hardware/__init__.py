"""The hardware rules: the architecture profile (``arch``), the bank-conflict engine
that applies it to requests (``engine``), the element types (``dtypes``), swizzles
(``swizzle``) and the measured cp.async rule (``async_copy``). Nothing here imports a
front end, the analyses or the renderers."""
