// sgemm_naive: C (M x N) = A (M x K) . B (K x N), f32, one thread per output,
// inner product loop straight from global memory. 64 x 64 x 64, block 16 x 16.
// Exercises: 2-D indexing, a counted loop (unrolled by NVRTC), fma.rn.f32
// accumulation, strided global loads.
extern "C" __global__ void sgemm_naive(const float* A, const float* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
