// indexing3d: 3-D grid [2, 3, 2] x 3-D block [4, 4, 3] (48 threads per block, so
// each block has one full warp and one half warp of 16 threads).
// Thread with linear global id g = block_linear * 48 + thread_linear writes
//   ids[g]   = ctaid.x | ctaid.y << 4 | ctaid.z << 8 | tid.x << 12 | tid.y << 16 | tid.z << 20
//   dims[g]  = nctaid.x | nctaid.y << 4 | nctaid.z << 8 | ntid.x << 12 | ntid.y << 16 | ntid.z << 20
//   lanes[g] = %laneid | (thread_linear / 32) << 8 | g << 16
// where block_linear = (ctaid.z * nctaid.y + ctaid.y) * nctaid.x + ctaid.x and
// thread_linear = (tid.z * ntid.y + tid.y) * ntid.x + tid.x.
// Exercises: all 12 %tid/%ntid/%ctaid/%nctaid components, %laneid (inline asm),
// a partial last warp, warp formation from x-fastest linearised thread ids.
extern "C" __global__ void indexing3d(unsigned* ids, unsigned* dims, unsigned* lanes)
{
    unsigned bid = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned tpb = blockDim.x * blockDim.y * blockDim.z;
    unsigned tid = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned g = bid * tpb + tid;
    ids[g] = blockIdx.x | blockIdx.y << 4 | blockIdx.z << 8 | threadIdx.x << 12
           | threadIdx.y << 16 | threadIdx.z << 20;
    dims[g] = gridDim.x | gridDim.y << 4 | gridDim.z << 8 | blockDim.x << 12
            | blockDim.y << 16 | blockDim.z << 20;
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    lanes[g] = lane | (tid / 32) << 8 | g << 16;
}
