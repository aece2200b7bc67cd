// A library's template (tests/data/trace/ptxas_warnings/front_end.cu): a narrowing that nvcc
// reports where it is instantiated.
template <typename T> __device__ T scaled(T x) {
    T big = 5000000000;
    return x * big;
}
