"""The views of ``shmem trace``: ``view`` the report (per instruction, per line, per op,
then the details), ``notes`` what it says after its tables, ``suggest`` the layout changes of
``--suggest``, ``compare`` the trace beside Nsight Compute's counters (``--compare``)."""
