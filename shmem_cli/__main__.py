"""``python -m shmem_cli``: the ``shmem`` command, run as the installed script runs it (its
usage lines and messages name ``shmem``)."""

from .console import main

main()
