// mandelbrot: escape-time iteration counts (int32) for a 64 x 48 grid covering
// [-2.25, 0.75) x [-1.5, 1.5) (x0, y0, dx, dy are exact dyadic f32 values),
// at most 64 iterations. Neighbouring threads leave the loop at very different
// iterations: heavy warp divergence and reconvergence.
// Compiled with -fmad=false, so the PTX has separate mul.rn/add.rn/sub.rn (no
// fma) and the reference (numpy float32, same operation order) matches bit for bit.
// Exercises: divergent while loop with a compound (&&) condition (and.pred),
// cvt.rn.f32.s32, setp.le.f32, f32 scalar params.
extern "C" __global__ void mandelbrot(int* out, int w, int h, float x0, float y0,
                                      float dx, float dy, int max_iter)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= w || py >= h)
        return;
    float cx = x0 + (float)px * dx;
    float cy = y0 + (float)py * dy;
    float x = 0.0f, y = 0.0f;
    int it = 0;
    while (it < max_iter && x * x + y * y <= 4.0f) {
        float xt = x * x - y * y + cx;
        y = 2.0f * x * y + cy;
        x = xt;
        ++it;
    }
    out[py * w + px] = it;
}
