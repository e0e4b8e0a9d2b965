// dynamic_smem: `extern __shared__ float buf[]` sized by the launch's
// shared_bytes (2 * blockDim.x floats). The first half holds the block's input
// segment (0 past n), the second half its squares; after a barrier
//   out[i] = rev[blockDim.x - 1 - t] * scale + sq[(t + 1) % blockDim.x]
// (segment reversed, plus the next element's square, wrapping inside the block).
// The manifest launches it twice on the same input: block 128 with
// shared_bytes 1024, then block 64 with shared_bytes 512 (different results).
// Exercises: dynamic shared memory (.extern .shared .b8 buf[]), blockDim-dependent
// shared addressing, rem.u32 by %ntid, two launches with different shared_bytes.
extern "C" __global__ void dynamic_smem(const float* in, float* out, float scale, int n)
{
    extern __shared__ float buf[];
    float* rev = buf;
    float* sq = buf + blockDim.x;
    unsigned t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    float v = (i < n) ? in[i] : 0.0f;
    rev[t] = v;
    sq[t] = v * v;
    __syncthreads();
    if (i < n)
        out[i] = rev[blockDim.x - 1 - t] * scale + sq[(t + 1) % blockDim.x];
}
