// saxpy: y[i] = a * x[i] + y[i] with a grid-stride loop.
// The grid (4 x 128 = 512 threads) is much smaller than n = 4000, so every
// thread runs 7 or 8 loop iterations; the last iteration diverges.
// Exercises: scalar params before pointers (.u32 then .f32 then .u64), %nctaid,
// a loop with a loop-carried index, fma.rn.f32 (contracted a*x+y), read-modify-write
// of a global buffer.
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
