"""Keep a Triton cache entry compiled ahead of time (``triton.compile`` with
``TRITON_CACHE_DIR`` a scratch folder): the entry's folder found by its metadata's hash, its
cubin, metadata, TTGIR and PTX copied into the lab's ``cache/`` (the build scripts of
tests/data/triton/sweep16, masked36, called and helper_calls)."""

import json
import shutil
from pathlib import Path

KEEP = (".cubin", ".json", ".ttgir", ".ptx")


def keep_entry(scratch: Path, name: str, compiled, cache: Path, kinds=KEEP) -> str:
    """Copy the entry of kernel ``name`` that ``compiled`` is into ``cache`` (its files of the
    suffixes ``kinds``); its folder's name."""
    folder = next(
        m.parent
        for m in scratch.glob(f"*/{name}.json")
        if json.loads(m.read_text()).get("hash") == compiled.metadata.hash
    )
    dest = cache / folder.name
    dest.mkdir(parents=True)
    for f in folder.iterdir():
        if f.suffix in kinds and not f.name.startswith("__grp__"):
            shutil.copy(f, dest / f.name)
    return folder.name
