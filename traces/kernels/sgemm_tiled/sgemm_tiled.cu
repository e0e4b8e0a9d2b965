// sgemm_tiled: C (M x N) = A (M x K) . B (K x N), f32, with 16 x 16 shared-memory
// tiles of A and B and __syncthreads() between load and compute phases.
// M = 48, N = 64, K = 40: K is not a multiple of 16, so the last tile is
// zero-padded by the bounds-checked loads.
// Exercises: two static shared arrays, barriers inside a loop, shared-memory
// broadcast reads (As[ty][k]), fully unrolled 16-step inner loop of fma.rn.f32.
#define T 16

extern "C" __global__ void sgemm_tiled(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty;
    int col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
