"""Check reports: findings, severities and the rule registry, for every command whose
report can fail a check (``shmem lint``, ``shmem verify``) and every format that draws
one (render/checks/). Imports nothing of lint, render or verify."""
