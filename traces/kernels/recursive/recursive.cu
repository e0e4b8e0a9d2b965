// recursive: genuinely recursive device functions.
//   fib(n)          : naive doubly-recursive Fibonacci, n = i % 11 (<= 10).
//   fill_rec(a, n)  : writes a[n-1] = n*n, then recurses on n-1, returning
//                     n*n - 2*fill_rec(a, n-1) (not an associative accumulator,
//                     so the compiler cannot turn it into a loop).
// The kernel passes a per-thread local array `local[10]` to fill_rec, so it lives
// in the .local stack frame (__local_depot, %SP/%SPL) and is addressed
// generically from the callee; picks[i] reads one element back.
// Exercises: recursive call.uni, call stack depth up to ~10, .local depot,
// cvta.local, generic st/ld to local memory, per-thread divergent recursion depth.
__device__ __noinline__ int fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

__device__ __noinline__ int fill_rec(int* a, int n)
{
    if (n == 0)
        return 0;
    a[n - 1] = n * n;
    return n * n - 2 * fill_rec(a, n - 1);
}

extern "C" __global__ void recursive(int* fibs, int* sums, int* picks, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fibs[i] = fib(i % 11);
    int local[10];
    int m = 1 + i % 10;
    sums[i] = fill_rec(local, m);
    picks[i] = local[(i * 7) % m];
}
