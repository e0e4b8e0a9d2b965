// sgemm_simt: C (M x N) = alpha * A (M x K) . B (K x N) + beta * C, f32, row-major,
// on the SIMT pipes (fma.rn.f32), no tensor cores.
//
// CTA tile 128 x 128 x 8, 256 threads (16 x 16); each thread owns an 8 x 8 block of C held
// in registers, split as two 4-row x two 4-column groups (rows ty*4 and 64 + ty*4, columns
// tx*4 and 64 + tx*4) so the float4 shared reads of a warp hit distinct banks.
// Shared memory is double buffered: while the CTA computes on one BK = 8 slice of A and B,
// each thread holds the next slice's 4 + 4 elements in registers and stores them into the
// other buffer before the single __syncthreads() of the iteration.
// A is stored transposed in shared memory (As[k][m], rows padded to 132 floats so the
// transposing stores are conflict-free); B as Bs[k][n].
// Any M, N, K >= 1: global loads outside A or B read 0, stores outside C are skipped.
#define BM 128
#define BN 128
#define BK 8
#define APAD 4

extern "C" __global__ void __launch_bounds__(256)
sgemm_simt(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
           int M, int N, int K, float alpha, float beta)
{
    __shared__ __align__(16) float As[2][BK][BM + APAD];
    __shared__ __align__(16) float Bs[2][BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Global -> shared mapping: A row (tid / 2), columns (tid % 2) * 4 .. + 4;
    // B row (tid / 32), columns (tid % 32) * 4 .. + 4.
    const int a_row = tid / 2, a_col = (tid % 2) * 4;
    const int b_row = tid / 32, b_col = (tid % 32) * 4;
    const bool a_row_ok = m0 + a_row < M;
    const float* a_ptr = A + (size_t)(m0 + a_row) * K + a_col;
    const float* b_ptr = B + (size_t)b_row * N + n0 + b_col;

    float a_next[4], b_next[4];
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;

    // Load the first slice.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        a_next[i] = (a_row_ok && a_col + i < K) ? a_ptr[i] : 0.0f;
        b_next[i] = (b_row < K && n0 + b_col + i < N) ? b_ptr[i] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
        As[0][a_col + i][a_row] = a_next[i];
    *(float4*)&Bs[0][b_row][b_col] = make_float4(b_next[0], b_next[1], b_next[2], b_next[3]);
    __syncthreads();

    const int k_tiles = (K + BK - 1) / BK;
    int cur = 0;
    for (int kt = 0; kt < k_tiles; ++kt) {
        const bool more = kt + 1 < k_tiles;
        if (more) {
            const int k1 = (kt + 1) * BK;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                a_next[i] = (a_row_ok && k1 + a_col + i < K) ? a_ptr[k1 + i] : 0.0f;
                b_next[i] = (k1 + b_row < K && n0 + b_col + i < N)
                                ? b_ptr[(size_t)k1 * N + i] : 0.0f;
            }
        }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[8], b[8];
            *(float4*)&a[0] = *(const float4*)&As[cur][k][ty * 4];
            *(float4*)&a[4] = *(const float4*)&As[cur][k][64 + ty * 4];
            *(float4*)&b[0] = *(const float4*)&Bs[cur][k][tx * 4];
            *(float4*)&b[4] = *(const float4*)&Bs[cur][k][64 + tx * 4];
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) {
            const int nxt = cur ^ 1;
#pragma unroll
            for (int i = 0; i < 4; ++i)
                As[nxt][a_col + i][a_row] = a_next[i];
            *(float4*)&Bs[nxt][b_row][b_col] =
                make_float4(b_next[0], b_next[1], b_next[2], b_next[3]);
            __syncthreads();
            cur = nxt;
        }
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
        if (row >= M)
            continue;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int col = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
            if (col < N) {
                float* c = C + (size_t)row * N + col;
                *c = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
            }
        }
    }
}
