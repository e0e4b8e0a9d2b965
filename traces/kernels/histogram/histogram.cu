// histogram: 64-bin histogram (u32) of byte values 0..255 (bin = value >> 2).
// Each block builds a private histogram in shared memory with shared atomics
// over a grid-stride loop, then merges its non-zero bins into the global
// histogram with global atomicAdd. Integer atomics make it deterministic.
// Exercises: atom.shared.add.u32 (contended: many threads hit the same bin),
// atom.global.add.u32, shared-memory initialisation loop + barriers,
// grid-stride loop (n = 5000, 1024 threads).
#define NBINS 64

extern "C" __global__ void histogram(const unsigned* data, unsigned* hist, int n)
{
    __shared__ unsigned local[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i] >> 2], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (local[b] != 0)
            atomicAdd(&hist[b], local[b]);
}
