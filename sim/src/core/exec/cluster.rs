//! `mapa` and `barrier.cluster`, and the resolution of `.shared::cluster` addresses that the
//! mbarrier, bulk-copy and memory instructions share (`core::cluster` has the address layout
//! and the messages). An access to a peer CTA never touches that CTA here: it becomes a
//! delivery (`Warp::hopper.remote_out`) that the SM hands to the GPU.

use super::*;
use crate::core::async_state::ClusterOp;
use crate::core::cluster::{arch_addr, arch_offset, split_cluster_addr, CLUSTER_RANK_STRIDE};
use crate::core::landing::{Landing, RemoteRead};

impl<'a> ExecEnv<'a> {
    pub(super) fn exec_cluster(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<(), Fault> {
        match &inst.op {
            Op::Mapa {
                generic,
                d,
                a,
                rank,
            } => {
                for l in lanes(exec) {
                    let r = self.val(w, rank, l) & 0xFFFF_FFFF;
                    self.check_rank(w, inst, l, r)?;
                    let v = self.val(w, a, l);
                    let out = if *generic {
                        let (sp, off) = mem::decode_generic(v);
                        if sp != Space::Shared {
                            return Err(self.fault(
                                w,
                                inst,
                                l,
                                FaultKind::OutOfBounds,
                                format!(
                                    "mapa of generic address {v:#x}, which is not in shared memory"
                                ),
                            ));
                        }
                        mem::window_base(Space::Shared) + arch_addr(r as u32, arch_offset(off))
                    } else {
                        arch_addr(r as u32, arch_offset(v & 0xFFFF_FFFF))
                    };
                    w.write(d.0, l, out);
                }
            }
            Op::BarrierCluster { wait } => {
                if exec != 0 {
                    let ws = w.warp_size as usize;
                    let counts = &mut w.hopper.cluster_arrivals;
                    counts.resize(ws, 0);
                    if *wait {
                        let phases = lanes(exec).map(|l| counts[l]).max().unwrap_or(0);
                        w.hopper.cluster_ops.push(ClusterOp::Wait(phases, exec));
                    } else {
                        for l in lanes(exec) {
                            counts[l] += 1;
                        }
                        w.hopper
                            .cluster_ops
                            .push(ClusterOp::Arrive(exec.count_ones()));
                    }
                }
            }
            _ => unreachable!("`execute` dispatches only cluster instructions here"),
        }
        Ok(())
    }

    /// One way of a distributed-shared-memory access (`sm.cluster.dsmem_latency` is the
    /// round trip of a load, as measured).
    pub(super) fn dsmem_one_way(&self) -> u64 {
        (self.cluster().dsmem_latency as u64).div_ceil(2).max(1)
    }

    /// Whether this `ld`/`st` reaches a peer CTA (some executing lane's shared address
    /// carries a cluster rank).
    /// Without a cluster of several CTAs no address can name a peer, so ordinary kernels
    /// pay nothing on their memory path (an out-of-range shared address still faults there).
    pub(super) fn peer_access(&self, w: &Warp, inst: &Inst, exec: Mask) -> bool {
        if !self.in_cluster() {
            return false;
        }
        let (space, addr) = match &inst.op {
            Op::Ld { space, addr, .. } | Op::St { space, addr, .. } => (*space, addr),
            _ => return false,
        };
        matches!(space, Space::Shared | Space::Generic)
            && lanes(exec).any(|l| {
                let (sp, a) = self.effective(w, space, addr, l);
                sp == Space::Shared && a >= CLUSTER_RANK_STRIDE
            })
    }

    /// `ld`/`st` through `.shared::cluster` addresses: this CTA's bytes directly, a peer's by
    /// a request that lands there after half the DSMEM latency; a load's value comes back
    /// after the other half and is written then (the scoreboard holds the register until).
    pub(super) fn exec_dsmem(
        &mut self,
        w: &mut Warp,
        inst: &Inst,
        exec: Mask,
    ) -> Result<(), Fault> {
        let (space, ty, addr, n) = match &inst.op {
            Op::Ld {
                space, ty, d, addr, ..
            } => (*space, *ty, addr, d.len as u64),
            Op::St {
                space,
                ty,
                src,
                addr,
                ..
            } => (*space, *ty, addr, src.len as u64),
            _ => unreachable!("only ld and st reach peers"),
        };
        let size = ty.size() as u64;
        for l in lanes(exec) {
            let (_, base) = self.effective(w, space, addr, l);
            if base % (size * n) != 0 {
                return Err(self.fault(
                    w,
                    inst,
                    l,
                    FaultKind::Misaligned,
                    format!(
                        "misaligned {}-byte shared::cluster access at {base:#x}",
                        size * n
                    ),
                ));
            }
            for i in 0..n {
                let (rank, off) = self.cluster_target(w, inst, l, base + i * size, size)?;
                match &inst.op {
                    Op::Ld { d, .. } => {
                        self.dsmem_load(w, l, d.as_slice()[i as usize], ty, rank, off)
                    }
                    Op::St { src, .. } => {
                        let v = self.val(w, &src.as_slice()[i as usize], l);
                        let bytes = v.to_le_bytes()[..size as usize].to_vec();
                        match rank {
                            None => {
                                self.shared[off as usize..(off + size) as usize]
                                    .copy_from_slice(&bytes);
                                *self.epoch += 1;
                            }
                            Some(r) => w.hopper.remote_out.push((
                                r,
                                Landing {
                                    base: off,
                                    data: bytes,
                                    ..Landing::control(self.cycle + self.dsmem_one_way())
                                },
                            )),
                        }
                    }
                    _ => unreachable!("matched above"),
                }
            }
        }
        Ok(())
    }

    fn dsmem_load(
        &mut self,
        w: &mut Warp,
        l: usize,
        r: RegId,
        ty: Type,
        rank: Option<u32>,
        off: u64,
    ) {
        let size = ty.size();
        let rty = self.prog.module.function(w.func()).regs[r.0 as usize].ty;
        let sign_bits = if ty.is_signed() && rty.bits() > ty.bits() {
            ty.bits()
        } else {
            0
        };
        match rank {
            None => {
                let mut b = [0u8; 8];
                b[..size as usize]
                    .copy_from_slice(&self.shared[off as usize..off as usize + size as usize]);
                let v = extend(u64::from_le_bytes(b), sign_bits, rty.mask());
                w.write(r.0, l, v);
            }
            Some(peer) => {
                w.hopper.remote_out.push((
                    peer,
                    Landing {
                        read: Some(RemoteRead {
                            offset: off,
                            size,
                            warp: self.hw_warp as usize,
                            reg: r.0,
                            lane: l,
                            sign_bits,
                            reg_mask: rty.mask(),
                            from: (0, 0, 0),
                        }),
                        ..Landing::control(self.cycle + self.dsmem_one_way())
                    },
                ));
                w.hopper.remote_loads.push(r.0);
            }
        }
    }

    fn check_rank(&self, w: &Warp, inst: &Inst, l: usize, r: u64) -> Result<(), Fault> {
        let n: u32 = self.geom.cluster.iter().product();
        if r >= n as u64 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!("cluster rank {r} does not exist: the cluster has {n} CTAs"),
            ));
        }
        Ok(())
    }

    /// A shared-memory offset that may name a peer CTA: (Some(rank) for a peer, offset). The
    /// offset is bounds-checked for `bytes` against this CTA's size (every CTA of a launch
    /// has the same shared memory).
    pub(super) fn cluster_target(
        &self,
        w: &Warp,
        inst: &Inst,
        l: usize,
        at: u64,
        bytes: u64,
    ) -> Result<(Option<u32>, u64), Fault> {
        let (rank, off) = split_cluster_addr(at);
        let rank = match rank {
            Some(r) => {
                self.check_rank(w, inst, l, r as u64)?;
                (r != self.cluster_rank()).then_some(r)
            }
            None => None,
        };
        if off + bytes > self.shared.len() as u64 {
            return Err(self.fault(
                w,
                inst,
                l,
                FaultKind::OutOfBounds,
                format!(
                    "shared address {at:#x} ({bytes} bytes) is outside the CTA's {} bytes of shared memory",
                    self.shared.len()
                ),
            ));
        }
        Ok((rank, off))
    }
}

/// A loaded value as its register holds it: sign-extended from `sign_bits` (0: not), masked.
pub(crate) fn extend(v: u64, sign_bits: u32, mask: u64) -> u64 {
    if sign_bits == 0 || sign_bits >= 64 {
        return v & mask;
    }
    let s = 64 - sign_bits;
    ((((v << s) as i64) >> s) as u64) & mask
}
