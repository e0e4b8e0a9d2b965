// device_func: two __noinline__ device functions called per thread.
//   hash3(a, b, c):    three u32 params by value, u32 return (integer mixing with
//                      rotates, exact);
//   dotn(p, q, k):     two pointer params + an int, f32 return: a k-term dot
//                      product of pts[3i..3i+k) with dir[0..k); k = 3 comes from a
//                      kernel param, so NVVM can neither constant-fold it nor turn
//                      the pointers into by-value float params (it does that to a
//                      fixed-size dot3(p, q)), and the callee loads through the
//                      pointers it is given.
// NVRTC keeps them as separate .func with .param parameter/return space, so the
// PTX has `{ .param .b32 param0; st.param.b32 [param0+0], %r; ... call.uni
// (retval0), _Z5hash3jjj, (param0, param1, param2); ld.param.b32 %r, [retval0+0]; }`
// sequences.
// Exercises: .func, call.uni, .param declarations inside { } call blocks, ret from
// a .func, a loop and pointer arithmetic inside a callee.
__device__ __noinline__ unsigned hash3(unsigned a, unsigned b, unsigned c)
{
    a -= c; a ^= (c << 4) | (c >> 28); c += b;
    b -= a; b ^= (a << 6) | (a >> 26); a += c;
    c -= b; c ^= (b << 8) | (b >> 24); b += a;
    return a ^ b ^ c;
}

__device__ __noinline__ float dotn(const float* p, const float* q, int k)
{
    float s = 0.0f;
    for (int j = 0; j < k; ++j)
        s += p[j] * q[j];
    return s;
}

extern "C" __global__ void device_func(const float* pts, const float* dir, unsigned* hashes,
                                       float* dots, unsigned seed, int dim, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    hashes[i] = hash3((unsigned)i, seed, blockIdx.x);
    dots[i] = dotn(pts + dim * i, dir, dim);
}
