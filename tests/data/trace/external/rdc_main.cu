// the host side of the -rdc=true build of calls.cu (README): one launch, so the program links
extern "C" __global__ void printf_value(float *);
int main() { printf_value<<<1, 64>>>(nullptr); return 0; }
