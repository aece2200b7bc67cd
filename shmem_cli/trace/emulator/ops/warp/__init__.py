"""Warp-level instructions, one family a module (each listed in ``FAMILIES`` of
:mod:`...decode`): ``collective`` (SHFL, VOTE, MATCH, REDUX, R2UR: a result of the warp's
lanes together), ``special_registers`` (S2R, S2UR, CS2R: where a thread is) and
``reconvergence`` (BSSY, BSYNC, BREAK, BMOV, WARPSYNC, YIELD, NANOSLEEP)."""
