// fp_math: f32/f64 arithmetic and math-library calls.
// Inputs (n = 256): a = X[i], b = Y[i] (|b| >= 0.25), z = Z[i] in [-3, 3],
// da = DX[i], db = DY[i]. X also holds a few large values (1e5 .. 1e7) that send
// sinf/cosf down their Payne-Hanek slow path (which uses a .local array), and DX a
// few values >= 2^31 that make sin(double) call __internal_trig_reduction_slowpathd
// (a .func returning a 16-byte aligned .param aggregate, with its own .local depot).
// Correctly-rounded results are stored as raw bits and checked exactly:
//   exact[k*n+i] (f32 bits, u32): 0 a/b  1 sqrtf(|a|)  2 fmaf(a, b, z)  3 fminf  4 fmaxf
//     5 floorf(a)  6 ceilf(a)  7 truncf(a)  8 rintf(a)  9 roundf(a)  10 __frcp_rn(b)
//     11 |a| - b  12 copysignf(a, b)  13 __fmul_rz(a, b)  14 __fadd_rd(a, b)
//     15 __fadd_ru(a, b)  16 __fmaf_rz(a, b, z)  17 __saturatef(z)  18 fmodf(a, b)
//   dexact[k*n+i] (f64 bits, u64): 0 da/db  1 sqrt(|da|)  2 fma(da, db, 0.5)  3 floor
//     4 ceil  5 trunc  6 rint  7 fmin  8 fmax  9 1.0/db  10 __dmul_rz(da, db)
//     11 __dadd_ru(da, db)  12 |da| - db
// Approximate results are checked with tolerances:
//   approx[k*n+i] (f32): 0 rsqrtf(|a|+1)  1 sinf(a)  2 cosf(a)  3 logf(|a|+0.5)  4 expf(z)
//     5 __sinf(z)  6 __cosf(z)  7 __expf(z)  8 __logf(|z|+0.5)  9 __fdividef(a, b)
//     10 exp2f(z)  11 log2f(|a|+0.5)  12 tanhf(z)
//   dapprox[k*n+i] (f64): 0 exp(-|da| * 0.01)  1 sin(da)  2 log(|da|+1)  3 rsqrt(|da|+1)
// Exercises: div.rn, div.approx (__fdividef), sqrt.rn, fma.rn/rz, mul.rz, add.rm/rp, min/max, cvt.rmi/rpi/rzi/rni
// .f32.f32 and .f64.f64, rcp.rn, abs, neg, copysign (and/or bit ops), cvt.sat,
// sin/cos/ex2/lg2/rsqrt.approx, f64 div/sqrt/fma, libdevice sequences, .local.
extern "C" __global__ void fp_math(const float* X, const float* Y, const float* Z,
                                   const double* DX, const double* DY,
                                   unsigned* exact, float* approx,
                                   unsigned long long* dexact, double* dapprox, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = X[i], b = Y[i], z = Z[i];
    unsigned* e = exact + i;
    e[0 * n] = __float_as_uint(a / b);
    e[1 * n] = __float_as_uint(sqrtf(fabsf(a)));
    e[2 * n] = __float_as_uint(fmaf(a, b, z));
    e[3 * n] = __float_as_uint(fminf(a, b));
    e[4 * n] = __float_as_uint(fmaxf(a, b));
    e[5 * n] = __float_as_uint(floorf(a));
    e[6 * n] = __float_as_uint(ceilf(a));
    e[7 * n] = __float_as_uint(truncf(a));
    e[8 * n] = __float_as_uint(rintf(a));
    e[9 * n] = __float_as_uint(roundf(a));
    e[10 * n] = __float_as_uint(__frcp_rn(b));
    e[11 * n] = __float_as_uint(fabsf(a) - b);
    e[12 * n] = __float_as_uint(copysignf(a, b));
    e[13 * n] = __float_as_uint(__fmul_rz(a, b));
    e[14 * n] = __float_as_uint(__fadd_rd(a, b));
    e[15 * n] = __float_as_uint(__fadd_ru(a, b));
    e[16 * n] = __float_as_uint(__fmaf_rz(a, b, z));
    e[17 * n] = __float_as_uint(__saturatef(z));
    e[18 * n] = __float_as_uint(fmodf(a, b));

    float* p = approx + i;
    p[0 * n] = rsqrtf(fabsf(a) + 1.0f);
    p[1 * n] = sinf(a);
    p[2 * n] = cosf(a);
    p[3 * n] = logf(fabsf(a) + 0.5f);
    p[4 * n] = expf(z);
    p[5 * n] = __sinf(z);
    p[6 * n] = __cosf(z);
    p[7 * n] = __expf(z);
    p[8 * n] = __logf(fabsf(z) + 0.5f);
    p[9 * n] = __fdividef(a, b);
    p[10 * n] = exp2f(z);
    p[11 * n] = log2f(fabsf(a) + 0.5f);
    p[12 * n] = tanhf(z);

    double da = DX[i], db = DY[i];
    unsigned long long* de = dexact + i;
    de[0 * n] = __double_as_longlong(da / db);
    de[1 * n] = __double_as_longlong(sqrt(fabs(da)));
    de[2 * n] = __double_as_longlong(fma(da, db, 0.5));
    de[3 * n] = __double_as_longlong(floor(da));
    de[4 * n] = __double_as_longlong(ceil(da));
    de[5 * n] = __double_as_longlong(trunc(da));
    de[6 * n] = __double_as_longlong(rint(da));
    de[7 * n] = __double_as_longlong(fmin(da, db));
    de[8 * n] = __double_as_longlong(fmax(da, db));
    de[9 * n] = __double_as_longlong(1.0 / db);
    de[10 * n] = __double_as_longlong(__dmul_rz(da, db));
    de[11 * n] = __double_as_longlong(__dadd_ru(da, db));
    de[12 * n] = __double_as_longlong(fabs(da) - db);

    double* dp = dapprox + i;
    dp[0 * n] = exp(-fabs(da) * 0.01);
    dp[1 * n] = sin(da);
    dp[2 * n] = log(fabs(da) + 1.0);
    dp[3 * n] = rsqrt(fabs(da) + 1.0);
}
