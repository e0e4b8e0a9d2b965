// const_globals: module-scope variables with initialisers.
//   __constant__ float coeffs[8]  -> .const .align 4 .b8 coeffs[32] = {...}
//   __constant__ int   lut[16]    -> .const array, indexed with i & 15
//   __device__ unsigned g_table[4] = {...}  -> .global with initialiser
//   __device__ float g_scale = 3.0f         -> .global scalar with initialiser
//   __device__ int g_counter                -> .global, zero-initialised
// Launch 1 (const_globals, 600 threads): y[i] = g_scale * poly(x[i]) with an
// 8-term Horner loop kept rolled (#pragma unroll 1) so coeffs[k] is an indexed
// ld.const; tags[i] = lut[i & 15] ^ g_table[i & 3]; every thread atomically
// increments g_counter.
// Launch 2 (read_globals, 1 thread) copies g_counter and g_table[0] into a buffer,
// so it checks that module globals persist across launches of one manifest.
// Exercises: ld.const through a register (mov.u64 %rd, coeffs: the symbol's address
// in its own state space), ld.global [g_scale] with a symbol operand,
// atom.global.add on a module global, a .pragma "nounroll" loop, two entries per module.
__constant__ float coeffs[8] = {0.5f, -1.25f, 2.0f, 0.75f, -0.5f, 1.5f, -2.0f, 1.0f};
__constant__ int lut[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
__device__ unsigned g_table[4] = {0xdeadbeefu, 0x12345678u, 7u, 0x80000000u};
__device__ float g_scale = 3.0f;
__device__ int g_counter;

extern "C" __global__ void const_globals(const float* x, float* y, int* tags, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float xv = x[i];
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < 8; ++k)
        acc = acc * xv + coeffs[k];
    y[i] = acc * g_scale;
    tags[i] = lut[i & 15] ^ (int)g_table[i & 3];
    atomicAdd(&g_counter, 1);
}

extern "C" __global__ void read_globals(int* out)
{
    out[0] = g_counter;
    out[1] = (int)g_table[0];
}
