// A lock taken by every thread in turn, each drawing a ticket under it. The spin loop is apart
// from the critical section: the pattern that needs independent thread scheduling (Volta and
// later). Built for compute_70 it runs on a Volta-or-later GPU; the same source built for
// compute_60 keeps pre-Volta scheduling there, and the lock holder then waits at the loop's
// exit for the warp-mates that spin on its lock (CUDA C++ Programming Guide, "Independent
// Thread Scheduling"; NVIDIA Volta tuning guide).
extern "C" __global__ void ticket_lock(int *lock, volatile int *next, int *taken)
{
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    int t = *next;
    *next = t + 1;
    taken[t] += 1;
    __threadfence();
    atomicExch(lock, 0);
}
