// stencil: 2-D 5-point stencil on a 64 x 48 f32 image,
//   out = c0 * in[y][x] + c1 * (in[y][x-1] + in[y][x+1] + in[y-1][x] + in[y+1][x]),
// with clamp-to-edge boundary handling (neighbour indices are clamped).
// Exercises: 2-D grid (4 x 6 blocks of 16 x 8), early return for out-of-range
// threads, selp/min/max style index clamping, f32 scalar params.
extern "C" __global__ void stencil(const float* in, float* out, int w, int h, float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    int xm = x > 0 ? x - 1 : 0;
    int xp = x < w - 1 ? x + 1 : w - 1;
    int ym = y > 0 ? y - 1 : 0;
    int yp = y < h - 1 ? y + 1 : h - 1;
    float c = in[y * w + x];
    float s = in[y * w + xm] + in[y * w + xp] + in[ym * w + x] + in[yp * w + x];
    out[y * w + x] = c0 * c + c1 * s;
}
