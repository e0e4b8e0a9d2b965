// reduce_shfl: warp-shuffle sum reduction (int32).
// Every thread loads one element (0 past n = 3000), the warp folds its 32 values
// with __shfl_down_sync (offsets 16, 8, 4, 2, 1), and lane 0 stores the warp's sum
// and atomically adds it to a single global total. Integer atomics make the total
// exact and order independent.
// Exercises: shfl.sync.down.b32 (clamp operand 31, member mask -1, all operands
// in registers), lane-0 divergence, atom.global.add.u32.
extern "C" __global__ void reduce_shfl(const int* in, int* warp_sums, int* total, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = (i < n) ? in[i] : 0;
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if ((threadIdx.x & 31) == 0) {
        warp_sums[i >> 5] = v;
        atomicAdd(total, v);
    }
}
