// vote_any_all: warp votes on p = (in[i] > 0) with the full member mask.
// Per warp (lane 0 writes): ballots[w] = __ballot_sync, anys[w] = __any_sync,
// alls[w] = __all_sync. Per thread: ranks[i] = popc(ballot & %lanemask_lt), the
// thread's rank among the warp's true lanes (-1 if p is false).
// Data: warp 0 all true, warp 1 all false, warp 2 a single true lane (31),
// warp 3 all true but lane 0, the rest random.
// Exercises: vote.sync.ballot.b32, vote.sync.any.pred, vote.sync.all.pred,
// %lanemask_lt (inline asm), selp from predicates.
extern "C" __global__ void vote_any_all(const int* in, unsigned* ballots, int* anys, int* alls,
                                        int* ranks, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    bool p = in[i] > 0;
    unsigned b = __ballot_sync(0xffffffffu, p);
    int an = __any_sync(0xffffffffu, p);
    int al = __all_sync(0xffffffffu, p);
    unsigned lt;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    if ((threadIdx.x & 31) == 0) {
        ballots[i >> 5] = b;
        anys[i >> 5] = an ? 1 : 0;
        alls[i >> 5] = al ? 1 : 0;
    }
    ranks[i] = p ? __popc(b & lt) : -1;
}
