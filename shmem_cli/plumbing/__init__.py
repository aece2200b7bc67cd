"""What every stage leans on: the located error type (``errors``) and the cap on
problems reported (``problem_cap``), bounded input (``bounded_read``), safe output
files (``fsutil``), signals (``interrupts``) and worker processes (``workers``)."""
