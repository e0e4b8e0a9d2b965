// bfs_step: one level-synchronous BFS frontier expansion over a CSR graph
// (1024 nodes, undirected, source node 0).
// A thread whose node is in `frontier` clears its flag and visits its
// neighbours; atomicCAS(dist[u], -1, level + 1) claims each undiscovered node
// exactly once, and only the winner sets next[u] = 1 and bumps counts[level].
// The manifest launches it 5 times (levels 0..4), swapping the frontier/next
// buffers between launches, so the result is deterministic: dist holds BFS
// levels 0..5 (-1 beyond), counts[l] = number of nodes at level l + 1, and the
// final `next` buffer (frontier_b) flags exactly the level-5 nodes.
// Exercises: atom.global.cas.b32, atomics on a computed index, data-dependent
// loops, early exit, several launches with different scalar args.
extern "C" __global__ void bfs_step(const int* row_ptr, const int* col_idx, int* frontier,
                                    int* next, int* dist, int* counts, int level, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n || frontier[v] == 0)
        return;
    frontier[v] = 0;
    for (int e = row_ptr[v]; e < row_ptr[v + 1]; ++e) {
        int u = col_idx[e];
        if (atomicCAS(&dist[u], -1, level + 1) == -1) {
            next[u] = 1;
            atomicAdd(&counts[level], 1);
        }
    }
}
