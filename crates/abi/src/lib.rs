//! The C ABI surface: `libmpi_abi.so.1`, the MPI-5.0 standard ABI.
//!
//! Every function exists twice, as `PMPI_X` (the implementation) and `MPI_X` (calling
//! it), so profiling tools can define `MPI_X` and reach crossmpi through `PMPI_X`. The
//! functions convert handles and pointers, check every argument (naming the function,
//! the argument and the value in the error), call the core, and hand errors to the
//! error handler in charge.
//!
//! Owns: handles, C pointers, argument checks, error handlers. Must not touch: protocol
//! logic (crossmpi-core).

// Exported functions take raw pointers from C callers; the MPI standard is the contract
// that makes them valid, and each dereference states which rule it relies on.
#![allow(
    clippy::not_unsafe_ptr_arg_deref,
    clippy::missing_safety_doc,
    clippy::too_many_arguments
)]

/// Defines `PMPI_X` with the body and `MPI_X` as a call to it, both exported.
macro_rules! export {
    ($( $(#[$meta:meta])* fn $mpi:ident / $pmpi:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $body:block )*) => {$(
        $(#[$meta])*
        #[no_mangle]
        pub extern "C" fn $pmpi($($arg: $ty),*) -> $ret $body

        #[no_mangle]
        pub extern "C" fn $mpi($($arg: $ty),*) -> $ret {
            $pmpi($($arg),*)
        }
    )*};
}

mod attr;
mod coll;
mod coll_exports;
mod comm;
mod comm_create;
mod consts;
mod convert;
mod datatype;
mod env;
mod error;
mod file;
mod file_datarep;
mod file_errors;
mod group;
mod handle;
mod info;
mod mpi4_buffers;
mod mpi4_dynamic;
mod mpi4_env;
mod mpi4_large_counts;
mod mpi4_partitioned;
mod mpi4_persistent;
mod mpi4_requests;
mod mpi4_session;
mod mpi4_status;
mod mpi4_tool_events;
mod op;
mod p2p;
mod pack;
mod tool;
mod tool_events;
mod topo;
mod types;
mod util;
mod win;
mod win_attr;
mod win_ops;
