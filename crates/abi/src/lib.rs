//! The C ABI surface: `libmpi_abi.so.1`, the MPI-5.0 standard ABI.
//!
//! Every function exists twice, as `PMPI_X` (the implementation) and `MPI_X` (calling
//! it), so profiling tools can define `MPI_X` and reach crossmpi through `PMPI_X`. The
//! attribute calls whose values differ between C and Fortran exist a third time, as
//! `crossmpi_fortran_x`, which the Fortran bindings call (attr.rs). The
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

/// Defines `PMPI_X` and `MPI_X` as [`export!`] does, and `crossmpi_fortran_x` with the
/// same prototype: the entry the Fortran bindings' wrapper of `MPI_X` calls instead
/// (docs/fortran.md, "Attribute values"). The body sees `$language` as
/// `attr::Language::C` in the first two, `attr::Language::Fortran` in the third: the
/// language whose view of attribute values the call takes.
macro_rules! export_with_fortran {
    ($( |$language:ident| fn $mpi:ident / $pmpi:ident / $fortran:ident ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty $body:block )*) => {$(
        export! {
            fn $mpi / $pmpi($($arg: $ty),*) -> $ret {
                let $language = $crate::attr::Language::C;
                $body
            }
        }

        #[no_mangle]
        pub extern "C" fn $fortran($($arg: $ty),*) -> $ret {
            let $language = $crate::attr::Language::Fortran;
            $body
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
