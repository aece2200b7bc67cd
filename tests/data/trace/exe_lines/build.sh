#!/bin/bash
# Builds lines (the executable tests/test_trace_exe_lines.py traces) as a user would, in a
# folder of its own outside the repository, so that its line table names files that are not
# where the test runs (an executable built on another machine): run from this folder.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=/tmp/shmem-exe-lines
rm -rf "$build" && mkdir -p "$build" && cp -r "$here/lines.cu" "$here/include" "$build"
cd "$build"
nvcc -O3 -lineinfo -arch=sm_90 -cudart shared -Xlinker -s -Iinclude -o lines lines.cu
cp lines "$here/lines"
rm -rf "$build"
