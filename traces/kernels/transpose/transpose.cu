// transpose: out (width x height) = transpose of in (height x width), f32,
// through a 32 x 33 shared tile (the +1 column of padding avoids bank conflicts).
// Block 32 x 8: each thread moves 4 elements (rows j, j+8, j+16, j+24).
// width = 80, height = 50 are not multiples of 32, so edge tiles are partial.
// Exercises: 2-D grid/block (%ctaid.y, %tid.y), 2-D shared array indexing with a
// non-power-of-two row pitch, bounds checks in both phases, bar.sync.
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose(const float* in, float* out, int width, int height)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < width && y + j < height)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < height && y + j < width)
            out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
