//! The command line's outputs: standard output that survives a closed pipe or a full disk,
//! and output files checked before a run starts, every error naming the path.
//!
//! `println!` panics when a write fails (exit 101): `gpusim run … | head -1` closes the pipe
//! after one line. `outln!` writes instead through `stdout_line`, which remembers the first
//! failure and drops what follows; `finish` turns it into the exit code — a broken pipe
//! (the reader has all it wanted) keeps the run's own status, any other failure (a full
//! disk) is reported and exits 2.

use std::fmt;
use std::io::{ErrorKind, Write};
use std::path::Path;
use std::sync::Mutex;

/// The first failed write to standard output, if any.
static STDOUT_FAILURE: Mutex<Option<std::io::Error>> = Mutex::new(None);

/// Write one line to standard output unless an earlier write failed (`outln!`).
pub fn stdout_line(args: fmt::Arguments) {
    stdout_write(format_args!("{args}\n"));
}

/// Write text to standard output unless an earlier write failed (`out!`).
pub fn stdout_write(args: fmt::Arguments) {
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|e| e.into_inner());
    if failure.is_some() {
        return;
    }
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        *failure = Some(e);
    }
}

/// Write one line to standard error; a closed standard error is ignored (there is nowhere
/// left to report it).
pub fn stderr_line(args: fmt::Arguments) {
    let _ = writeln!(std::io::stderr().lock(), "{args}");
}

/// `println!` that never panics: see the module doc.
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => { $crate::output::stdout_line(format_args!($($arg)*)) };
}

/// `print!` that never panics.
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::output::stdout_write(format_args!($($arg)*)) };
}

/// `eprintln!` that never panics.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => { $crate::output::stderr_line(format_args!($($arg)*)) };
}

/// The exit code once everything is written: `code` itself unless standard output failed for
/// another reason than a closed pipe, which is reported (exit 2).
pub fn finish(code: i32) -> i32 {
    let flushed = std::io::stdout().lock().flush();
    let mut failure = STDOUT_FAILURE.lock().unwrap_or_else(|e| e.into_inner());
    if let (None, Err(e)) = (failure.as_ref(), flushed) {
        *failure = Some(e);
    }
    match failure.as_ref() {
        None => code,
        Some(e) if e.kind() == ErrorKind::BrokenPipe => code,
        Some(e) => {
            stderr_line(format_args!("error: cannot write standard output: {e}"));
            2
        }
    }
}

/// Whether `path` can be written as an output file, checked before a run: not a directory, in
/// a directory that exists, creatable or writable. The file is not created (a probe that had
/// to create it removes it again). The error names the path and the reason.
pub fn check_file(path: &Path) -> Result<(), String> {
    let cannot = |why: String| format!("cannot write {}: {why}", path.display());
    if path.as_os_str().is_empty() {
        return Err("an output path is empty".into());
    }
    if path.is_dir() {
        return Err(cannot("it is a directory".into()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        let why = if parent.exists() {
            format!("{} is not a directory", parent.display())
        } else {
            format!("directory {} does not exist", parent.display())
        };
        return Err(cannot(why));
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| cannot(e.to_string()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Whether `dir` can hold output files: created if missing (with its parents), then probed
/// with a file that is removed again. The error names the path.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    let cannot = |why: String| format!("cannot write into {}: {why}", dir.display());
    if dir.exists() && !dir.is_dir() {
        return Err(cannot("it is not a directory".into()));
    }
    std::fs::create_dir_all(dir).map_err(|e| cannot(e.to_string()))?;
    let probe = dir.join(format!(".gpusim-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| cannot(e.to_string()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Write `bytes` to `path`; the error names the path.
pub fn write_file(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_are_checked_without_leaving_files() {
        let dir = std::env::temp_dir().join(format!("gpusim-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("stats.json");
        assert!(check_file(&file).is_ok());
        assert!(!file.exists(), "the probe must not leave the file");
        let e = check_file(&dir.join("missing/stats.json")).unwrap_err();
        assert!(e.contains("missing") && e.contains("does not exist"), "{e}");
        let e = check_file(&dir).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
        std::fs::write(&file, b"x").unwrap();
        let e = check_dir(&file).unwrap_err();
        assert!(e.contains("not a directory"), "{e}");
        assert!(check_dir(&dir.join("dump/a")).is_ok());
        assert!(dir.join("dump/a").is_dir());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
