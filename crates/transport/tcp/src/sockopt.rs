//! TCP-level socket options (`IPPROTO_TCP`), set and read: the one place this crate calls
//! `setsockopt` and `getsockopt`.

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// Sets TCP option `option` on `sock` to the bytes of `value`.
pub(crate) fn set(sock: &TcpStream, option: libc::c_int, value: &[u8]) -> io::Result<()> {
    // SAFETY: a valid socket descriptor, and a pointer to `value.len()` initialised bytes.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            option,
            value.as_ptr().cast(),
            value.len() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Reads TCP option `option` of `sock` into `buf`; returns how many bytes the kernel
/// filled (at most `buf.len()`).
pub(crate) fn get(sock: &TcpStream, option: libc::c_int, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: a valid socket descriptor, and a writable buffer of the length passed, of
    // which the kernel fills at most that many bytes.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_TCP,
            option,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as usize)
}
