// block_scan: inclusive prefix sum (int32) of each block's 256-element segment,
// Hillis-Steele style in shared memory: at step `off` every thread reads
// s[t - off], waits at a barrier, then adds, then waits again (no race).
// n = 1000, so the last block's segment is partial (232 elements) and the
// padding lanes load 0 and store nothing.
// Exercises: log-step loop with two barriers per step, shared loads at a
// thread-dependent offset, predicated stores.
#define BLOCK 256

extern "C" __global__ void block_scan(const int* in, int* out, int n)
{
    __shared__ int s[BLOCK];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = (i < n) ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < (int)blockDim.x; off <<= 1) {
        int add = (t >= off) ? s[t - off] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    if (i < n)
        out[i] = s[t];
}
