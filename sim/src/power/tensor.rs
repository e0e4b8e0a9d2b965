//! How many tensor-core multiply-adds one warp's tensor instruction performs, and of which
//! kind: the count the power model prices (`EnergyEvents::tensor_fmas`).

use gpusim_isa::{MmaIntShape, MmaType, Op, WgmmaType, WmmaType};

use super::events::TensorKind;

/// The multiply-adds of one warp's `mma.sync`, `wmma.mma` or `wgmma.mma_async` (a wgmma's
/// warp does its 16-row slice: 16·N·K), with their kind; None for any other instruction.
pub fn tensor_fmas(op: &Op) -> Option<(TensorKind, u64)> {
    match op {
        Op::Mma { shape, ty, .. } => {
            let kind = match ty {
                MmaType::F16 | MmaType::Bf16 => TensorKind::F16,
                MmaType::Tf32 => TensorKind::Tf32,
            };
            Some((kind, 16 * 8 * shape.k() as u64))
        }
        Op::MmaInt { shape, .. } => {
            let (m, k) = match shape {
                MmaIntShape::M8n8k16 => (8, 16),
                MmaIntShape::M16n8k16 => (16, 16),
                MmaIntShape::M16n8k32 => (16, 32),
            };
            Some((TensorKind::Int8, m * 8 * k))
        }
        // Four independent 8×8×4 products per warp (PTX ISA 9.0 §9.7.14.5.1).
        Op::MmaM884 { .. } => Some((TensorKind::F16, 4 * 8 * 8 * 4)),
        Op::WmmaMma { shape, ab, .. } => {
            let (m, n, k) = shape.mnk();
            let kind = match ab {
                WmmaType::Tf32 => TensorKind::Tf32,
                WmmaType::S8 | WmmaType::U8 | WmmaType::S32 => TensorKind::Int8,
                WmmaType::F16 | WmmaType::Bf16 | WmmaType::F32 => TensorKind::F16,
            };
            Some((kind, (m * n * k) as u64))
        }
        Op::Wgmma(w) => {
            let kind = match w.aty {
                WgmmaType::F16 | WgmmaType::Bf16 => TensorKind::F16,
                WgmmaType::Tf32 => TensorKind::Tf32,
                WgmmaType::E4m3 | WgmmaType::E5m2 => TensorKind::Fp8,
            };
            Some((kind, 16 * w.n as u64 * w.aty.k() as u64))
        }
        _ => None,
    }
}
