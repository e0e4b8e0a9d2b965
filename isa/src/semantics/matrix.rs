//! `ldmatrix` / `stmatrix` `.m8n8.b16` as pure functions of the whole warp (PTX ISA 9.0
//! §9.7.14.5.15 `ldmatrix`, §9.7.14.5.16 `stmatrix`, and the figure "ldmatrix fragment for
//! one 8x8 matrix").
//!
//! Each of the `num` (1, 2 or 4) matrices has 8 rows of 8 16-bit elements (16 contiguous
//! bytes); the address of row r of matrix i is given by lane 8i + r. Lane l holds one 32-bit
//! register per matrix; with `g = l / 4` and `t = l % 4`, register i holds
//!
//! | form | low half | high half |
//! |---|---|---|
//! | plain | M_i[g][2t] | M_i[g][2t + 1] |
//! | `.trans` | M_i[2t][g] | M_i[2t + 1][g] |
//!
//! (`.trans` hands out the transposed matrix with the plain layout). `stmatrix` writes the
//! same correspondence in the other direction. The functions work on rows here, so the
//! simulator keeps the addressing, the checks and the timing.

/// Rows per 8×8 matrix (one per addressing lane).
pub const MATRIX_ROWS: usize = 8;

/// Lanes of the warp the layouts are defined for.
pub const MATRIX_LANES: usize = 32;

/// The (row, column) of matrix element `half` (0 = low, 1 = high) of a lane's register.
fn position(lane: usize, half: usize, trans: bool) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    if trans {
        (2 * t + half, g)
    } else {
        (g, 2 * t + half)
    }
}

/// `ldmatrix`: `rows[8i + r]` is row r of matrix i (`rows.len()` = 8 · num, num ≤ 4); returns
/// each lane's registers (the first `num` of each are defined, the rest 0).
pub fn ldmatrix(rows: &[[u16; 8]], trans: bool) -> [[u32; 4]; MATRIX_LANES] {
    let num = (rows.len() / MATRIX_ROWS).min(4);
    let mut out = [[0u32; 4]; MATRIX_LANES];
    for (l, regs) in out.iter_mut().enumerate() {
        for (i, reg) in regs.iter_mut().enumerate().take(num) {
            let m = &rows[i * MATRIX_ROWS..][..MATRIX_ROWS];
            let (r0, c0) = position(l, 0, trans);
            let (r1, c1) = position(l, 1, trans);
            *reg = m[r0][c0] as u32 | (m[r1][c1] as u32) << 16;
        }
    }
    out
}

/// `stmatrix`: the 8 · `num` rows (row r of matrix i at index 8i + r, num ≤ 4) that the
/// lanes' registers `regs` (the first `num` of each) describe.
pub fn stmatrix(regs: &[[u32; 4]; MATRIX_LANES], num: usize, trans: bool) -> Vec<[u16; 8]> {
    let num = num.min(4);
    let mut rows = vec![[0u16; 8]; num * MATRIX_ROWS];
    for (l, lane) in regs.iter().enumerate() {
        for (i, &v) in lane.iter().enumerate().take(num) {
            let m = &mut rows[i * MATRIX_ROWS..][..MATRIX_ROWS];
            let (r0, c0) = position(l, 0, trans);
            let (r1, c1) = position(l, 1, trans);
            m[r0][c0] = v as u16;
            m[r1][c1] = (v >> 16) as u16;
        }
    }
    rows
}
