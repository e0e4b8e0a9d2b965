// bitonic_sort: sorts each 1024-key int32 segment ascending inside one block,
// in shared memory. 512 threads per block, each owning one compare-exchange
// pair per step: i = 2t - (t & (j-1)) and partner i + j; the direction is
// ascending when (i & k) == 0. One __syncthreads() per (k, j) step: 55 steps.
// Grid 2: block b sorts keys[1024 b .. 1024 b + 1023] independently.
// Keys include negatives and duplicates (signed comparison).
// Exercises: nested log loops with barriers, xor/and index arithmetic,
// divergent conditional swap, 2 loads + 2 stores per thread per step.
#define N 1024

extern "C" __global__ void bitonic_sort(int* keys)
{
    __shared__ int s[N];
    int t = threadIdx.x;
    int* seg = keys + blockIdx.x * N;
    s[t] = seg[t];
    s[t + N / 2] = seg[t + N / 2];
    __syncthreads();
    for (int k = 2; k <= N; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            int i = 2 * t - (t & (j - 1));
            int p = i + j;
            int a = s[i], b = s[p];
            bool up = (i & k) == 0;
            if ((a > b) == up) {
                s[i] = b;
                s[p] = a;
            }
            __syncthreads();
        }
    }
    seg[t] = s[t];
    seg[t + N / 2] = s[t + N / 2];
}
