"""What every stage leans on: the located error type and the cap on the
problems reported per file (``errors``), bounded input (``bounded_read``), safe output
files (``fsutil``), signals (``interrupts``) and worker processes (``workers``)."""
