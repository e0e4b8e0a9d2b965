//! Decoding the Hopper synchronisation and bulk-copy instructions: `mbarrier.*`,
//! `cp.async.mbarrier.arrive`, `elect.sync`, `setmaxnreg`, `fence.proxy.async`,
//! `fence.mbarrier_init`, `cp.async.bulk{.tensor}` and `cp.reduce.async.bulk.tensor`
//! (PTX ISA 9.0 §9.7.9.25.4–5, §9.7.13.4, §9.7.13.15).

use super::*;

impl<'a> ModuleParser<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_hopper(
        &mut self,
        b: &mut Body,
        name: &str,
        nspan: Span,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
    ) -> PResult<Op> {
        match name {
            "mbarrier" => self.mbarrier(b, m, raw, span),
            "elect" => {
                if !m.take("sync") {
                    return Err(self.c.err(nspan, "`elect` is `elect.sync d|p, membermask`"));
                }
                self.nargs(raw, 2, "elect.sync", span)?;
                let RawOp::Pair(d, p, _) = &raw[0] else {
                    return Err(self.c.err(
                        raw[0].span(),
                        "`elect.sync` writes `d|p` (a .b32 lane id or `_`, and a predicate)",
                    ));
                };
                let d = match &**d {
                    RawOp::Sink(_) => None,
                    other => Some(self.dst_t(b, other, Type::B32)?),
                };
                Ok(Op::ElectSync {
                    d,
                    p: self.dst_t(b, p, Type::Pred)?,
                    mask: self.src(b, &raw[1], Type::B32)?,
                })
            }
            "setmaxnreg" => {
                let inc = match m.take_any(&["inc", "dec"]) {
                    Some(w) => w == "inc",
                    None => return Err(self.c.err(nspan, "`setmaxnreg` needs .inc or .dec")),
                };
                if !(m.take("sync") && m.take("aligned") && m.take("u32")) {
                    return Err(self.c.err(
                        span,
                        "`setmaxnreg` is `setmaxnreg.{inc,dec}.sync.aligned.u32 count`",
                    ));
                }
                self.nargs(raw, 1, "setmaxnreg", span)?;
                let n = self.imm_int(&raw[0], "setmaxnreg's register count")?;
                // PTX ISA 9.0 §9.7.17.x: 24 ..= 256, a multiple of 8.
                if !(24..=256).contains(&n) || n % 8 != 0 {
                    return Err(self.c.err(
                        raw[0].span(),
                        format!(
                            "setmaxnreg's count must be a multiple of 8 in 24..=256, found {n}"
                        ),
                    ));
                }
                Ok(Op::Setmaxnreg {
                    inc,
                    count: n as u32,
                })
            }
            "fence" => {
                if m.take("mbarrier_init") {
                    if !(m.take("release") && m.take("cluster")) {
                        return Err(self.c.err(
                            span,
                            "`fence.mbarrier_init` is `fence.mbarrier_init.release.cluster`",
                        ));
                    }
                    self.nargs(raw, 0, "fence.mbarrier_init", span)?;
                    return Ok(Op::FenceProxyAsync {
                        space: None,
                        mbarrier_init: true,
                    });
                }
                m.take("proxy");
                if !m.take("async") {
                    return Err(self.c.err(
                        nspan,
                        "unsupported fence proxy: gpusim models `fence.proxy.async` (the generic ↔ async proxy)",
                    ));
                }
                let space = match m.take_any(&["global", "shared::cta", "shared::cluster"]) {
                    Some("global") => Some(Space::Global),
                    Some(_) => Some(Space::Shared),
                    None => None,
                };
                self.nargs(raw, 0, "fence.proxy.async", span)?;
                Ok(Op::FenceProxyAsync {
                    space,
                    mbarrier_init: false,
                })
            }
            "cp" => self.bulk_copy(b, m, raw, span),
            "barrier" => {
                m.take("cluster");
                let wait = match m.take_any(&["arrive", "wait"]) {
                    Some(w) => w == "wait",
                    None => return Err(self.c.err(
                        nspan,
                        "`barrier.cluster` is `barrier.cluster.arrive` or `barrier.cluster.wait`",
                    )),
                };
                m.take_any(&["release", "relaxed", "acquire"]);
                m.take("aligned");
                self.nargs(raw, 0, "barrier.cluster", span)?;
                Ok(Op::BarrierCluster { wait })
            }
            "mapa" => {
                let cluster = m.take("shared::cluster");
                let ty = self.one_type(m, name, span)?;
                if !matches!(ty, Type::U32 | Type::U64) {
                    return Err(self.c.err(span, "`mapa` takes .u32 or .u64"));
                }
                if cluster && ty != Type::U32 && ty != Type::U64 {
                    return Err(self
                        .c
                        .err(span, "`mapa.shared::cluster` takes .u32 or .u64"));
                }
                self.nargs(raw, 3, "mapa", span)?;
                Ok(Op::Mapa {
                    generic: !cluster,
                    d: self.dst_t(b, &raw[0], ty)?,
                    a: self.src(b, &raw[1], ty)?,
                    rank: self.src(b, &raw[2], Type::U32)?,
                })
            }
            _ => unreachable!("`decode` dispatches only Hopper instructions here"),
        }
    }

    /// The barrier's space: `.shared{::cta}` (Shared), `.shared::cluster` (Shared, cluster)
    /// or none (Generic).
    fn mbar_space(&self, m: &mut Mods) -> (Space, bool) {
        match m.take_any(&["shared", "shared::cta", "shared::cluster"]) {
            Some("shared::cluster") => (Space::Shared, true),
            Some(_) => (Space::Shared, false),
            None => (Space::Generic, false),
        }
    }

    fn mbarrier(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        let what = m.take_any(&[
            "init",
            "inval",
            "arrive",
            "arrive_drop",
            "expect_tx",
            "complete_tx",
            "test_wait",
            "try_wait",
            "pending_count",
        ]);
        let Some(what) = what else {
            return Err(self.c.err(
                span,
                "`mbarrier` needs an operation: init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait or pending_count",
            ));
        };
        let (space, cluster) = self.mbar_space(m);
        // `.sem.scope` of an arrive (PTX ISA 8.0+): release at cluster scope is a fence.
        let release_fence = (m.has("cluster") && !m.has("relaxed")).then_some(FenceLevel::Gpu);
        m.take_memory_hints();
        if !m.take("b64") {
            return Err(self.c.err(span, format!("`mbarrier.{what}` takes .b64")));
        }
        let u32_op = |p: &mut Self, b: &mut Body, r: &RawOp| p.src(b, r, Type::U32);
        match what {
            "init" => {
                self.nargs(raw, 2, "mbarrier.init", span)?;
                Ok(Op::MbarInit {
                    space,
                    addr: self.addr(b, &raw[0])?,
                    count: u32_op(self, b, &raw[1])?,
                })
            }
            "inval" => {
                self.nargs(raw, 1, "mbarrier.inval", span)?;
                Ok(Op::MbarInval {
                    space,
                    addr: self.addr(b, &raw[0])?,
                })
            }
            "arrive" | "arrive_drop" => {
                let expect = m.take("expect_tx");
                let no_complete = m.take("noComplete");
                let min = if expect || no_complete { 3 } else { 2 };
                if raw.len() < min || raw.len() > min + usize::from(!no_complete) {
                    return Err(self.c.err(
                        span,
                        format!(
                            "`mbarrier.{what}` takes state, [addr]{}{}, found {} operands",
                            if expect { ", txCount" } else { "" },
                            if no_complete { ", count" } else { "{, count}" },
                            raw.len()
                        ),
                    ));
                }
                let state = match &raw[0] {
                    RawOp::Sink(_) => None,
                    other => Some(self.dst_t(b, other, Type::B64)?),
                };
                if cluster && state.is_some() {
                    return Err(self.c.err(
                        raw[0].span(),
                        "a `.shared::cluster` arrive returns no state: write `_`",
                    ));
                }
                let addr = self.addr(b, &raw[1])?;
                let mut rest = raw[2..].iter();
                let expect_tx = if expect {
                    Some(u32_op(self, b, rest.next().expect("counted"))?)
                } else {
                    None
                };
                let count = match rest.next() {
                    Some(r) => Some(u32_op(self, b, r)?),
                    None => None,
                };
                Ok(Op::MbarArrive {
                    space,
                    cluster,
                    fence: release_fence,
                    addr,
                    state,
                    count,
                    expect_tx,
                    drop: what == "arrive_drop",
                    no_complete,
                })
            }
            "expect_tx" | "complete_tx" => {
                self.nargs(raw, 2, what, span)?;
                Ok(Op::MbarTx {
                    complete: what == "complete_tx",
                    space,
                    cluster,
                    addr: self.addr(b, &raw[0])?,
                    bytes: u32_op(self, b, &raw[1])?,
                })
            }
            "test_wait" | "try_wait" => {
                let parity = m.take("parity");
                let blocking = what == "try_wait";
                let max = if blocking { 4 } else { 3 };
                if raw.len() < 3 || raw.len() > max {
                    return Err(self.c.err(
                        span,
                        format!(
                            "`mbarrier.{what}` takes waitComplete, [addr], {}{}, found {} operands",
                            if parity { "phaseParity" } else { "state" },
                            if blocking { "{, suspendTimeHint}" } else { "" },
                            raw.len()
                        ),
                    ));
                }
                Ok(Op::MbarWait {
                    blocking,
                    parity,
                    done: self.dst_t(b, &raw[0], Type::Pred)?,
                    space,
                    addr: self.addr(b, &raw[1])?,
                    phase: self.src(b, &raw[2], if parity { Type::U32 } else { Type::B64 })?,
                    hint: match raw.get(3) {
                        Some(r) => Some(u32_op(self, b, r)?),
                        None => None,
                    },
                })
            }
            _ => {
                self.nargs(raw, 2, "mbarrier.pending_count", span)?;
                Ok(Op::MbarPendingCount {
                    d: self.dst_t(b, &raw[0], Type::U32)?,
                    state: self.src(b, &raw[1], Type::B64)?,
                })
            }
        }
    }

    /// `cp.async.mbarrier.arrive`, `cp.async.bulk*` and `cp.reduce.async.bulk.tensor`.
    fn bulk_copy(&mut self, b: &mut Body, m: &mut Mods, raw: &[RawOp], span: Span) -> PResult<Op> {
        let reduce = m.take("reduce");
        if !m.take("async") {
            return Err(self
                .c
                .err(span, "unsupported `cp` form: expected cp.async…"));
        }
        if !reduce && m.take("mbarrier") {
            if !m.take("arrive") {
                return Err(self.c.err(
                    span,
                    "`cp.async.mbarrier` is `cp.async.mbarrier.arrive{.noinc}.b64 [addr]`",
                ));
            }
            let noinc = m.take("noinc");
            let (space, _) = self.mbar_space(m);
            if !m.take("b64") {
                return Err(self.c.err(span, "`cp.async.mbarrier.arrive` takes .b64"));
            }
            self.nargs(raw, 1, "cp.async.mbarrier.arrive", span)?;
            return Ok(Op::CpAsyncMbarArrive {
                noinc,
                space,
                addr: self.addr(b, &raw[0])?,
            });
        }
        if !m.take("bulk") {
            return Err(self.c.err(
                span,
                "`cp.reduce.async` is supported in its `.bulk.tensor` form",
            ));
        }
        if !reduce && m.take("commit_group") {
            self.nargs(raw, 0, "cp.async.bulk.commit_group", span)?;
            return Ok(Op::CpAsyncBulkCommit);
        }
        if !reduce && m.take("wait_group") {
            let read = m.take("read");
            self.nargs(raw, 1, "cp.async.bulk.wait_group", span)?;
            let n = self.imm_int(&raw[0], "cp.async.bulk.wait_group's group count")?;
            let n = u32::try_from(n).map_err(|_| {
                self.c.err(
                    raw[0].span(),
                    format!("the group count must be a non-negative 32-bit integer, found {n}"),
                )
            })?;
            return Ok(Op::CpAsyncBulkWait { n, read });
        }
        let tensor = m.take("tensor");
        if reduce && !tensor {
            return Err(self.c.err(
                span,
                "`cp.reduce.async.bulk` is supported in its `.tensor` form",
            ));
        }
        // The state spaces in order: destination, then source.
        let pos = |m: &Mods, w: &str| m.list.iter().position(|(x, _)| x == w);
        let shared_spaces = m
            .list
            .iter()
            .filter(|(x, _)| matches!(x.as_str(), "shared" | "shared::cta" | "shared::cluster"))
            .count();
        let first_shared = pos(m, "shared::cta")
            .into_iter()
            .chain(pos(m, "shared::cluster"))
            .chain(pos(m, "shared"))
            .min();
        let dst_global = match (pos(m, "global"), first_shared) {
            (Some(g), Some(s)) => g < s,
            (None, Some(_)) if shared_spaces == 2 && !tensor => false,
            _ => return Err(self.c.err(
                span,
                "a bulk copy names its destination and source spaces, e.g. .shared::cluster.global",
            )),
        };
        let dst_cluster = m.has("shared::cluster");
        m.take("global");
        m.take_any(&["shared::cluster", "shared::cta", "shared"]);
        // A shared → shared::cluster copy names two shared spaces.
        let s2s = m.take_any(&["shared::cta", "shared"]).is_some();
        let mbar_form = m.take("mbarrier::complete_tx::bytes");
        let group_form = m.take("bulk_group");
        let multicast = m.take("multicast::cluster");
        let hinted = m.has("L2::cache_hint");
        m.take_memory_hints();
        let hint_ops = usize::from(hinted);
        if tensor {
            return self.tensor_copy(
                b,
                m,
                raw,
                span,
                reduce,
                dst_global,
                (mbar_form, group_form, multicast, hint_ops),
            );
        }
        let dir = match (dst_global, s2s) {
            (true, _) => BulkDir::SharedToGlobal,
            (false, true) => BulkDir::SharedToCluster,
            (false, false) => BulkDir::GlobalToShared,
        };
        let want_mbar = dir != BulkDir::SharedToGlobal;
        if want_mbar != mbar_form || group_form == want_mbar {
            return Err(self.c.err(
                span,
                if want_mbar {
                    "a bulk copy into shared memory completes on an mbarrier: add .mbarrier::complete_tx::bytes"
                } else {
                    "a bulk copy to global memory completes in a bulk group: add .bulk_group"
                },
            ));
        }
        if multicast && (dir != BulkDir::GlobalToShared || !dst_cluster) {
            return Err(self.c.err(
                span,
                ".multicast::cluster applies to global → shared::cluster copies",
            ));
        }
        let n = 3 + usize::from(want_mbar) + usize::from(multicast) + hint_ops;
        self.nargs(raw, n, "cp.async.bulk", span)?;
        Ok(Op::CpAsyncBulk {
            dir,
            dst: self.addr(b, &raw[0])?,
            src: self.addr(b, &raw[1])?,
            size: self.src(b, &raw[2], Type::U32)?,
            mbar: if want_mbar {
                Some(self.addr(b, &raw[3])?)
            } else {
                None
            },
            multicast: if multicast {
                Some(self.src(b, &raw[4], Type::B16)?)
            } else {
                None
            },
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn tensor_copy(
        &mut self,
        b: &mut Body,
        m: &mut Mods,
        raw: &[RawOp],
        span: Span,
        reduce: bool,
        dst_global: bool,
        (mbar_form, group_form, multicast, hint_ops): (bool, bool, bool, usize),
    ) -> PResult<Op> {
        let rank = match m.take_any(&["1d", "2d", "3d", "4d", "5d"]) {
            Some(r) => r.as_bytes()[0] - b'0',
            None => {
                return Err(self
                    .c
                    .err(span, "`cp.async.bulk.tensor` needs its rank: .1d … .5d"))
            }
        };
        if m.has("im2col") || m.has("tile::gather4") || m.has("im2col_no_offs") {
            return Err(self
                .c
                .err(span, "gpusim supports the .tile load mode of TMA copies"));
        }
        m.take("tile");
        let red = if reduce {
            let Some(r) = TmaReduce::ALL.into_iter().find(|r| m.take(r.name())) else {
                return Err(self.c.err(span, "`cp.reduce.async.bulk.tensor` needs a reduction: .add, .min, .max, .inc, .dec, .and, .or or .xor"));
            };
            Some(r)
        } else {
            None
        };
        let dir = match (dst_global, red) {
            (false, None) => TensorDir::Load,
            (true, None) => TensorDir::Store,
            (true, Some(r)) => TensorDir::Reduce(r),
            (false, Some(_)) => {
                return Err(self.c.err(
                    span,
                    "`cp.reduce.async.bulk.tensor` writes global memory: .global.shared::cta",
                ))
            }
        };
        let load = dir == TensorDir::Load;
        if load != mbar_form || group_form == load {
            return Err(self.c.err(
                span,
                if load {
                    "a tensor load completes on an mbarrier: add .mbarrier::complete_tx::bytes"
                } else {
                    "a tensor store completes in a bulk group: add .bulk_group"
                },
            ));
        }
        if multicast && !load {
            return Err(self
                .c
                .err(span, ".multicast::cluster applies to tensor loads"));
        }
        let n = if load { 3 + usize::from(multicast) } else { 2 } + hint_ops;
        self.nargs(raw, n, "cp.async.bulk.tensor", span)?;
        let (tensor_raw, smem_raw) = if load {
            (&raw[1], &raw[0])
        } else {
            (&raw[0], &raw[1])
        };
        let RawOp::TensorAddr(base, off, coords_raw, tspan) = tensor_raw else {
            return Err(self.c.err(
                tensor_raw.span(),
                "expected the tensor operand `[tensorMap, {c0, …}]`",
            ));
        };
        if coords_raw.len() != rank as usize {
            return Err(self.c.err(
                *tspan,
                format!(
                    "a .{rank}d tensor copy takes {rank} coordinates, found {}",
                    coords_raw.len()
                ),
            ));
        }
        let tmap = self.addr(b, &RawOp::Addr(base.clone(), *off, *tspan))?;
        let mut coords = [Operand::Imm(0); 5];
        for (i, c) in coords_raw.iter().enumerate() {
            coords[i] = self.src(b, c, Type::S32)?;
        }
        Ok(Op::CpAsyncBulkTensor {
            dir,
            rank,
            smem: self.addr(b, smem_raw)?,
            tmap,
            coords,
            mbar: if load {
                Some(self.addr(b, &raw[2])?)
            } else {
                None
            },
            multicast: if multicast {
                Some(self.src(b, &raw[3], Type::B16)?)
            } else {
                None
            },
        })
    }
}
