// hgemm_mma_multistage: C (M x N, f32) = A (M x K, bf16) . B (K x N, bf16), row-major,
// on the tensor cores with f32 accumulation.
//
// CTA tile 128 x 128 x 32, 8 warps (256 threads) as 2 (M) x 4 (N); each warp computes a
// 64 x 32 block of C as 4 x 4 mma.sync.aligned.m16n8k16 tiles (64 f32 accumulators per
// thread), two k16 steps per 32-wide K slice.
// Global -> shared: a 3-stage cp.async.cg pipeline of 16-byte copies (commit_group per
// stage, wait_group STAGES - 2 before each slice), 16 KiB per stage in dynamic shared memory
// (48 KiB, so a CTA fits every shipped config). Shared -> registers: ldmatrix.x4 for A (row-major 16 x 16 fragments) and
// ldmatrix.x4.trans for B (row-major K x N, transposed into the col-major B fragments).
// Both tiles are XOR-swizzled in 16-byte chunks (A: chunk ^ ((row >> 1) & 3) in a 64-byte
// row; B: chunk ^ (row & 7) in a 256-byte row) so that ldmatrix and the copies are free of
// bank conflicts.
// Sizes: any M >= 1; N and K multiples of 8 (16-byte rows). Copies of chunks outside A or B
// use the cp.async src-size operand 0 (zero fill); stores outside C are skipped.
#include <cuda_bf16.h>

#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define THREADS 256
#define A_STAGE_BYTES (BM * BK * 2)
#define B_STAGE_BYTES (BK * BN * 2)
#define STAGE_BYTES (A_STAGE_BYTES + B_STAGE_BYTES)

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_bytes));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Issue the copies of K slice `kt` into stage `stage`: 512 A chunks and 512 B chunks of
// 16 bytes, two of each per thread.
__device__ __forceinline__ void load_slice(unsigned smem, const __nv_bfloat16* A,
                                           const __nv_bfloat16* B, int M, int N, int K,
                                           int m0, int n0, int kt, int stage, int tid)
{
    const unsigned a_base = smem + stage * STAGE_BYTES;
    const unsigned b_base = a_base + A_STAGE_BYTES;
    const int k0 = kt * BK;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int c = tid + i * THREADS;
        const int row = c / 4, kc = c % 4;
        const int gm = m0 + row, gk = k0 + kc * 8;
        const bool ok = gm < M && gk < K;
        const __nv_bfloat16* src = ok ? A + (size_t)gm * K + gk : A;
        cp_async16(a_base + row * 64 + ((kc ^ ((row >> 1) & 3)) * 16), src, ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int c = tid + i * THREADS;
        const int row = c / 16, nc = c % 16;
        const int gk = k0 + row, gn = n0 + nc * 8;
        const bool ok = gk < K && gn < N;
        const __nv_bfloat16* src = ok ? B + (size_t)gk * N + gn : B;
        cp_async16(b_base + row * 256 + ((nc ^ (row & 7)) * 16), src, ok ? 16 : 0);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
hgemm_mma_multistage(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                     float* __restrict__ C, int M, int N, int K)
{
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const unsigned smem = smem_addr(smem_raw);

    const int tid = threadIdx.x;
    const int lane = tid % 32, warp = tid / 32;
    const int warp_m = warp / 4, warp_n = warp % 4;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int k_tiles = (K + BK - 1) / BK;

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                acc[i][j][r] = 0.0f;

    // Prologue: STAGES - 1 slices in flight.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles)
            load_slice(smem, A, B, M, N, K, m0, n0, s, s, tid);
        cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
        // Slice kt has landed (at most STAGES - 2 younger groups pending); the barrier also
        // tells every warp that the stage refilled below is no longer read.
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const int pre = kt + STAGES - 1;
        if (pre < k_tiles)
            load_slice(smem, A, B, M, N, K, m0, n0, pre, pre % STAGES, tid);
        cp_async_commit();

        const unsigned a_base = smem + (kt % STAGES) * STAGE_BYTES;
        const unsigned b_base = a_base + A_STAGE_BYTES;
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            unsigned af[4][4], bf[2][4];
#pragma unroll
            for (int mi = 0; mi < 4; ++mi) {
                const int row = warp_m * 64 + mi * 16 + (lane % 16);
                const int kc = kk * 2 + lane / 16;
                ldmatrix_x4(af[mi], a_base + row * 64 + ((kc ^ ((row >> 1) & 3)) * 16));
            }
#pragma unroll
            for (int nj = 0; nj < 2; ++nj) {
                const int krow = kk * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
                const int nc = (warp_n * 32 + nj * 16) / 8 + lane / 16;
                ldmatrix_x4_trans(bf[nj], b_base + krow * 256 + ((nc ^ (krow & 7)) * 16));
            }
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int ni = 0; ni < 4; ++ni)
                    mma_bf16(acc[mi][ni], af[mi], bf[ni / 2][(ni % 2) * 2],
                             bf[ni / 2][(ni % 2) * 2 + 1]);
        }
    }
    cp_async_wait<0>();

    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int col = n0 + warp_n * 32 + ni * 8 + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + warp_m * 64 + mi * 16 + g + h * 8;
                if (row < M && col < N)
                    *(float2*)&C[(size_t)row * N + col] =
                        make_float2(acc[mi][ni][2 * h], acc[mi][ni][2 * h + 1]);
            }
        }
    }
}
