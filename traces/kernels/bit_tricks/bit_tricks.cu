// bit_tricks: integer and bit-manipulation intrinsics on u32 inputs a, b, c
// (256 elements; the first 16 are edge cases such as 0, 1, 0xffffffff,
// 0x80000000, 0x7fffffff). Results are written result-major:
//   r32[k * n + i] (k = 0..31, u32; signed results reinterpreted as u32)
//   r64[k * n + i] (k = 0..13, u64)
// r32 rows: 0 popc(a)  1 clz(a)  2 brev(a)  3 byte_perm(a, b, c & 0x7777)
//   4 funnelshift_l(a, b, c)  5 funnelshift_r(a, b, c)  (shift wraps: c & 31)
//   6 funnelshift_lc(a, b, c & 63)  7 funnelshift_rc(a, b, c & 63) (clamps at 32)
//   8 ffs(a)  9 (a >> (c & 15)) & 0x3ff  10 (int)(a << 7) >> 19  (signed field)
//   11 min(sa, sb)  12 max(sa, sb)  13 umin(a, b)  14 umax(a, b)  15 abs(sa)
//   16 umulhi(a, b)  17 mulhi(sa, sb)  18 mul24(sa, sb)  19 umul24(a, b)
//   20 a / (b | 1)  21 a % (b | 1)  22 sa / (sb | 1)  23 sa % (sb | 1)
//   24 sad(sa, sb, c)  25 usad(a, b, c)  26 hadd(sa, sb)  27 urhadd(a, b)
//   28 a >> (b & 31)  29 sa >> (b & 31)  30 a << (c & 31)  31 (a & 0xff) * 0x01010101 ^ ~b
// r64 rows (A = a:b as hi:lo, C = c:(a^b), SA = (i64)A):
//   0 A * C  1 A >> (c & 63)  2 SA >> (c & 63)  3 A / (C | 1)  4 A % (C | 1)
//   5 umul64hi(A, C)  6 popcll(A) | clzll(A) << 32 | ffsll(A) << 48  7 brevll(A)
//   8 SA / (i64)(C | 1)  9 A + C  10 mul64hi(SA, (i64)C)  11 (i64)sa * sb
//   12 (u64)a * b  13 SA % (i64)(C | 1)
// Exercises: popc, clz, brev, prmt, shf.l/r.wrap/clamp, bfind.shiftamt (ffs), bfe,
// min/max/abs .s32/.u32, mul.hi, __mul24 (NVRTC emits bfe.s32 + mul.lo.s32, not
// mul24), div .s32/.u32/.s64/.u64 (remainders via mul + sub; 64-bit division has a
// 32-bit fast path), sad, mul.wide, bfi.b64, 64-bit shifts/adds/mul.lo/mul.hi,
// popc.b64, clz.b64, brev.b64.
extern "C" __global__ void bit_tricks(const unsigned* A, const unsigned* B, const unsigned* C,
                                      unsigned* r32, unsigned long long* r64, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    unsigned a = A[i], b = B[i], c = C[i];
    int sa = (int)a, sb = (int)b;
    unsigned* o = r32 + i;
#define OUT(k, v) o[(k) * n] = (unsigned)(v)
    OUT(0, __popc(a));
    OUT(1, __clz(sa));
    OUT(2, __brev(a));
    OUT(3, __byte_perm(a, b, c & 0x7777u));
    OUT(4, __funnelshift_l(a, b, c));
    OUT(5, __funnelshift_r(a, b, c));
    OUT(6, __funnelshift_lc(a, b, c & 63u));
    OUT(7, __funnelshift_rc(a, b, c & 63u));
    OUT(8, __ffs(sa));
    OUT(9, (a >> (c & 15u)) & 0x3ffu);
    OUT(10, (int)(a << 7) >> 19);
    OUT(11, min(sa, sb));
    OUT(12, max(sa, sb));
    OUT(13, min(a, b));
    OUT(14, max(a, b));
    OUT(15, abs(sa));
    OUT(16, __umulhi(a, b));
    OUT(17, __mulhi(sa, sb));
    OUT(18, __mul24(sa, sb));
    OUT(19, __umul24(a, b));
    OUT(20, a / (b | 1u));
    OUT(21, a % (b | 1u));
    OUT(22, sa / (sb | 1));
    OUT(23, sa % (sb | 1));
    OUT(24, __sad(sa, sb, c));
    OUT(25, __usad(a, b, c));
    OUT(26, __hadd(sa, sb));
    OUT(27, __urhadd(a, b));
    OUT(28, a >> (b & 31u));
    OUT(29, sa >> (b & 31u));
    OUT(30, a << (c & 31u));
    OUT(31, ((a & 0xffu) * 0x01010101u) ^ ~b);
#undef OUT

    unsigned long long A64 = ((unsigned long long)a << 32) | b;
    unsigned long long C64 = ((unsigned long long)c << 32) | (a ^ b);
    long long SA = (long long)A64;
    unsigned long long* q = r64 + i;
#define OUT(k, v) q[(k) * n] = (unsigned long long)(v)
    OUT(0, A64 * C64);
    OUT(1, A64 >> (c & 63u));
    OUT(2, SA >> (c & 63u));
    OUT(3, A64 / (C64 | 1ull));
    OUT(4, A64 % (C64 | 1ull));
    OUT(5, __umul64hi(A64, C64));
    OUT(6, (unsigned long long)__popcll(A64) | ((unsigned long long)__clzll(SA) << 32)
               | ((unsigned long long)__ffsll(SA) << 48));
    OUT(7, __brevll(A64));
    OUT(8, SA / (long long)(C64 | 1ull));
    OUT(9, A64 + C64);
    OUT(10, __mul64hi(SA, (long long)C64));
    OUT(11, (long long)sa * sb);
    OUT(12, (unsigned long long)a * b);
    OUT(13, SA % (long long)(C64 | 1ull));
#undef OUT
}
