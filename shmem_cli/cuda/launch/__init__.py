"""A launch's values: C types and their bytes (:mod:`.c_types`), launch text to numbers
(:mod:`.values`)."""
