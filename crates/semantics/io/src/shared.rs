//! The shared file pointer: an 8-byte counter (in etypes of the current view) in a
//! small file next to the data file, read and advanced under an exclusive `flock`.
//! A file beside the data works for every process that can reach the data, on one
//! node or over a shared file system, without any process serving requests.
//!
//! The counter file is created on first use (many programs never use the shared
//! pointer) under a name rank 0 chooses at open (host, pid and a counter, so separate
//! opens of one file keep separate pointers), and removed at close. Until the file
//! exists the pointer has its initial value (0, or the file's size when opened with
//! MPI_MODE_APPEND).

use crate::error::{IoError, IoResult};
use crate::os::{self, Lock};
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct SharedPointer {
    path: PathBuf,
    initial: u64,
    file: Option<File>,
}

impl SharedPointer {
    /// A name for the counter file of `data` (chosen by rank 0 and broadcast).
    pub fn name_for(data: &Path) -> PathBuf {
        static OPENS: AtomicU64 = AtomicU64::new(0);
        let n = OPENS.fetch_add(1, Ordering::Relaxed);
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_default();
        let base = data
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let name = format!(".{base}.crossmpi-shared-{host}-{}-{n}", std::process::id());
        data.with_file_name(name)
    }

    pub fn new(path: PathBuf, initial: u64) -> SharedPointer {
        SharedPointer {
            path,
            initial,
            file: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn open(&mut self, function: &str) -> IoResult<&File> {
        if self.file.is_none() {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&self.path)
                .map_err(|e| {
                    IoError::os(
                        function,
                        "creating the shared file pointer",
                        &self.path.display().to_string(),
                        &e,
                    )
                })?;
            self.file = Some(f);
        }
        Ok(self.file.as_ref().expect("opened above"))
    }

    /// Runs `update` on the pointer under the lock: it gets the current value and returns
    /// the new one; returns the value before.
    pub fn update(&mut self, function: &str, update: impl FnOnce(u64) -> u64) -> IoResult<u64> {
        let initial = self.initial;
        let shown = self.path.display().to_string();
        let f = self.open(function)?;
        let os_err = |what: &str, e: std::io::Error| IoError::os(function, what, &shown, &e);
        let _lock = Lock::new(f, true).map_err(|e| os_err("locking the shared file pointer", e))?;
        let mut raw = [0u8; 8];
        let n = os::read_at(f, &mut raw, 0)
            .map_err(|e| os_err("reading the shared file pointer", e))?;
        let old = if n == 8 {
            u64::from_le_bytes(raw)
        } else {
            initial
        };
        let new = update(old);
        if new != old || n != 8 {
            os::write_at(f, &new.to_le_bytes(), 0)
                .map_err(|e| os_err("writing the shared file pointer", e))?;
        }
        Ok(old)
    }

    /// Removes the counter file (at close, by one process).
    pub fn remove(&mut self) {
        self.file = None;
        let _ = std::fs::remove_file(&self.path);
    }
}
