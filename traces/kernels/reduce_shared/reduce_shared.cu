// reduce_shared: block-wide sum reduction (int32) in shared memory.
// Each block loads blockDim.x elements (0 past n), halves the active range with
// __syncthreads() between steps, and thread 0 writes the block's partial sum.
// The manifest launches it twice: 4000 inputs -> 16 partial sums (grid 16), then
// the 16 partials -> 1 total (grid 1), so the second launch reads the output of
// the first. int32 makes the result exact whatever the summation order.
// Exercises: static .shared array, bar.sync, ld/st.shared, a uniform loop around
// a barrier, divergent `if (t < stride)`, two launches sharing device memory.
#define BLOCK 256

extern "C" __global__ void reduce_shared(const int* in, int* out, int n)
{
    __shared__ int s[BLOCK];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    s[t] = (i < (unsigned)n) ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
