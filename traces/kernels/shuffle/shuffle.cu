// shuffle: every __shfl*_sync mode, with and without a sub-warp width.
// 256 threads (8 full warps), v = in[i], lane = threadIdx.x & 31; out is result-major
// (out[k * n + i]):
//   0 __shfl_sync(v, (lane * 7 + 3) & 31)   1 __shfl_up_sync(v, 3)
//   2 __shfl_down_sync(v, 5)                3 __shfl_xor_sync(v, 9)
//   4 __shfl_sync(v, 5, width 8)            5 __shfl_up_sync(v, 2, width 16)
//   6 __shfl_down_sync(v, 3, width 8)       7 __shfl_xor_sync(v, 9, width 8)
//   8 __shfl_sync(v, lane * 3 + 40)  (source lane >= 32: taken modulo 32)
//   9 butterfly all-reduce: 5 x (s += __shfl_xor_sync(s, 16..1)) = warp sum
// fout[i] = __shfl_down_sync(f, 1) - f for f32 input (lane 31 gets its own value: 0).
// CUDA semantics (= PTX shfl.sync with c = ((32 - width) << 8) | 0x1f, or
// (32 - width) << 8 for up): lanes whose source falls outside their width-segment
// (before it for up, after it for down/xor) get their own value back; idx
// sources are taken modulo width inside the segment.
// Exercises: shfl.sync.{idx,up,down,bfly}.b32 with immediate and register lane
// operands and non-default clamp/segment masks.
#define FULL 0xffffffffu

extern "C" __global__ void shuffle(const int* in, int* out, const float* fin, float* fout, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int lane = threadIdx.x & 31;
    int* o = out + i;
    o[0 * n] = __shfl_sync(FULL, v, (lane * 7 + 3) & 31);
    o[1 * n] = __shfl_up_sync(FULL, v, 3);
    o[2 * n] = __shfl_down_sync(FULL, v, 5);
    o[3 * n] = __shfl_xor_sync(FULL, v, 9);
    o[4 * n] = __shfl_sync(FULL, v, 5, 8);
    o[5 * n] = __shfl_up_sync(FULL, v, 2, 16);
    o[6 * n] = __shfl_down_sync(FULL, v, 3, 8);
    o[7 * n] = __shfl_xor_sync(FULL, v, 9, 8);
    o[8 * n] = __shfl_sync(FULL, v, lane * 3 + 40);
    int s = v;
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_xor_sync(FULL, s, off);
    o[9 * n] = s;
    float f = fin[i];
    fout[i] = __shfl_down_sync(FULL, f, 1) - f;
}
