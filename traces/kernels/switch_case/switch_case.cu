// switch_case: two switch statements on threadIdx-derived values.
//   switch_dense : 8 dense cases (0..7) + default on sel = (5*tid + (x & 3)) % 9.
//                  Built with --jump-table-density=10, NVRTC lowers it to a jump
//                  table: a `$L_brx_0: .branchtargets L0, ..., L7;` directive and
//                  `brx.idx %r, $L_brx_0;` (guarded by a range check for default).
//   switch_sparse: 6 sparse case values (1, 10, 100, 1000, 5000, 65536) + default;
//                  no jump table, lowered to a compare/branch tree.
// Every lane of a warp takes a different case: heavy divergence.
// Exercises: brx.idx + .branchtargets, multi-way divergence and reconvergence.
extern "C" __global__ void switch_dense(const int* in, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = in[i];
    int r;
    switch ((threadIdx.x * 5 + (x & 3)) % 9) {
    case 0: r = x + 17; break;
    case 1: r = x * 3 - 1; break;
    case 2: r = x ^ 0x5a5a; break;
    case 3: r = (x << 3) | 1; break;
    case 4: r = x / 7; break;
    case 5: r = -x; break;
    case 6: r = x & 0xff0; break;
    case 7: r = x * x; break;
    default: r = 12345; break;
    }
    out[i] = r;
}

extern "C" __global__ void switch_sparse(const int* in, int* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int x = in[i];
    int key = 1 << (threadIdx.x % 17);   // 1, 2, 4, ..., 65536
    if (threadIdx.x % 17 == 3) key = 10;
    if (threadIdx.x % 17 == 5) key = 100;
    if (threadIdx.x % 17 == 9) key = 1000;
    if (threadIdx.x % 17 == 11) key = 5000;
    int r;
    switch (key) {
    case 1: r = x - 1; break;
    case 10: r = x * 10; break;
    case 100: r = x >> 2; break;
    case 1000: r = ~x; break;
    case 5000: r = x % 5000; break;
    case 65536: r = x | 0x10000; break;
    default: r = key; break;
    }
    out[i] = r;
}
