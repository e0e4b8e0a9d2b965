// spmv_csr: y = A . x for a 500 x 400 sparse f32 matrix in CSR form, one row per
// thread. Rows have 0..16 non-zeros (some rows are empty), so the inner loop
// trip count differs per thread (divergence) and x is gathered indirectly.
// Exercises: data-dependent loop bounds, indirect (gather) loads, first param a
// scalar .u32.
extern "C" __global__ void spmv_csr(int nrows, const int* row_ptr, const int* col_idx,
                                    const float* vals, const float* x, float* y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < nrows) {
        float sum = 0.0f;
        for (int j = row_ptr[r]; j < row_ptr[r + 1]; ++j)
            sum += vals[j] * x[col_idx[j]];
        y[r] = sum;
    }
}
