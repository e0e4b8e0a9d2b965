// ws_gemm_nvrtc: a warp-specialised Hopper GEMM written the way public H100 GEMMs are, compiled
// by NVRTC for compute_90a (traces/tensor/gen_ws_nvrtc.py), to run third-party style code on
// gpusim rather than the project's own hand-written PTX.
//
//   C (M x N, f32, row-major) = A (M x K, bf16, row-major) . B^T, B given N x K (bf16,
//   row-major): both operands K-major, as wgmma reads them without transposition.
//
// Structure (one 128 x 128 tile of C per CTA, 384 threads):
//   - the mbarriers are static `__shared__` arrays declared before the dynamic window
//     (`extern __shared__ __align__(128) uint8_t smem[]`), so the window starts after 48
//     (STAGES = 3) or 80 (STAGES = 5) bytes of barriers, rounded up to its 128-byte alignment;
//   - warpgroup 0 is the producer (`setmaxnreg.dec 40`): one thread arms the stage's `full`
//     barrier with `mbarrier.arrive.expect_tx` and issues the TMA tensor loads
//     (cp.async.bulk.tensor.2d ... mbarrier::complete_tx::bytes, 128B swizzle) of the A tile
//     (128 rows x 64 k) and the B tile (128 rows x 64 k) into a ring of STAGES stages;
//   - warpgroups 1 and 2 are consumers (`setmaxnreg.inc 232`), 64 rows each: per k-tile they
//     wait on `full`, run 4 wgmma.mma_async m64n128k16 whose descriptors come from
//     `make_smem_desc` (the shared address of the operand, 128B swizzle, SBO 1024, advanced
//     32 bytes per k-step), commit, wait, and release the stage on `empty`;
//   - epilogue: the accumulators go straight from registers to global memory.
//
// With -DB_BY_THREADS the producer warpgroup's 128 threads copy the B tile themselves
// (ld.global / st.shared) in a 128B-swizzle pattern that starts at the B buffer, wherever that
// lies, and the B descriptors carry the matrix base offset (pattern start >> 7) & 7 that the
// PTX ISA prescribes for a pattern not starting on a 1024-byte boundary (§9.7.15.5.1.2.2);
// A still comes by TMA (its pattern is that of the absolute shared address: base offset 0).

#include <cuda_bf16.h>

// NVRTC has no <stdint.h> or <cuda.h>.
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;

// The driver's opaque 128-byte, 64-byte aligned tensor map.
typedef struct CUtensorMap_st {
    alignas(64) unsigned long long opaque[16];
} CUtensorMap;

#ifndef STAGES
#define STAGES 3
#endif

typedef __nv_bfloat16 bf16;

enum : int {
    BM = 128,
    BN = 128,
    BK = 64,
    WGMMA_M = 64,
    WGMMA_K = 16,
    CONSUMERS = 2,
    THREADS = 128 * (CONSUMERS + 1),
};

struct SMem {
    alignas(128) bf16 A[BM * BK * STAGES];
    alignas(128) bf16 B[BN * BK * STAGES];
};

__device__ static inline uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ static inline uint64_t desc_encode(uint64_t x) { return (x & 0x3FFFF) >> 4; }

// Matrix descriptor of a K-major operand with 128B swizzle: 128-byte rows, 8-row core-matrix
// groups 1024 bytes apart (SBO); LBO is not used by swizzled K-major layouts (1 by convention).
__device__ static inline uint64_t make_smem_desc(const bf16* p, uint32_t base_offset) {
    uint64_t d = desc_encode(smem_u32(p));
    d |= desc_encode(16) << 16;
    d |= desc_encode(1024) << 32;
    d |= (uint64_t)(base_offset & 7) << 49;
    d |= 1ull << 62;
    return d;
}

__device__ static inline void mbar_init(uint64_t* bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count));
}

__device__ static inline void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
}

__device__ static inline void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

__device__ static inline void mbar_wait(uint64_t* bar, uint32_t parity) {
    asm volatile(
        "{\n"
        ".reg .pred P1;\n"
        "WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
        "@P1 bra.uni DONE;\n"
        "bra.uni WAIT;\n"
        "DONE:\n"
        "}\n" ::"r"(smem_u32(bar)),
        "r"(parity)
        : "memory");
}

__device__ static inline void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0,
                                          int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(smem_u32(dst)),
        "l"(map), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
}

__device__ static inline void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ static inline void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
__device__ static inline void wgmma_wait0() {
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
}

__device__ static inline void wgmma_m64n128k16(float d[64], uint64_t da, uint64_t db) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n"
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
          "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
          "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
          "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]),
          "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]),
          "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]),
          "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]),
          "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db), "n"(1));
}

