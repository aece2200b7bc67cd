"""Proofs that a grid's blocks behave alike beyond the taint watch (:mod:`..grid`), class by
class: :mod:`.forms` keeps what the block index gives each register in every block (block
vectors, evaluated through :mod:`.shadow`), :mod:`.agree` finds the blocks in which a compare
keeps a block's outcome, :mod:`.classes` traces one block per class of identical behaviour
and counts it for its class."""
