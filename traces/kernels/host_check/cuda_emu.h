// Host-side CUDA emulation used by host_check.py (a cross-check of the corpus,
// not part of the simulator): every CUDA thread is an OS thread, blocks run one
// after another, __syncthreads is a std::barrier, warp votes/shuffles use
// per-warp barriers and the CUDA programming guide's semantics, atomics are
// std::atomic_ref, and the integer/rounding-mode intrinsics are written from the
// CUDA math API documentation (directed rounding via fesetround). Needs g++ >= 11
// (C++20: std::barrier, std::atomic_ref).
#pragma once
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cfenv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
thread_local dim3 threadIdx, blockIdx;
thread_local unsigned g_ltid;
dim3 blockDim, gridDim;
static std::barrier<>* g_bar;
static std::vector<std::unique_ptr<std::barrier<>>> g_warp_bar;
static long long g_slots[1024];
static std::atomic<int> g_cnt;
static std::vector<unsigned char> g_dyn_smem;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __constant__
#define __shared__ static
#define __restrict__
#define FULLMASK 0xffffffffu

static inline void __syncthreads() { g_bar->arrive_and_wait(); }
static inline int __syncthreads_count(int p) {
    g_bar->arrive_and_wait(); if (p) g_cnt++; g_bar->arrive_and_wait();
    int r = g_cnt.load(); g_bar->arrive_and_wait(); if (g_ltid == 0) g_cnt = 0; g_bar->arrive_and_wait();
    return r;
}
static inline int __syncthreads_and(int p) { unsigned n = blockDim.x * blockDim.y * blockDim.z; return __syncthreads_count(p != 0) == (int)n; }
static inline int __syncthreads_or(int p) { return __syncthreads_count(p != 0) > 0; }

static inline unsigned emu_laneid() { return g_ltid & 31; }
static inline unsigned emu_lanemask_lt() { return (1u << (g_ltid & 31)) - 1u; }
static inline void warp_sync_() { g_warp_bar[g_ltid / 32]->arrive_and_wait(); }
template <class T> static inline T warp_read_(T v, int src_lane) {
    long long raw = 0; std::memcpy(&raw, &v, sizeof(T));
    g_slots[g_ltid] = raw; warp_sync_();
    long long got = g_slots[(g_ltid & ~31u) + src_lane]; warp_sync_();
    T out; std::memcpy(&out, &got, sizeof(T)); return out;
}
// CUDA programming guide semantics of __shfl*_sync
template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32) {
    int lane = g_ltid & 31; int seg = lane & ~(width - 1);
    return warp_read_(v, seg + (src & (width - 1)));
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32) {
    int lane = g_ltid & 31; int s = ((lane & (width - 1)) >= (int)d) ? lane - (int)d : lane;
    return warp_read_(v, s);
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32) {
    int lane = g_ltid & 31; int s = ((lane & (width - 1)) + (int)d < width) ? lane + (int)d : lane;
    return warp_read_(v, s);
}
template <class T> T __shfl_xor_sync(unsigned, T v, int m, int width = 32) {
    int lane = g_ltid & 31; int j = lane ^ m; int seg_end = (lane & ~(width - 1)) + width - 1;
    return warp_read_(v, j <= seg_end ? j : lane);
}
static inline unsigned __ballot_sync(unsigned, int p) {
    g_slots[g_ltid] = p != 0; warp_sync_();
    unsigned m = 0; for (int l = 0; l < 32; ++l) if (g_slots[(g_ltid & ~31u) + l]) m |= 1u << l;
    warp_sync_(); return m;
}
static inline int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
static inline int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, p) == 0xffffffffu; }

// atomics
template <class T> T atomicAdd(T* p, T v) { return std::atomic_ref<T>(*p).fetch_add(v); }
template <class T> T atomicSub(T* p, T v) { return std::atomic_ref<T>(*p).fetch_sub(v); }
template <class T> T atomicAnd(T* p, T v) { return std::atomic_ref<T>(*p).fetch_and(v); }
template <class T> T atomicOr(T* p, T v) { return std::atomic_ref<T>(*p).fetch_or(v); }
template <class T> T atomicXor(T* p, T v) { return std::atomic_ref<T>(*p).fetch_xor(v); }
template <class T> T atomicExch(T* p, T v) { return std::atomic_ref<T>(*p).exchange(v); }
template <class T> T atomicCAS(T* p, T c, T v) { std::atomic_ref<T>(*p).compare_exchange_strong(c, v); return c; }
template <class T, class F> T rmw_(T* p, F f) {
    std::atomic_ref<T> r(*p); T old = r.load();
    while (!r.compare_exchange_weak(old, f(old))) {}
    return old;
}
template <class T> T atomicMax(T* p, T v) { return rmw_(p, [&](T o) { return o > v ? o : v; }); }
template <class T> T atomicMin(T* p, T v) { return rmw_(p, [&](T o) { return o < v ? o : v; }); }
static inline unsigned atomicInc(unsigned* p, unsigned v) { return rmw_(p, [&](unsigned o) { return o >= v ? 0u : o + 1; }); }
static inline unsigned atomicDec(unsigned* p, unsigned v) { return rmw_(p, [&](unsigned o) { return (o == 0 || o > v) ? v : o - 1; }); }

