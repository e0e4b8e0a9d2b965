// softmax: row-wise softmax of a 32 x 200 f32 matrix, one 128-thread block per
// row. Each thread strides over the row (2 columns for t < 72, else 1), then a
// shared-memory tree reduction finds the row max, a second one the sum of
// exp(x - max), and every element is written as exp(x - max) / sum.
// expf() is the accurate libdevice version (range reduction with fma +
// ex2.approx.ftz.f32 + scaling), not __expf.
// Exercises: max.f32, ex2.approx, rcp/div.rn.f32, two reductions reusing one
// shared array (with the barrier needed between reading red[0] and reuse).
#define BLOCK 128

extern "C" __global__ void softmax(const float* in, float* out, int cols)
{
    __shared__ float red[BLOCK];
    const float* x = in + blockIdx.x * cols;
    float* y = out + blockIdx.x * cols;
    int t = threadIdx.x;

    float m = __int_as_float(0xff800000);  // -inf
    for (int c = t; c < cols; c += BLOCK)
        m = fmaxf(m, x[c]);
    red[t] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s)
            red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int c = t; c < cols; c += BLOCK)
        sum += expf(x[c] - m);
    red[t] = sum;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s)
            red[t] += red[t + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int c = t; c < cols; c += BLOCK)
        y[c] = expf(x[c] - m) * inv;
}
