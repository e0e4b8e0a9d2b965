// vecadd: c[i] = a[i] + b[i] with a bounds check.
// n = 1000 is not a multiple of the 256-thread block, so the last block has 24
// threads that fail the check and do nothing.
// Exercises: %ctaid/%ntid/%tid, mad.lo, setp + predicated branch out,
// cvta.to.global, mul.wide.s32 addressing, ld/st.global.f32, add.f32.
extern "C" __global__ void vecadd(const float* a, const float* b, float* c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
