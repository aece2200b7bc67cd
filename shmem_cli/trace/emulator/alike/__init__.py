"""Proofs that a grid's blocks behave alike beyond the taint watch (:mod:`..grid`):
:mod:`.affine` proves that a guard on the block index takes the same outcome in every
block of the grid."""
