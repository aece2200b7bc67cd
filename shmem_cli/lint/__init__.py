"""``shmem lint``: check access specs against the bank-conflict expectations they state.

The pieces, each usable on its own:

* :mod:`.findings` -- the records every output format is built from
  (:class:`~.findings.Finding`, :class:`~.findings.Severity`).
* :mod:`.rules` -- the rule registry; one module per rule, whose docstring is
  its documentation (``shmem rules``).
* :mod:`.core` -- specs in, findings out; reads spec files and nothing else.
* :mod:`.config` -- ``[tool.shmem]`` in ``pyproject.toml``.
* :mod:`.baseline` -- accepting today's findings and failing only on new ones.
"""
