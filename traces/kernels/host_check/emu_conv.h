// Conversion intrinsics for the `conversions` kernel under host_check.py, written
// independently of build.py's Python reference: PTX cvt float->int semantics
// (clamp to the destination range; NaN -> 0 for f32 -> <=32-bit, else
// 1 << (bits-1)), directed rounding through fesetround, f16 through _Float16.
#pragma once
typedef _Float16 __half;
template <class T> static inline T barrier_(T v) { asm volatile("" : "+m"(v)); return v; }
static inline double rnd_(double x, int mode) {
    switch (mode) { case 0: return std::nearbyint(x); case 1: return std::trunc(x); case 2: return std::floor(x); default: return std::ceil(x); }
}
// mode 0 rni 1 rzi 2 rmi 3 rpi
static inline unsigned long long f2i_(double x, int mode, int bits, bool sgn, bool src64) {
    unsigned long long mask = bits == 64 ? ~0ull : ((1ull << bits) - 1);
    if (std::isnan(x)) return (!src64 && bits < 64) ? 0ull : (1ull << (bits - 1));
    long double lo = sgn ? -std::ldexp(1.0L, bits - 1) : 0.0L;
    long double hi = sgn ? std::ldexp(1.0L, bits - 1) - 1 : std::ldexp(1.0L, bits) - 1;
    long double r = std::isinf(x) ? (long double)x : (long double)rnd_(x, mode);
    if (r < lo) r = lo;
    if (r > hi) r = hi;
    if (r < 0) return (unsigned long long)(long long)r & mask;
    return (unsigned long long)r & mask;
}
static inline int __float2int_rn(float x) { return (int)f2i_(x, 0, 32, true, false); }
static inline int __float2int_rz(float x) { return (int)f2i_(x, 1, 32, true, false); }
static inline int __float2int_rd(float x) { return (int)f2i_(x, 2, 32, true, false); }
static inline int __float2int_ru(float x) { return (int)f2i_(x, 3, 32, true, false); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)f2i_(x, 0, 32, false, false); }
static inline unsigned __float2uint_rz(float x) { return (unsigned)f2i_(x, 1, 32, false, false); }
static inline unsigned __float2uint_rd(float x) { return (unsigned)f2i_(x, 2, 32, false, false); }
static inline unsigned __float2uint_ru(float x) { return (unsigned)f2i_(x, 3, 32, false, false); }
static inline long long __float2ll_rz(float x) { return (long long)f2i_(x, 1, 64, true, false); }
static inline long long __float2ll_rn(float x) { return (long long)f2i_(x, 0, 64, true, false); }
static inline unsigned long long __float2ull_rz(float x) { return f2i_(x, 1, 64, false, false); }
static inline unsigned long long __float2ull_ru(float x) { return f2i_(x, 3, 64, false, false); }
static inline int __double2int_rz(double x) { return (int)f2i_(x, 1, 32, true, true); }
static inline int __double2int_rn(double x) { return (int)f2i_(x, 0, 32, true, true); }
static inline int __double2int_rd(double x) { return (int)f2i_(x, 2, 32, true, true); }
static inline unsigned __double2uint_rz(double x) { return (unsigned)f2i_(x, 1, 32, false, true); }
static inline long long __double2ll_rz(double x) { return (long long)f2i_(x, 1, 64, true, true); }
static inline unsigned long long __double2ull_rz(double x) { return f2i_(x, 1, 64, false, true); }
#define MODED(name, T, R, MODE, EXPR) static inline R name(T v) { int old = fegetround(); fesetround(MODE); asm volatile("" ::: "memory"); T x = barrier_(v); R r = EXPR; r = barrier_(r); fesetround(old); return r; }
MODED(__double2float_rn, double, float, FE_TONEAREST, (float)x)
MODED(__double2float_rz, double, float, FE_TOWARDZERO, (float)x)
MODED(__double2float_rd, double, float, FE_DOWNWARD, (float)x)
MODED(__double2float_ru, double, float, FE_UPWARD, (float)x)
MODED(__float2half_rn, float, _Float16, FE_TONEAREST, (_Float16)x)
MODED(__float2half_rz, float, _Float16, FE_TOWARDZERO, (_Float16)x)
MODED(__float2half_rd, float, _Float16, FE_DOWNWARD, (_Float16)x)
MODED(__float2half_ru, float, _Float16, FE_UPWARD, (_Float16)x)
MODED(__int2float_rn, int, float, FE_TONEAREST, (float)x)
MODED(__int2float_rz, int, float, FE_TOWARDZERO, (float)x)
MODED(__int2float_rd, int, float, FE_DOWNWARD, (float)x)
MODED(__int2float_ru, int, float, FE_UPWARD, (float)x)
MODED(__uint2float_rn, unsigned, float, FE_TONEAREST, (float)x)
MODED(__ll2float_rn, long long, float, FE_TONEAREST, (float)x)
MODED(__ll2float_rz, long long, float, FE_TOWARDZERO, (float)x)
MODED(__ull2float_rn, unsigned long long, float, FE_TONEAREST, (float)x)
MODED(__ll2double_rn, long long, double, FE_TONEAREST, (double)x)
MODED(__ll2double_rz, long long, double, FE_TOWARDZERO, (double)x)
static inline unsigned short __half_as_ushort(_Float16 h) { unsigned short u; std::memcpy(&u, &h, 2); return u; }
static inline float __half2float(_Float16 h) { return (float)h; }
