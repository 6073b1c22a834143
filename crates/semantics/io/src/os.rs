//! The system calls under the file logic: positioned reads and writes that finish
//! their whole range, whole-file advisory locks, preallocation.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

/// Reads into `buf` from `offset` until it is full or the file ends; returns the bytes
/// read.
pub fn read_at(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match f.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

pub fn write_at(f: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    f.write_all_at(buf, offset)
}

/// A whole-file advisory lock (`flock`), released when dropped. Each process opens
/// its own descriptor, so the lock orders the processes of a job (and of other jobs).
pub struct Lock<'a> {
    f: &'a File,
}

impl<'a> Lock<'a> {
    pub fn new(f: &'a File, exclusive: bool) -> io::Result<Lock<'a>> {
        let op = if exclusive {
            libc::LOCK_EX
        } else {
            libc::LOCK_SH
        };
        loop {
            // SAFETY: flock on a descriptor this File owns; no memory is passed.
            let rc = unsafe { libc::flock(f.as_raw_fd(), op) };
            if rc == 0 {
                return Ok(Lock { f });
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        // SAFETY: as in `new`; unlocking a descriptor we locked cannot fail meaningfully.
        unsafe { libc::flock(self.f.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// The data file as accesses use it: in atomic mode every access holds the file lock
/// (exclusive to write, shared to read) around its system calls.
#[derive(Clone, Copy)]
pub struct Disk<'a> {
    pub file: &'a File,
    pub atomic: bool,
}

impl<'a> Disk<'a> {
    /// The lock of one access (none outside atomic mode).
    pub fn lock(&self, exclusive: bool) -> io::Result<Option<Lock<'a>>> {
        if self.atomic {
            Lock::new(self.file, exclusive).map(Some)
        } else {
            Ok(None)
        }
    }
}

/// Reserves storage for the first `size` bytes (growing the file if shorter); file
/// systems without `fallocate` get the size only.
pub fn preallocate(f: &File, size: u64) -> io::Result<()> {
    // SAFETY: posix_fallocate on a descriptor this File owns; no memory is passed.
    let rc = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, size as libc::off_t) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => {
            if f.metadata()?.len() < size {
                f.set_len(size)?;
            }
            Ok(())
        }
        e => Err(io::Error::from_raw_os_error(e)),
    }
}
