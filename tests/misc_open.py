"""The op_misc wavefronts of a traced launch (docs/hardware-model.md section 9e) against the
H200's, where each data set's test module lists the launches the rule misses.

A list of misses maps a launch to (the rule's wavefronts, the H200's): a launch not listed
must be exact, a listed one must miss by exactly what is listed, so that a miss that closes
or moves fails the test and the list stays true."""

from __future__ import annotations

from collections.abc import Mapping

#: per launch the rule misses: (the rule's op_misc wavefronts, the H200's)
Misses = Mapping[str, tuple[int, int]]


def check_misc(launch: str, rule: int, measured: int, misses: Misses) -> None:
    """``rule`` (what shmem counted for ``launch``) is ``measured`` (what the H200 read), or,
    where ``misses`` lists the launch, exactly the pair listed there."""
    want = misses.get(launch, (measured, measured))
    assert (rule, measured) == want, (
        f"{launch}: op_misc {rule} by the rule, {measured} on the H200; listed {want}"
    )
