"""Proofs that a grid's blocks behave alike beyond the taint watch (:mod:`..grid`):
:mod:`.affine` proves up to which block index a guard on the block index takes the first
block's outcome; :mod:`.edges` lists the blocks past that box, which run, and keeps the
first block's counts for the blocks it stands for."""
