// conversions: float <-> int and float <-> float conversions, including the
// special values (NaN, +-inf, -0, subnormals, out-of-range values that
// saturate, negatives to unsigned, ties for every rounding mode).
// One thread per element i (n = 128); every result is stored as raw bits in an
// integer buffer, so checks are exact (and NaN/inf cannot break a tolerance check).
//   f2i [k*n+i] u32 from xf (f32):  0 (int)x  1 __float2int_rn  2 _rd  3 _ru
//        4 (unsigned)x  5 __float2uint_rn  6 _rd  7 _ru
//   f2l [k*n+i] u64 from xf:        0 (long long)x  1 (unsigned long long)x
//        2 __float2ll_rn  3 __float2ull_ru
//   d2i [k*n+i] u32 from xd (f64):  0 (int)d  1 __double2int_rn  2 (unsigned)d  3 __double2int_rd
//   d2l [k*n+i] u64 from xd:        0 (long long)d  1 (unsigned long long)d
//   d2f [k*n+i] u32 (f32 bits) from xdf (f64, no NaN): 0 rn  1 rz  2 rd  3 ru
//   f2d [i]     u64 (f64 bits) of (double)xff
//   f2h [k*n+i] u16 (f16 bits) from xff (f32, no NaN): 0 rn  1 rz  2 rd  3 ru
//   h2f [i]     u32 (f32 bits) of __half2float(xh)  (xh is an f16 buffer, no NaN)
//   i2f [k*n+i] u32 (f32 bits) from xi (i32): 0 rn  1 rz  2 rd  3 ru  4 __uint2float_rn((unsigned)xi)
//   i2d [i]     u64 (f64 bits) of (double)xi
//   l2f [k*n+i] u32 (f32 bits) from xl (i64): 0 __ll2float_rn  1 __ull2float_rn((u64)xl)  2 __ll2float_rz
//   l2d [k*n+i] u64 (f64 bits) from xl: 0 __ll2double_rn  1 __ll2double_rz
// PTX semantics relied on (PTX ISA, cvt): float-to-integer conversions clamp to
// the destination range; a NaN source gives 0 when the source is not .f64 and the
// destination is not 64-bit, otherwise 1 << (bits - 1) (0x80000000 for f64 -> 32-bit,
// 0x8000000000000000 for any -> 64-bit). Subnormals are not flushed (no .ftz).
// Exercises: cvt.{rni,rzi,rmi,rpi}.{s32,u32,s64,u64}.{f32,f64},
// cvt.{rn,rz,rm,rp}.f32.f64, cvt.f64.f32, cvt.{rn,rz,rm,rp}.f16.f32, cvt.f32.f16,
// cvt.{rn,rz,rm,rp}.f32.{s32,u32}, cvt.rn.f64.s32, cvt.{rn,rz}.f32/f64.{s64,u64},
// mov.b32/b64 bit casts, many (20) kernel params, st.global.u16.
#include <cuda_fp16.h>

extern "C" __global__ void conversions(
    const float* xf, const double* xd, const double* xdf, const float* xff,
    const __half* xh, const int* xi, const long long* xl,
    unsigned* f2i, unsigned long long* f2l, unsigned* d2i, unsigned long long* d2l,
    unsigned* d2f, unsigned long long* f2d, unsigned short* f2h, unsigned* h2f,
    unsigned* i2f, unsigned long long* i2d, unsigned* l2f, unsigned long long* l2d, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;

    float x = xf[i];
    f2i[0 * n + i] = (unsigned)(int)x;
    f2i[1 * n + i] = (unsigned)__float2int_rn(x);
    f2i[2 * n + i] = (unsigned)__float2int_rd(x);
    f2i[3 * n + i] = (unsigned)__float2int_ru(x);
    f2i[4 * n + i] = (unsigned)x;
    f2i[5 * n + i] = __float2uint_rn(x);
    f2i[6 * n + i] = __float2uint_rd(x);
    f2i[7 * n + i] = __float2uint_ru(x);

    f2l[0 * n + i] = (unsigned long long)(long long)x;
    f2l[1 * n + i] = (unsigned long long)x;
    f2l[2 * n + i] = (unsigned long long)__float2ll_rn(x);
    f2l[3 * n + i] = __float2ull_ru(x);

    double d = xd[i];
    d2i[0 * n + i] = (unsigned)(int)d;
    d2i[1 * n + i] = (unsigned)__double2int_rn(d);
    d2i[2 * n + i] = (unsigned)d;
    d2i[3 * n + i] = (unsigned)__double2int_rd(d);
    d2l[0 * n + i] = (unsigned long long)(long long)d;
    d2l[1 * n + i] = (unsigned long long)d;

    double df = xdf[i];
    d2f[0 * n + i] = __float_as_uint((float)df);
    d2f[1 * n + i] = __float_as_uint(__double2float_rz(df));
    d2f[2 * n + i] = __float_as_uint(__double2float_rd(df));
    d2f[3 * n + i] = __float_as_uint(__double2float_ru(df));

    float ff = xff[i];
    f2d[i] = (unsigned long long)__double_as_longlong((double)ff);
    f2h[0 * n + i] = __half_as_ushort(__float2half_rn(ff));
    f2h[1 * n + i] = __half_as_ushort(__float2half_rz(ff));
    f2h[2 * n + i] = __half_as_ushort(__float2half_rd(ff));
    f2h[3 * n + i] = __half_as_ushort(__float2half_ru(ff));

    h2f[i] = __float_as_uint(__half2float(xh[i]));

    int xi_ = xi[i];
    i2f[0 * n + i] = __float_as_uint(__int2float_rn(xi_));
    i2f[1 * n + i] = __float_as_uint(__int2float_rz(xi_));
    i2f[2 * n + i] = __float_as_uint(__int2float_rd(xi_));
    i2f[3 * n + i] = __float_as_uint(__int2float_ru(xi_));
    i2f[4 * n + i] = __float_as_uint(__uint2float_rn((unsigned)xi_));
    i2d[i] = (unsigned long long)__double_as_longlong((double)xi_);

    long long xl_ = xl[i];
    l2f[0 * n + i] = __float_as_uint(__ll2float_rn(xl_));
    l2f[1 * n + i] = __float_as_uint(__ull2float_rn((unsigned long long)xl_));
    l2f[2 * n + i] = __float_as_uint(__ll2float_rz(xl_));
    l2d[0 * n + i] = (unsigned long long)__double_as_longlong(__ll2double_rn(xl_));
    l2d[1 * n + i] = (unsigned long long)__double_as_longlong(__ll2double_rz(xl_));
}
