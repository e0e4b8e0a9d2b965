// bar_red: barrier reductions over a block (128 threads, 6 blocks).
// counts[b] = __syncthreads_count(in[i] > 0), ands[b] = __syncthreads_and(in[i] > 0),
// ors[b] = __syncthreads_or(in[i] > 100), written by thread 0 of block b.
// Data: block 0 all positive, block 1 all <= 0, block 2 mixed in (-100, 100],
// block 3 exactly one value > 100, blocks 4-5 random.
// Exercises: bar.red.popc.u32, bar.red.and.pred, bar.red.or.pred.
extern "C" __global__ void bar_red(const int* in, int* counts, int* ands, int* ors)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[i];
    int c = __syncthreads_count(v > 0);
    int a = __syncthreads_and(v > 0);
    int o = __syncthreads_or(v > 100);
    if (threadIdx.x == 0) {
        counts[blockIdx.x] = c;
        ands[blockIdx.x] = a ? 1 : 0;
        ors[blockIdx.x] = o ? 1 : 0;
    }
}