// integer intrinsics (CUDA math API documentation)
using std::min; using std::max;
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) { unsigned r = 0; for (int i = 0; i < 32; ++i) if (x >> i & 1) r |= 1u << (31 - i); return r; }
static inline unsigned long long __brevll(unsigned long long x) { unsigned long long r = 0; for (int i = 0; i < 64; ++i) if (x >> i & 1) r |= 1ull << (63 - i); return r; }
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    unsigned long long v = ((unsigned long long)y << 32) | x; unsigned r = 0;
    for (int i = 0; i < 4; ++i) r |= (unsigned)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)((v << (s & 31)) >> 32); }
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) { unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)(v >> (s & 31)); }
static inline unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) { s = s > 32 ? 32 : s; unsigned long long v = ((unsigned long long)hi << 32) | lo; return s == 32 ? lo : (unsigned)((v << s) >> 32); }
static inline unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) { s = s > 32 ? 32 : s; unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned)(v >> s); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) { return (unsigned long long)(((unsigned __int128)a * b) >> 64); }
static inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static inline int __mul24(int a, int b) { int x = (a << 8) >> 8, y = (b << 8) >> 8; return (int)((unsigned)x * (unsigned)y); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffff) * (b & 0xffffff); }
static inline unsigned __sad(int a, int b, unsigned c) { return (unsigned)(a > b ? (long long)a - b : (long long)b - a) + c; }
static inline unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }

// float intrinsics
static inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned x; std::memcpy(&x, &f, 4); return x; }
static inline long long __double_as_longlong(double d) { long long x; std::memcpy(&x, &d, 8); return x; }
template <class F> static inline auto with_mode_(int mode, F f) { int old = fegetround(); fesetround(mode); asm volatile("" ::: "memory"); auto r = f(); asm volatile("" ::: "memory"); fesetround(old); return r; }
static inline float __fmul_rz(volatile float a, volatile float b) { return with_mode_(FE_TOWARDZERO, [&] { float x = a, y = b; asm volatile("" : "+x"(x), "+x"(y)); float r = x * y; asm volatile("" : "+x"(r)); return r; }); }
static inline float __fadd_rd(volatile float a, volatile float b) { return with_mode_(FE_DOWNWARD, [&] { float x = a, y = b; asm volatile("" : "+x"(x), "+x"(y)); float r = x + y; asm volatile("" : "+x"(r)); return r; }); }
static inline float __fadd_ru(volatile float a, volatile float b) { return with_mode_(FE_UPWARD, [&] { float x = a, y = b; asm volatile("" : "+x"(x), "+x"(y)); float r = x + y; asm volatile("" : "+x"(r)); return r; }); }
static inline float __fmaf_rz(float a, float b, float c) { return with_mode_(FE_TOWARDZERO, [&] { float x = a, y = b, z = c; asm volatile("" : "+x"(x), "+x"(y), "+x"(z)); float r = fmaf(x, y, z); asm volatile("" : "+x"(r)); return r; }); }
static inline double __dmul_rz(volatile double a, volatile double b) { return with_mode_(FE_TOWARDZERO, [&] { double x = a, y = b; asm volatile("" : "+x"(x), "+x"(y)); double r = x * y; asm volatile("" : "+x"(r)); return r; }); }
static inline double __dadd_ru(volatile double a, volatile double b) { return with_mode_(FE_UPWARD, [&] { double x = a, y = b; asm volatile("" : "+x"(x), "+x"(y)); double r = x + y; asm volatile("" : "+x"(r)); return r; }); }
static inline float __frcp_rn(float b) { return 1.0f / b; }
static inline float __saturatef(float z) { return z < 0 ? 0.0f : (z > 1 ? 1.0f : z); }
static inline float rsqrtf(float x) { return (float)(1.0 / std::sqrt((double)x)); }
static inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
static inline float __fdividef(float a, float b) { return a / b; }

template <class F> void launch(dim3 g, dim3 b, size_t shmem, F f) {
    gridDim = g; blockDim = b;
    unsigned n = b.x * b.y * b.z;
    for (unsigned bz = 0; bz < g.z; ++bz)
    for (unsigned by = 0; by < g.y; ++by)
    for (unsigned bx = 0; bx < g.x; ++bx) {
        g_dyn_smem.assign(shmem + 16, 0xAB);
        std::barrier<> bar(n); g_bar = &bar;
        g_warp_bar.clear();
        for (unsigned w = 0; w < (n + 31) / 32; ++w) g_warp_bar.emplace_back(new std::barrier<>(std::min(32u, n - 32 * w)));
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < n; ++t) {
            ts.emplace_back([&, t, bx, by, bz] {
                g_ltid = t;
                threadIdx = dim3(t % b.x, (t / b.x) % b.y, t / (b.x * b.y));
                blockIdx = dim3(bx, by, bz);
                f();
            });
        }
        for (auto& th : ts) th.join();
    }
}

template <class T> std::vector<T> load_bin(const char* path, size_t n) {
    std::vector<T> v(n);
    FILE* f = fopen(path, "rb"); if (!f) { perror(path); exit(1); }
    if (fread(v.data(), sizeof(T), n, f) != n) { fprintf(stderr, "short %s\n", path); exit(1); }
    fclose(f); return v;
}
template <class T> void save_bin(const char* path, const std::vector<T>& v) {
    FILE* f = fopen(path, "wb"); fwrite(v.data(), sizeof(T), v.size(), f); fclose(f);
}
// glibc already declares __sinf & co. as internal aliases; map the CUDA
// fast-math intrinsics onto the accurate functions (checks use tolerances)
#define __sinf sinf
#define __cosf cosf
#define __expf expf
#define __logf logf
