"""What one lane of a shared-memory instruction does: :class:`AccessKind`, the engine's
description of an access (its op, bytes per lane, atomic class and matrices)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

import numpy as np

from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

from . import ops
from .arch import ArchProfile

B8: TypeAlias = "npt.NDArray[np.bool_]"

__all__ = ["AccessKind"]


@frozen
class AccessKind:
    """What one lane of the instruction does.

    ``op`` names an :class:`~shmem_cli.hardware.ops.Op`; ``size`` is bytes per lane (16 for a
    matrix row); ``atomic`` is the engine's atomic class (``inc`` combines like a load,
    ``add`` and ``exch`` do not); ``matrices`` is 1, 2 or 4 for ldmatrix/stmatrix.
    """

    op: str  # a name of shmem_cli.hardware.ops.OPS
    size: int  # bytes per lane (16 for ldmatrix/stmatrix rows)
    atomic: str = "inc"
    matrices: int = 1

    @property
    def is_matrix(self) -> bool:
        return ops.get(self.op).matrix

    @property
    def is_atomic(self) -> bool:
        return ops.get(self.op).atomic

    def combines_lanes(self, arch: ArchProfile) -> bool:
        """Whether lanes on the same word share one bank access (a broadcast)."""
        return not self.is_atomic or arch.atomic_rule(self.atomic).combines

    def uniform_in_one(self, arch: ArchProfile) -> bool:
        """Whether a warp-uniform address is reduced in one wavefront (rule 7: the "add"
        class, which only a spec's ``atomic: add`` has; the trace charges an ATOMS.ADD as
        "exch")."""
        return self.is_atomic and arch.atomic_rule(self.atomic).uniform_in_one

    def address_lanes(self, arch: ArchProfile) -> B8:
        """The lanes whose addresses the instruction reads, (warp_size,).

        Every lane for most instructions; for ldmatrix/stmatrix lanes 8m..8m+7 give
        the row addresses of matrix m (``arch.matrix_rows`` lanes a matrix) and the
        other lanes' addresses are ignored. A front end ANDs its active mask with this
        before calling the engine.
        """
        if self.is_matrix:
            on: B8 = np.arange(arch.warp_size) < arch.matrix_rows * self.matrices
            return on
        return np.ones(arch.warp_size, dtype=bool)
