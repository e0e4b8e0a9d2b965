//! Warp events: one record per issued instruction, for students stepping through a kernel and
//! for golden tests of the reconvergence state (`gpusim run --trace-warps FILE`). They flow
//! into a `TraceSink` as the SMs produce them: kept in memory, or streamed to a file.

use crate::simt::Mask;
use gpusim_isa::Pc;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WarpEvent {
    /// The launch of the run (0-based, in manifest order) and the cycle within it.
    pub launch: u32,
    pub cycle: u64,
    pub sm: u32,
    pub cta: [u32; 3],
    pub warp: u32,
    pub func: String,
    pub pc: Pc,
    pub line: u32,
    pub text: String,
    /// Lanes that executed the instruction (active and guard true).
    pub exec: Mask,
    /// The reconvergence state after the instruction, in the policy's own notation (sharing
    /// its tail with the warp's previous event: memory linear in the trace).
    pub after: gpusim_models::shared_text::SharedText,
}

impl fmt::Display for WarpEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:>8} sm{} cta({},{},{}) w{} {}:{:<4} line {:<4} exec {:#x}  {:<40} | {}",
            self.cycle,
            self.sm,
            self.cta[0],
            self.cta[1],
            self.cta[2],
            self.warp,
            self.func,
            self.pc,
            self.line,
            self.exec,
            self.text,
            self.after
        )
    }
}

/// Where warp events go as the simulator produces them, in order (cycle, then SM, then issue
/// order within an SM's cycle).
pub trait TraceSink {
    fn event(&mut self, e: WarpEvent);

    /// Where the timeline goes, when this run writes one (`crate::timeline`).
    fn timeline(&mut self) -> Option<&mut dyn crate::timeline::TimelineSink> {
        None
    }
}

/// Events kept in memory (`RunOutput::events`, for tests and `gpusim check`).
impl TraceSink for Vec<WarpEvent> {
    fn event(&mut self, e: WarpEvent) {
        self.push(e);
    }
}

/// A file of one line per event (`gpusim run --trace-warps FILE`), written as the events come
/// through a buffer: memory stays bounded however long the run. The first write error is
/// kept (later events are dropped) and reported by `finish`, with the path.
pub struct TraceWriter {
    path: PathBuf,
    out: BufWriter<File>,
    error: Option<std::io::Error>,
}

/// A trace file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the warp trace {}: {source}", path.display())]
pub struct TraceError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

impl TraceWriter {
    /// Create (or truncate) the file at `path`.
    pub fn create(path: &Path) -> Result<TraceWriter, TraceError> {
        let file = File::create(path).map_err(|source| TraceError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(TraceWriter {
            path: path.to_path_buf(),
            out: BufWriter::with_capacity(1 << 16, file),
            error: None,
        })
    }

    /// Flush what is buffered; the first error of any write, if there was one.
    pub fn finish(mut self) -> Result<(), TraceError> {
        let flushed = match self.error.take() {
            Some(e) => Err(e),
            None => self.out.flush(),
        };
        flushed.map_err(|source| TraceError {
            path: self.path.clone(),
            source,
        })
    }
}

impl TraceSink for TraceWriter {
    fn event(&mut self, e: WarpEvent) {
        if self.error.is_none() {
            if let Err(err) = writeln!(self.out, "{e}") {
                self.error = Some(err);
            }
        }
    }
}
