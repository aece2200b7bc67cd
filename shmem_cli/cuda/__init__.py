"""CUDA's tools and what they read and write: finding and running nvcc, nvdisasm,
cuobjdump and ncu, the nvcc arguments a build may take, the source tree a build may read,
and the SASS text nvdisasm prints. Used by spec, lint, trace and verify alike."""
