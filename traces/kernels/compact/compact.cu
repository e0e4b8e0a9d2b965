// compact: stable stream compaction of the int32 values divisible by 3.
// A single 256-thread block walks n = 2000 inputs in 8 chunks of 256. Per chunk:
// __ballot_sync gives each warp its keep-mask, __popc(mask & lanes-below) the
// lane's offset inside its warp, lane 0 publishes the warp count, warp 0 turns
// the 8 warp counts into an inclusive prefix sum with __shfl_up_sync, and its
// lane 7 reserves room for the chunk with atomicAdd(count, chunk_total), whose
// return value is the chunk's base in `out`. With one block the atomics happen
// in chunk order, so `out` is exactly the input order (deterministic);
// unused tail of `out` keeps its -1 fill.
// Also writes per-(chunk, warp) counts to warp_counts[chunk * 8 + warp].
// Exercises: vote.sync.ballot.b32, popc.b32, shfl.sync.up.b32, atom.global.add
// returning a value, shared broadcast of s_base, barrier-separated phases.
#define BLOCK 256
#define WARPS (BLOCK / 32)

extern "C" __global__ void compact(const int* in, int* out, int* count, int* warp_counts, int n)
{
    __shared__ int s_warp[WARPS];
    __shared__ int s_base;
    int t = threadIdx.x;
    int lane = t & 31;
    int warp = t >> 5;
    for (int chunk = 0; chunk < n; chunk += BLOCK) {
        int i = chunk + t;
        int v = (i < n) ? in[i] : 0;
        bool keep = (i < n) && (v % 3 == 0);
        unsigned mask = __ballot_sync(0xffffffffu, keep);
        int before = __popc(mask & ((1u << lane) - 1u));
        if (lane == 0) {
            s_warp[warp] = __popc(mask);
            warp_counts[(chunk / BLOCK) * WARPS + warp] = __popc(mask);
        }
        __syncthreads();
        if (warp == 0) {
            int c = (lane < WARPS) ? s_warp[lane] : 0;
            for (int off = 1; off < 32; off <<= 1) {
                int y = __shfl_up_sync(0xffffffffu, c, off);
                if (lane >= off)
                    c += y;
            }
            if (lane < WARPS)
                s_warp[lane] = c;
            if (lane == WARPS - 1)
                s_base = atomicAdd(count, c);
        }
        __syncthreads();
        if (keep) {
            int woff = (warp > 0) ? s_warp[warp - 1] : 0;
            out[s_base + woff + before] = v;
        }
        __syncthreads();
    }
}