#ifdef B_BY_THREADS
// The producer warpgroup copies B rows n0.. n0+127, k columns k0 .. k0+63 into `dst` in the
// 128B-swizzle pattern counted from `dst`: 16-byte chunk c of row r at r * 128 + (c ^ r % 8) * 16.
// Elements past N or K are zero, as TMA's out-of-bound fill would give.
__device__ static inline void copy_b_tile(bf16* dst, const bf16* B, int N, int K, int n0, int k0,
                                          int tid) {
    for (int i = tid; i < BN * (BK / 8); i += 128) {
        int r = i / (BK / 8), c = i % (BK / 8);
        int n = n0 + r, k = k0 + 8 * c;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (n < N && k + 8 <= K) {
            v = *reinterpret_cast<const uint4*>(B + (size_t)n * K + k);
        } else if (n < N) {
            uint16_t h[8];
            for (int e = 0; e < 8; ++e)
                h[e] = k + e < K ? reinterpret_cast<const uint16_t*>(B)[(size_t)n * K + k + e] : 0;
            v = make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16,
                           h[6] | h[7] << 16);
        }
        *reinterpret_cast<uint4*>(reinterpret_cast<uint8_t*>(dst) + r * 128 + ((c ^ (r % 8)) * 16)) = v;
    }
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS)
    ws_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
            const bf16* B, float* C, int M, int N, int K) {
    __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
    extern __shared__ __align__(128) uint8_t smem[];
    SMem& s = *reinterpret_cast<SMem*>(smem);

    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;
#ifdef B_BY_THREADS
    const uint32_t full_arrivals = 1 + 128;
    const uint32_t tx_bytes = BM * BK * sizeof(bf16);
#else
    const uint32_t full_arrivals = 1;
    const uint32_t tx_bytes = (BM + BN) * BK * sizeof(bf16);
    (void)B;
#endif

    if (threadIdx.x == 0) {
        for (int i = 0; i < STAGES; ++i) {
            mbar_init(&full[i], full_arrivals);
            mbar_init(&empty[i], CONSUMERS * 128);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        for (int kt = 0, q = 0, phase = 0; kt < ktiles; ++kt) {
#ifdef B_BY_THREADS
            mbar_wait(&empty[q], phase);
            if (tid == 0) {
                mbar_expect_tx(&full[q], tx_bytes);
                tma_load_2d(&s.A[q * BM * BK], &tmA, &full[q], kt * BK, m0);
            }
            copy_b_tile(&s.B[q * BN * BK], B, N, K, n0, kt * BK, tid);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            mbar_arrive(&full[q]);
#else
            if (tid == 0) {
                mbar_wait(&empty[q], phase);
                mbar_expect_tx(&full[q], tx_bytes);
                tma_load_2d(&s.A[q * BM * BK], &tmA, &full[q], kt * BK, m0);
                tma_load_2d(&s.B[q * BN * BK], &tmB, &full[q], kt * BK, n0);
            }
#endif
            if (++q == STAGES) {
                q = 0;
                phase ^= 1;
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        for (int i = 0; i < STAGES; ++i) mbar_arrive(&empty[i]);
        const int c = wg - 1;
        float d[64];
#pragma unroll
        for (int i = 0; i < 64; ++i) d[i] = 0.0f;
        for (int kt = 0, q = 0, phase = 0; kt < ktiles; ++kt) {
            mbar_wait(&full[q], phase);
            const bf16* a = &s.A[q * BM * BK + c * WGMMA_M * BK];
            const bf16* b = &s.B[q * BN * BK];
#ifdef B_BY_THREADS
            // The pattern of B starts at the stage's B buffer (PTX ISA: base offset =
            // (pattern start address >> 7) & 7 when that is not a 1024-byte boundary).
            const uint32_t b_base_offset = (smem_u32(b) >> 7) & 7;
#else
            const uint32_t b_base_offset = 0;
#endif
            wgmma_fence();
#pragma unroll
            for (int k = 0; k < BK / WGMMA_K; ++k)
                wgmma_m64n128k16(d, make_smem_desc(a + k * WGMMA_K, 0),
                                 make_smem_desc(b + k * WGMMA_K, b_base_offset));
            wgmma_commit();
            wgmma_wait0();
            mbar_arrive(&empty[q]);
            if (++q == STAGES) {
                q = 0;
                phase ^= 1;
            }
        }
        // m64nNk16 accumulators: value v of lane l of warp w is D[16w + l/4 + 8((v/2)%2)]
        // [8(v/4) + 2(l%4) + v%2].
        const int warp = tid / 32, lane = tid % 32;
        const int row0 = m0 + c * WGMMA_M + warp * 16 + lane / 4;
#pragma unroll
        for (int v = 0; v < 64; ++v) {
            int row = row0 + 8 * ((v >> 1) & 1);
            int col = n0 + 8 * (v >> 2) + 2 * (lane % 4) + (v & 1);
            if (row < M && col < N) C[(size_t)row * N + col] = d[v];
        }
    }
}
