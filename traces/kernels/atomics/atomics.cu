// atomics: every flavour of integer atomic plus f32/u64 atomicAdd, on results
// that do not depend on the order in which threads get there.
// n = 1000 int32 inputs v in [-1000, 1000], grid 4 x 256 (24 idle threads).
//   ires: 0 sum(v) (atomicAdd)  1 -sum(v) (atomicSub)  2 max(v)  3 min(v)
//         4 sum(v) again, via an atomicCAS retry loop (lanes of a warp contend)
//   ures: 0 AND of (v | 0xffff00ff)  1 OR of (1 << (v & 31))  2 XOR of v
//         3 atomicInc(.., 100) n times from 0  4 atomicDec(.., 50) n times from 0
//         5 unsigned max  6 unsigned min  7 atomicExch(.., 7) (everyone writes 7)
//   fres[0]: f32 sum of (v & 255) (integers, exact below 2^24 in any order)
//   lres: 0 u64 sum of (unsigned)v  1 u64 max of (u64)(i64)v  2 u64 count
//   block_max[b]: per-block max via a shared-memory atomicMax (thread 0 seeds
//                 it with INT_MIN and writes it out between barriers)
// Exercises: atom.{add,min,max,and,or,xor,inc,dec,exch,cas} on global .s32/.u32/.b32,
// atom.global.add.f32, atom.global.add.u64, atom.global.max.u64,
// atom.shared.max.s32, a CAS spin loop (divergent retries).
extern "C" __global__ void atomics(const int* in, int* ires, unsigned* ures, float* fres,
                                   unsigned long long* lres, int* block_max, int n)
{
    __shared__ int s_max;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        s_max = (int)0x80000000u;
    __syncthreads();
    if (i < n) {
        int v = in[i];
        atomicAdd(&ires[0], v);
        atomicSub(&ires[1], v);
        atomicMax(&ires[2], v);
        atomicMin(&ires[3], v);
        int cur = *(volatile int*)&ires[4];
        int assumed;
        do {
            assumed = cur;
            cur = atomicCAS(&ires[4], assumed, assumed + v);
        } while (cur != assumed);

        atomicAnd(&ures[0], (unsigned)v | 0xffff00ffu);
        atomicOr(&ures[1], 1u << (v & 31));
        atomicXor(&ures[2], (unsigned)v);
        atomicInc(&ures[3], 100u);
        atomicDec(&ures[4], 50u);
        atomicMax(&ures[5], (unsigned)v);
        atomicMin(&ures[6], (unsigned)v);
        atomicExch(&ures[7], 7u);

        atomicAdd(&fres[0], (float)(v & 255));
        atomicAdd(&lres[0], (unsigned long long)(unsigned)v);
        atomicMax(&lres[1], (unsigned long long)(long long)v);
        atomicAdd(&lres[2], 1ull);

        atomicMax(&s_max, v);
    }
    __syncthreads();
    if (threadIdx.x == 0)
        block_max[blockIdx.x] = s_max;
}
