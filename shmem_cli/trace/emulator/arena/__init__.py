"""The byte arena behind global memory: pages real only where written, counted and given
back (:mod:`.pages`), and the shadow regions of memory the launch did not describe, placed
in slots with room to grow (:mod:`.shadows`)."""
