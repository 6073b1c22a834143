//! Cross-memory attach: copying straight out of or into another process's memory with
//! `process_vm_readv` / `process_vm_writev` (one copy instead of two through the rings).
//! The kernel allows it between processes of the same user unless Yama's ptrace scope
//! forbids it; callers fall back to streaming through the rings when a copy fails.

use std::io;

/// Copies `dst.len()` bytes from address `remote_addr` in process `pid` into `dst`.
pub fn read_remote(pid: u32, remote_addr: usize, dst: &mut [u8]) -> io::Result<()> {
    let local = dst.as_mut_ptr() as usize;
    copy_all(dst.len(), "process_vm_readv", |done| {
        let (local, remote) = iovecs(local, remote_addr, done, dst.len());
        // SAFETY: `local` describes writable memory we own (a live &mut slice); the remote
        // range is validated by the kernel, which fails with EFAULT instead of faulting us.
        unsafe { libc::process_vm_readv(pid as libc::pid_t, &local, 1, &remote, 1, 0) }
    })
}

/// Copies `src` to address `remote_addr` in process `pid`.
pub fn write_remote(pid: u32, remote_addr: usize, src: &[u8]) -> io::Result<()> {
    let local = src.as_ptr() as usize;
    copy_all(src.len(), "process_vm_writev", |done| {
        let (local, remote) = iovecs(local, remote_addr, done, src.len());
        // SAFETY: `local` describes memory we own that the kernel only reads (a live
        // slice); the remote range is validated by the kernel, which fails with EFAULT.
        unsafe { libc::process_vm_writev(pid as libc::pid_t, &local, 1, &remote, 1, 0) }
    })
}

/// The local and remote ranges of a copy of `len` bytes between addresses `local` and
/// `remote`, of which `done` are copied.
fn iovecs(local: usize, remote: usize, done: usize, len: usize) -> (libc::iovec, libc::iovec) {
    let range = |at: usize| libc::iovec {
        iov_base: (at + done) as *mut libc::c_void,
        iov_len: len - done,
    };
    (range(local), range(remote))
}

/// Runs `copy` (which copies from byte `done` on and returns the bytes copied or -1)
/// until `len` bytes are copied: the kernel may copy less than asked.
fn copy_all(len: usize, what: &str, mut copy: impl FnMut(usize) -> isize) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        let n = copy(done);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{what} copied nothing"),
            ));
        }
        done += n as usize;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_our_own_memory() {
        let src: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; src.len()];
        read_remote(std::process::id(), src.as_ptr() as usize, &mut dst).unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn writes_our_own_memory() {
        let src: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        write_remote(std::process::id(), dst.as_mut_ptr() as usize, &src).unwrap();
        assert_eq!(src, dst);
    }

    #[test]
    fn a_bad_address_is_an_error_not_a_crash() {
        let mut dst = [0u8; 16];
        assert!(read_remote(std::process::id(), 8, &mut dst).is_err());
        assert!(write_remote(std::process::id(), 8, &dst).is_err());
    }
}
