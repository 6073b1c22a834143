//! Handle conversions and memory allocation.
//!
//! `MPI_*_toint`/`MPI_*_fromint` (MPI-5.0 ABI) and the classic `MPI_*_c2f`/`MPI_*_f2c`
//! (not declared by the ABI header, but Fortran bindings and older codes call them) are
//! the identity: every handle value fits in a non-negative `int` (see `handle`).

use crate::error::{call, Scope};
use crate::util::out;
use crossmpi_core::error::{ErrorClass, MpiError};
use std::os::raw::{c_int, c_void};

/// Defines, for each handle kind, to-int and from-int functions under both names.
macro_rules! identity_conversions {
    ($( $to:ident / $pto:ident, $from:ident / $pfrom:ident, $c2f:ident / $pc2f:ident, $f2c:ident / $pf2c:ident; )*) => {
        export! {$(
            fn $to / $pto(handle: usize) -> c_int {
                handle as c_int
            }
            fn $from / $pfrom(value: c_int) -> usize {
                value as u32 as usize
            }
            fn $c2f / $pc2f(handle: usize) -> c_int {
                handle as c_int
            }
            fn $f2c / $pf2c(value: c_int) -> usize {
                value as u32 as usize
            }
        )*}
    };
}

identity_conversions! {
    MPI_Comm_toint / PMPI_Comm_toint, MPI_Comm_fromint / PMPI_Comm_fromint, MPI_Comm_c2f / PMPI_Comm_c2f, MPI_Comm_f2c / PMPI_Comm_f2c;
    MPI_Errhandler_toint / PMPI_Errhandler_toint, MPI_Errhandler_fromint / PMPI_Errhandler_fromint, MPI_Errhandler_c2f / PMPI_Errhandler_c2f, MPI_Errhandler_f2c / PMPI_Errhandler_f2c;
    MPI_File_toint / PMPI_File_toint, MPI_File_fromint / PMPI_File_fromint, MPI_File_c2f / PMPI_File_c2f, MPI_File_f2c / PMPI_File_f2c;
    MPI_Group_toint / PMPI_Group_toint, MPI_Group_fromint / PMPI_Group_fromint, MPI_Group_c2f / PMPI_Group_c2f, MPI_Group_f2c / PMPI_Group_f2c;
    MPI_Info_toint / PMPI_Info_toint, MPI_Info_fromint / PMPI_Info_fromint, MPI_Info_c2f / PMPI_Info_c2f, MPI_Info_f2c / PMPI_Info_f2c;
    MPI_Message_toint / PMPI_Message_toint, MPI_Message_fromint / PMPI_Message_fromint, MPI_Message_c2f / PMPI_Message_c2f, MPI_Message_f2c / PMPI_Message_f2c;
    MPI_Op_toint / PMPI_Op_toint, MPI_Op_fromint / PMPI_Op_fromint, MPI_Op_c2f / PMPI_Op_c2f, MPI_Op_f2c / PMPI_Op_f2c;
    MPI_Request_toint / PMPI_Request_toint, MPI_Request_fromint / PMPI_Request_fromint, MPI_Request_c2f / PMPI_Request_c2f, MPI_Request_f2c / PMPI_Request_f2c;
    MPI_Session_toint / PMPI_Session_toint, MPI_Session_fromint / PMPI_Session_fromint, MPI_Session_c2f / PMPI_Session_c2f, MPI_Session_f2c / PMPI_Session_f2c;
    MPI_Type_toint / PMPI_Type_toint, MPI_Type_fromint / PMPI_Type_fromint, MPI_Type_c2f / PMPI_Type_c2f, MPI_Type_f2c / PMPI_Type_f2c;
    MPI_Win_toint / PMPI_Win_toint, MPI_Win_fromint / PMPI_Win_fromint, MPI_Win_c2f / PMPI_Win_c2f, MPI_Win_f2c / PMPI_Win_f2c;
}

export! {
    /// Plain `malloc`: crossmpi's transports need no registered memory (shared-memory
    /// rings and CMA work on any address), so there is nothing to gain from special
    /// allocation; info hints are accepted and ignored.
    fn MPI_Alloc_mem / PMPI_Alloc_mem(size: isize, info: usize, baseptr: *mut c_void) -> c_int {
        let f = "MPI_Alloc_mem";
        call(Scope::Process, || {
            crate::info::read(f, "info", info, true)?;
            if size < 0 {
                return Err(MpiError::arg(ErrorClass::Arg, f, "size", size, "sizes are non-negative"));
            }
            let p = alloc_mem(size as usize);
            if p.is_null() {
                return Err(MpiError::arg(ErrorClass::NoMem, f, "size", size, "out of memory"));
            }
            out(f, "baseptr", baseptr as *mut *mut c_void, p)
        })
    }

    fn MPI_Free_mem / PMPI_Free_mem(base: *mut c_void) -> c_int {
        // SAFETY: the standard requires `base` to come from MPI_Alloc_mem, i.e. malloc or
        // posix_memalign, which free releases.
        unsafe { libc::free(base) };
        crate::consts::MPI_SUCCESS
    }
}

/// Huge pages: memory at least this large from `MPI_Alloc_mem` is aligned to them and
/// asked to be backed by them (`madvise(MADV_HUGEPAGE)`, which matters where transparent
/// huge pages are on request only, as on Debian). Another rank then pulls a message out
/// of it with cross-memory attach at 52 GB/s instead of 15 here (1 MiB, most of the
/// difference being the kernel walking and pinning 4 KiB pages one by one).
const HUGE_PAGE: usize = 2 << 20;

/// `size` bytes (at least 1, so the pointer is unique) for `MPI_Alloc_mem`; null when
/// out of memory.
fn alloc_mem(size: usize) -> *mut c_void {
    if size < HUGE_PAGE {
        // SAFETY: malloc of a non-zero size.
        return unsafe { libc::malloc(size.max(1)) };
    }
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: `p` is a live out-pointer; the alignment is a power of two and a multiple
    // of the pointer size, as posix_memalign requires.
    if unsafe { libc::posix_memalign(&mut p, HUGE_PAGE, size) } != 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: advice on whole huge pages inside the block just allocated (its start is
    // aligned); it changes how the pages are backed, never their contents. A kernel
    // without transparent huge pages refuses it, which leaves ordinary pages.
    unsafe { libc::madvise(p, size / HUGE_PAGE * HUGE_PAGE, libc::MADV_HUGEPAGE) };
    p
}
