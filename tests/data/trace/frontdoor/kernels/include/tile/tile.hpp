// tile: a small header library of the shmem project's own (tests only), written the way
// header libraries such as CuTe are: the umbrella header includes its parts through a
// computed include, and every access goes through an inlined library function.
#pragma once
#define TILE_HEADER(x) <tile/x>
#include TILE_HEADER(layout.hpp)
#include TILE_HEADER(view.hpp)
#include TILE_HEADER(copy.hpp)
