//! `MPI_File_*`: file handles, argument checks and the calls, on crossmpi-io's `File`.
//! Nonblocking accesses run to completion when they start and return a completed
//! request (the standard allows an operation to complete at once); split collectives do
//! their access in `_begin` and report it in `_end`.

use crate::consts::*;
use crate::error::{self, CommErrhandlerFn};
use crate::file_datarep::{self, Conversion, ConversionFn, ConversionFnC, ExtentFn, Functions};
use crate::file_errors::{self, raise};
use crate::handle::{self, store_status, Kind, MpiStatus};
use crate::util::{in_string, out, out_string};
use crate::{comm, group, info, p2p, types};
use crossmpi_core::coll::Members;
use crossmpi_core::error::{ErrorClass, MpiError};
use crossmpi_core::request::{Request, Status};
use crossmpi_core::runtime;
use crossmpi_core::slab::Slab;
use crossmpi_io::{At, File, FileClass, IoError, IoResult, Whence};
use std::os::raw::{c_char, c_int, c_void};
use std::sync::{Arc, Mutex};

/// An open file and what the ABI keeps beside it.
struct Entry {
    /// None once closed (a racing call then finds no file).
    file: Mutex<Option<File>>,
    errhandler: Mutex<usize>,
    info: Mutex<info::Pairs>,
}

static FILES: Mutex<Slab<Arc<Entry>>> = Mutex::new(Slab::new_const());

fn files() -> std::sync::MutexGuard<'static, Slab<Arc<Entry>>> {
    FILES.lock().unwrap_or_else(|p| p.into_inner())
}

fn bad_file(function: &str, fh: usize, why: &str) -> IoError {
    IoError::file(FileClass::File, function, "fh", handle::describe(fh), why)
}

fn entry(function: &str, fh: usize) -> IoResult<Arc<Entry>> {
    if fh == MPI_FILE_NULL {
        return Err(bad_file(function, fh, "MPI_FILE_NULL is not an open file"));
    }
    let slot = handle::decode(Kind::File, fh)
        .ok_or_else(|| bad_file(function, fh, "not a file handle"))?;
    files()
        .by_index(slot)
        .map(|(_, e)| e.clone())
        .ok_or_else(|| bad_file(function, fh, "closed or never opened"))
}

/// The handler errors on `fh` go to: its own, or `MPI_FILE_NULL`'s for a bad handle.
fn handler_of(fh: usize) -> usize {
    match entry("", fh) {
        Ok(e) => *e.errhandler.lock().unwrap_or_else(|p| p.into_inner()),
        Err(_) => file_errors::default_handler(),
    }
}

/// Runs a call's body and hands its error to the error handler of `fh`.
fn call(fh: usize, body: impl FnOnce() -> IoResult<()>) -> c_int {
    match body() {
        Ok(()) => MPI_SUCCESS,
        Err(e) => raise(handler_of(fh), fh, &e),
    }
}

/// Runs `body` on the open file `fh`.
fn with_file<R>(
    function: &str,
    fh: usize,
    body: impl FnOnce(&mut File) -> IoResult<R>,
) -> IoResult<R> {
    let e = entry(function, fh)?;
    let mut guard = e.file.lock().unwrap_or_else(|p| p.into_inner());
    let file = guard
        .as_mut()
        .ok_or_else(|| bad_file(function, fh, "closed by another thread"))?;
    body(file)
}

fn offset(function: &str, o: i64) -> IoResult<u64> {
    u64::try_from(o).map_err(|_| {
        IoError::core(
            ErrorClass::Arg,
            function,
            "offset",
            o,
            "offsets cannot be negative",
        )
    })
}

fn put<T>(function: &str, arg: &str, p: *mut T, v: T) -> IoResult<()> {
    Ok(out(function, arg, p, v)?)
}

/// Where an access starts.
#[derive(Clone, Copy)]
enum Pos {
    At(i64),
    Individual,
    Shared,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    ReadAll,
    WriteAll,
}

/// How an access reports completion.
#[derive(Clone, Copy)]
enum Done {
    Status(*mut MpiStatus),
    Request(*mut usize),
    /// The `_begin` of a split collective.
    Begin,
}

fn file_status(bytes: u64) -> Status {
    Status {
        bytes,
        ..Status::default()
    }
}

#[allow(clippy::too_many_arguments)]
fn access(
    f: &'static str,
    fh: usize,
    pos: Pos,
    buf: *mut c_void,
    n: i64,
    datatype: usize,
    op: Op,
    done: Done,
) -> c_int {
    call(fh, || {
        let b = p2p::buffer(f, buf, n, datatype)?;
        let at = match pos {
            Pos::At(o) => At::Offset(offset(f, o)?),
            Pos::Individual => At::Individual,
            Pos::Shared => At::Shared,
        };
        with_file(f, fh, |file| {
            if let Done::Begin = done {
                file.split_idle(f)?;
            }
            let bytes = match op {
                Op::Read => file.read(f, at, &b, false)?,
                Op::Write => file.write(f, at, &b, false)?,
                Op::ReadAll => file.read(f, at, &b, true)?,
                Op::WriteAll => file.write(f, at, &b, true)?,
            };
            match done {
                Done::Status(s) => {
                    store_status(s, &file_status(bytes));
                    Ok(())
                }
                Done::Request(r) => {
                    let id = runtime::with(f, |rt| {
                        Ok(rt.st.requests.insert(Request::done(file_status(bytes))))
                    })?;
                    put(f, "request", r, handle::encode(Kind::Request, id.index))
                }
                Done::Begin => file.begin_split(f, bytes),
            }
        })
    })
}

fn end(f: &'static str, begin: &str, fh: usize, status: *mut MpiStatus) -> c_int {
    call(fh, || {
        let bytes = with_file(f, fh, |file| file.end_split(f, begin))?;
        store_status(status, &file_status(bytes));
        Ok(())
    })
}

/// Each access in its `int`-count and `MPI_Count` (`_c`) forms.
macro_rules! accesses {
    ($( $shape:ident $mpi:ident / $pmpi:ident, $mpic:ident / $pmpic:ident => $pos:ident, $op:ident; )*) => {$(
        accesses!(@one $shape $mpi / $pmpi, c_int, $pos, $op);
        accesses!(@one $shape $mpic / $pmpic, i64, $pos, $op);
    )*};
    (@one status $mpi:ident / $pmpi:ident, $n:ty, At, $op:ident) => { export! {
        fn $mpi / $pmpi(fh: usize, offset: i64, buf: *mut c_void, count: $n, datatype: usize, status: *mut MpiStatus) -> c_int {
            access(stringify!($mpi), fh, Pos::At(offset), buf, count as i64, datatype, Op::$op, Done::Status(status))
        }
    }};
    (@one status $mpi:ident / $pmpi:ident, $n:ty, $pos:ident, $op:ident) => { export! {
        fn $mpi / $pmpi(fh: usize, buf: *mut c_void, count: $n, datatype: usize, status: *mut MpiStatus) -> c_int {
            access(stringify!($mpi), fh, Pos::$pos, buf, count as i64, datatype, Op::$op, Done::Status(status))
        }
    }};
    (@one request $mpi:ident / $pmpi:ident, $n:ty, At, $op:ident) => { export! {
        fn $mpi / $pmpi(fh: usize, offset: i64, buf: *mut c_void, count: $n, datatype: usize, request: *mut usize) -> c_int {
            access(stringify!($mpi), fh, Pos::At(offset), buf, count as i64, datatype, Op::$op, Done::Request(request))
        }
    }};
    (@one request $mpi:ident / $pmpi:ident, $n:ty, $pos:ident, $op:ident) => { export! {
        fn $mpi / $pmpi(fh: usize, buf: *mut c_void, count: $n, datatype: usize, request: *mut usize) -> c_int {
            access(stringify!($mpi), fh, Pos::$pos, buf, count as i64, datatype, Op::$op, Done::Request(request))
        }
    }};
    (@one begin $mpi:ident / $pmpi:ident, $n:ty, At, $op:ident) => { export! {
        fn $mpi / $pmpi(fh: usize, offset: i64, buf: *mut c_void, count: $n, datatype: usize) -> c_int {
            access(stringify!($mpi), fh, Pos::At(offset), buf, count as i64, datatype, Op::$op, Done::Begin)
        }
    }};
    (@one begin $mpi:ident / $pmpi:ident, $n:ty, $pos:ident, $op:ident) => { export! {
        fn $mpi / $pmpi(fh: usize, buf: *mut c_void, count: $n, datatype: usize) -> c_int {
            access(stringify!($mpi), fh, Pos::$pos, buf, count as i64, datatype, Op::$op, Done::Begin)
        }
    }};
}

accesses! {
    status MPI_File_read_at / PMPI_File_read_at, MPI_File_read_at_c / PMPI_File_read_at_c => At, Read;
    status MPI_File_write_at / PMPI_File_write_at, MPI_File_write_at_c / PMPI_File_write_at_c => At, Write;
    status MPI_File_read_at_all / PMPI_File_read_at_all, MPI_File_read_at_all_c / PMPI_File_read_at_all_c => At, ReadAll;
    status MPI_File_write_at_all / PMPI_File_write_at_all, MPI_File_write_at_all_c / PMPI_File_write_at_all_c => At, WriteAll;
    status MPI_File_read / PMPI_File_read, MPI_File_read_c / PMPI_File_read_c => Individual, Read;
    status MPI_File_write / PMPI_File_write, MPI_File_write_c / PMPI_File_write_c => Individual, Write;
    status MPI_File_read_all / PMPI_File_read_all, MPI_File_read_all_c / PMPI_File_read_all_c => Individual, ReadAll;
    status MPI_File_write_all / PMPI_File_write_all, MPI_File_write_all_c / PMPI_File_write_all_c => Individual, WriteAll;
    status MPI_File_read_shared / PMPI_File_read_shared, MPI_File_read_shared_c / PMPI_File_read_shared_c => Shared, Read;
    status MPI_File_write_shared / PMPI_File_write_shared, MPI_File_write_shared_c / PMPI_File_write_shared_c => Shared, Write;
    status MPI_File_read_ordered / PMPI_File_read_ordered, MPI_File_read_ordered_c / PMPI_File_read_ordered_c => Shared, ReadAll;
    status MPI_File_write_ordered / PMPI_File_write_ordered, MPI_File_write_ordered_c / PMPI_File_write_ordered_c => Shared, WriteAll;
    request MPI_File_iread_at / PMPI_File_iread_at, MPI_File_iread_at_c / PMPI_File_iread_at_c => At, Read;
    request MPI_File_iwrite_at / PMPI_File_iwrite_at, MPI_File_iwrite_at_c / PMPI_File_iwrite_at_c => At, Write;
    request MPI_File_iread_at_all / PMPI_File_iread_at_all, MPI_File_iread_at_all_c / PMPI_File_iread_at_all_c => At, ReadAll;
    request MPI_File_iwrite_at_all / PMPI_File_iwrite_at_all, MPI_File_iwrite_at_all_c / PMPI_File_iwrite_at_all_c => At, WriteAll;
    request MPI_File_iread / PMPI_File_iread, MPI_File_iread_c / PMPI_File_iread_c => Individual, Read;
    request MPI_File_iwrite / PMPI_File_iwrite, MPI_File_iwrite_c / PMPI_File_iwrite_c => Individual, Write;
    request MPI_File_iread_all / PMPI_File_iread_all, MPI_File_iread_all_c / PMPI_File_iread_all_c => Individual, ReadAll;
    request MPI_File_iwrite_all / PMPI_File_iwrite_all, MPI_File_iwrite_all_c / PMPI_File_iwrite_all_c => Individual, WriteAll;
    request MPI_File_iread_shared / PMPI_File_iread_shared, MPI_File_iread_shared_c / PMPI_File_iread_shared_c => Shared, Read;
    request MPI_File_iwrite_shared / PMPI_File_iwrite_shared, MPI_File_iwrite_shared_c / PMPI_File_iwrite_shared_c => Shared, Write;
    begin MPI_File_read_at_all_begin / PMPI_File_read_at_all_begin, MPI_File_read_at_all_begin_c / PMPI_File_read_at_all_begin_c => At, ReadAll;
    begin MPI_File_write_at_all_begin / PMPI_File_write_at_all_begin, MPI_File_write_at_all_begin_c / PMPI_File_write_at_all_begin_c => At, WriteAll;
    begin MPI_File_read_all_begin / PMPI_File_read_all_begin, MPI_File_read_all_begin_c / PMPI_File_read_all_begin_c => Individual, ReadAll;
    begin MPI_File_write_all_begin / PMPI_File_write_all_begin, MPI_File_write_all_begin_c / PMPI_File_write_all_begin_c => Individual, WriteAll;
    begin MPI_File_read_ordered_begin / PMPI_File_read_ordered_begin, MPI_File_read_ordered_begin_c / PMPI_File_read_ordered_begin_c => Shared, ReadAll;
    begin MPI_File_write_ordered_begin / PMPI_File_write_ordered_begin, MPI_File_write_ordered_begin_c / PMPI_File_write_ordered_begin_c => Shared, WriteAll;
}

/// The `_end` of each split collective, named after its `_begin`.
macro_rules! ends {
    ($( $mpi:ident / $pmpi:ident => $begin:literal; )*) => { export! {$(
        fn $mpi / $pmpi(fh: usize, _buf: *mut c_void, status: *mut MpiStatus) -> c_int {
            end(stringify!($mpi), $begin, fh, status)
        }
    )*}};
}

ends! {
    MPI_File_read_at_all_end / PMPI_File_read_at_all_end => "MPI_File_read_at_all_begin";
    MPI_File_write_at_all_end / PMPI_File_write_at_all_end => "MPI_File_write_at_all_begin";
    MPI_File_read_all_end / PMPI_File_read_all_end => "MPI_File_read_all_begin";
    MPI_File_write_all_end / PMPI_File_write_all_end => "MPI_File_write_all_begin";
    MPI_File_read_ordered_end / PMPI_File_read_ordered_end => "MPI_File_read_ordered_begin";
    MPI_File_write_ordered_end / PMPI_File_write_ordered_end => "MPI_File_write_ordered_begin";
}

/// A type handle for `MPI_File_get_view`: the predefined handle, else a new committed
/// handle the application frees (as the standard says for derived types).
fn type_handle(t: &crossmpi_core::datatype::Datatype) -> usize {
    if let Some(h) = t.basic_kind().and_then(types::predefined_handle) {
        return h;
    }
    let h = types::create(t.dup());
    types::commit(h);
    h
}

export! {
    fn MPI_File_open / PMPI_File_open(comm: usize, filename: *const c_char, amode: c_int, info: usize, fh: *mut usize) -> c_int {
        let f = "MPI_File_open";
        call(MPI_FILE_NULL, || {
            let id = runtime::with(f, |rt| {
                let id = comm::resolve(rt, f, comm)?;
                if rt.comm(f, id)?.remote.is_some() {
                    return Err(MpiError::arg(ErrorClass::Comm, f, "comm", handle::describe(comm), "an intercommunicator cannot open files"));
                }
                Ok(id)
            })?;
            let path = in_string(f, "filename", filename)?;
            let hints = info::read(f, "info", info, true)?;
            if fh.is_null() {
                return put(f, "fh", fh, 0);
            }
            let file = File::open(f, id, &path, amode)?;
            let e = Arc::new(Entry {
                file: Mutex::new(Some(file)),
                errhandler: Mutex::new(file_errors::default_handler()),
                info: Mutex::new(hints),
            });
            let slot = files().insert(e).index;
            put(f, "fh", fh, handle::encode(Kind::File, slot))
        })
    }

    fn MPI_File_close / PMPI_File_close(fh: *mut usize) -> c_int {
        let f = "MPI_File_close";
        if fh.is_null() {
            return call(MPI_FILE_NULL, || Err(IoError::core(ErrorClass::Arg, f, "fh", "NULL", "a pointer to a file handle is required")));
        }
        // SAFETY: a non-null MPI_File* points to the caller's handle (C ABI contract).
        let h = unsafe { *fh };
        call(h, || {
            let e = entry(f, h)?;
            let file = e.file.lock().unwrap_or_else(|p| p.into_inner()).take();
            let file = file.ok_or_else(|| bad_file(f, h, "closed by another thread"))?;
            if let Some(slot) = handle::decode(Kind::File, h) {
                let mut all = files();
                if let Some((id, _)) = all.by_index(slot) {
                    all.remove(id);
                }
            }
            put(f, "fh", fh, MPI_FILE_NULL)?;
            file.close(f)
        })
    }

    fn MPI_File_delete / PMPI_File_delete(filename: *const c_char, info: usize) -> c_int {
        let f = "MPI_File_delete";
        call(MPI_FILE_NULL, || {
            info::read(f, "info", info, true)?;
            File::delete(f, &in_string(f, "filename", filename)?)
        })
    }

    fn MPI_File_set_size / PMPI_File_set_size(fh: usize, size: i64) -> c_int {
        let f = "MPI_File_set_size";
        call(fh, || with_file(f, fh, |file| file.resize(f, offset(f, size)?, false)))
    }

    fn MPI_File_preallocate / PMPI_File_preallocate(fh: usize, size: i64) -> c_int {
        let f = "MPI_File_preallocate";
        call(fh, || with_file(f, fh, |file| file.resize(f, offset(f, size)?, true)))
    }

    fn MPI_File_get_size / PMPI_File_get_size(fh: usize, size: *mut i64) -> c_int {
        let f = "MPI_File_get_size";
        call(fh, || {
            let s = with_file(f, fh, |file| file.size(f))?;
            put(f, "size", size, s as i64)
        })
    }

    fn MPI_File_get_group / PMPI_File_get_group(fh: usize, group: *mut usize) -> c_int {
        let f = "MPI_File_get_group";
        call(fh, || {
            let comm = with_file(f, fh, |file| Ok(file.comm()))?;
            let comm = comm.ok_or_else(|| bad_file(f, fh, "has no communicator"))?;
            let g = Members::of(f, comm)?.group;
            put(f, "group", group, group::new_handle(g))
        })
    }

    fn MPI_File_get_amode / PMPI_File_get_amode(fh: usize, amode: *mut c_int) -> c_int {
        let f = "MPI_File_get_amode";
        call(fh, || {
            let m = with_file(f, fh, |file| Ok(file.amode.0))?;
            put(f, "amode", amode, m)
        })
    }

    fn MPI_File_set_info / PMPI_File_set_info(fh: usize, info: usize) -> c_int {
        let f = "MPI_File_set_info";
        call(fh, || {
            let pairs = info::read(f, "info", info, true)?;
            let e = entry(f, fh)?;
            let mut kept = e.info.lock().unwrap_or_else(|p| p.into_inner());
            for (k, v) in pairs {
                kept.retain(|(key, _)| *key != k);
                kept.push((k, v));
            }
            Ok(())
        })
    }

    fn MPI_File_get_info / PMPI_File_get_info(fh: usize, info_used: *mut usize) -> c_int {
        let f = "MPI_File_get_info";
        call(fh, || {
            let pairs = entry(f, fh)?.info.lock().unwrap_or_else(|p| p.into_inner()).clone();
            put(f, "info_used", info_used, info::create(pairs))
        })
    }

    fn MPI_File_set_view / PMPI_File_set_view(fh: usize, disp: i64, etype: usize, filetype: usize, datarep: *const c_char, info: usize) -> c_int {
        let f = "MPI_File_set_view";
        call(fh, || {
            let disp = match disp {
                d if d == MPI_DISPLACEMENT_CURRENT as i64 => None,
                d => Some(u64::try_from(d).map_err(|_| IoError::core(ErrorClass::Arg, f, "disp", d, "displacements cannot be negative"))?),
            };
            let etype = types::committed(f, "etype", etype)?;
            let filetype = types::committed(f, "filetype", filetype)?;
            let datarep = in_string(f, "datarep", datarep)?;
            info::read(f, "info", info, true)?;
            with_file(f, fh, |file| file.set_view(f, disp, etype, filetype, &datarep))
        })
    }

    fn MPI_File_get_view / PMPI_File_get_view(fh: usize, disp: *mut i64, etype: *mut usize, filetype: *mut usize, datarep: *mut c_char) -> c_int {
        let f = "MPI_File_get_view";
        call(fh, || {
            let v = with_file(f, fh, |file| Ok(file.view().clone()))?;
            put(f, "disp", disp, v.disp as i64)?;
            put(f, "etype", etype, type_handle(&v.etype))?;
            put(f, "filetype", filetype, type_handle(&v.filetype))?;
            Ok(out_string(f, "datarep", datarep, std::ptr::null_mut(), v.datarep.name(), MPI_MAX_DATAREP_STRING as usize)?)
        })
    }

    fn MPI_File_get_type_extent / PMPI_File_get_type_extent(fh: usize, datatype: usize, extent: *mut isize) -> c_int {
        let f = "MPI_File_get_type_extent";
        call(fh, || {
            let e = type_extent(f, fh, datatype)?;
            put(f, "extent", extent, e as isize)
        })
    }

    fn MPI_File_get_type_extent_c / PMPI_File_get_type_extent_c(fh: usize, datatype: usize, extent: *mut i64) -> c_int {
        let f = "MPI_File_get_type_extent_c";
        call(fh, || {
            let e = type_extent(f, fh, datatype)?;
            put(f, "extent", extent, e)
        })
    }

    fn MPI_File_seek / PMPI_File_seek(fh: usize, offset: i64, whence: c_int) -> c_int {
        let f = "MPI_File_seek";
        call(fh, || {
            let w = Whence::parse(f, whence)?;
            with_file(f, fh, |file| file.seek(f, offset, w))
        })
    }

    fn MPI_File_seek_shared / PMPI_File_seek_shared(fh: usize, offset: i64, whence: c_int) -> c_int {
        let f = "MPI_File_seek_shared";
        call(fh, || {
            let w = Whence::parse(f, whence)?;
            with_file(f, fh, |file| file.seek_shared(f, offset, w))
        })
    }

    fn MPI_File_get_position / PMPI_File_get_position(fh: usize, offset: *mut i64) -> c_int {
        let f = "MPI_File_get_position";
        call(fh, || {
            let p = with_file(f, fh, |file| Ok(file.position()))?;
            put(f, "offset", offset, p as i64)
        })
    }

    fn MPI_File_get_position_shared / PMPI_File_get_position_shared(fh: usize, offset: *mut i64) -> c_int {
        let f = "MPI_File_get_position_shared";
        call(fh, || {
            let p = with_file(f, fh, |file| file.position_shared(f))?;
            put(f, "offset", offset, p as i64)
        })
    }

    fn MPI_File_get_byte_offset / PMPI_File_get_byte_offset(fh: usize, offset: i64, disp: *mut i64) -> c_int {
        let f = "MPI_File_get_byte_offset";
        call(fh, || {
            let o = self::offset(f, offset)?;
            let b = with_file(f, fh, |file| Ok(file.byte_offset(o)))?;
            put(f, "disp", disp, b as i64)
        })
    }

    fn MPI_File_set_atomicity / PMPI_File_set_atomicity(fh: usize, flag: c_int) -> c_int {
        let f = "MPI_File_set_atomicity";
        call(fh, || with_file(f, fh, |file| file.set_atomicity(f, flag != 0)))
    }

    fn MPI_File_get_atomicity / PMPI_File_get_atomicity(fh: usize, flag: *mut c_int) -> c_int {
        let f = "MPI_File_get_atomicity";
        call(fh, || {
            let a = with_file(f, fh, |file| Ok(file.atomic()))?;
            put(f, "flag", flag, a as c_int)
        })
    }

    fn MPI_File_sync / PMPI_File_sync(fh: usize) -> c_int {
        let f = "MPI_File_sync";
        call(fh, || with_file(f, fh, |file| file.sync(f)))
    }

    fn MPI_File_create_errhandler / PMPI_File_create_errhandler(function: Option<CommErrhandlerFn>, errhandler: *mut usize) -> c_int {
        let f = "MPI_File_create_errhandler";
        call(MPI_FILE_NULL, || {
            let func = function.ok_or_else(|| IoError::core(ErrorClass::Arg, f, "file_errhandler_fn", "NULL", "a function is required"))?;
            put(f, "errhandler", errhandler, file_errors::create_handler(func))
        })
    }

    fn MPI_File_set_errhandler / PMPI_File_set_errhandler(file: usize, errhandler: usize) -> c_int {
        let f = "MPI_File_set_errhandler";
        call(file, || {
            error::check_handler(f, errhandler)?;
            if file == MPI_FILE_NULL {
                file_errors::set_default_handler(errhandler);
                return Ok(());
            }
            *entry(f, file)?.errhandler.lock().unwrap_or_else(|p| p.into_inner()) = errhandler;
            Ok(())
        })
    }

    fn MPI_File_get_errhandler / PMPI_File_get_errhandler(file: usize, errhandler: *mut usize) -> c_int {
        let f = "MPI_File_get_errhandler";
        call(file, || {
            let h = if file == MPI_FILE_NULL {
                file_errors::default_handler()
            } else {
                *entry(f, file)?.errhandler.lock().unwrap_or_else(|p| p.into_inner())
            };
            put(f, "errhandler", errhandler, h)
        })
    }

    fn MPI_File_call_errhandler / PMPI_File_call_errhandler(fh: usize, errorcode: c_int) -> c_int {
        let f = "MPI_File_call_errhandler";
        let message = error::string_of(errorcode).unwrap_or_default();
        let e = MpiError::new(ErrorClass::Other, format!("{f}: error code {errorcode}: {message}"));
        file_errors::dispatch(handler_of(fh), fh, &e, errorcode);
        MPI_SUCCESS
    }

    fn MPI_Register_datarep / PMPI_Register_datarep(datarep: *const c_char, read: Option<ConversionFn>, write: Option<ConversionFn>, extent: Option<ExtentFn>, extra: *mut c_void) -> c_int {
        let (read, write) = (read.map(Conversion::Int), write.map(Conversion::Int));
        let given = Functions { read, write, extent, extra, large: false };
        call(MPI_FILE_NULL, || file_datarep::register("MPI_Register_datarep", datarep, given))
    }

    fn MPI_Register_datarep_c / PMPI_Register_datarep_c(datarep: *const c_char, read: Option<ConversionFnC>, write: Option<ConversionFnC>, extent: Option<ExtentFn>, extra: *mut c_void) -> c_int {
        let (read, write) = (read.map(Conversion::Large), write.map(Conversion::Large));
        let given = Functions { read, write, extent, extra, large: true };
        call(MPI_FILE_NULL, || file_datarep::register("MPI_Register_datarep_c", datarep, given))
    }
}

/// `MPI_File_get_type_extent`: the extent in the file's representation (its sizes for
/// types whose data is dense, else the memory extent).
fn type_extent(f: &str, fh: usize, datatype: usize) -> IoResult<i64> {
    let t = types::lookup(f, "datatype", datatype)?;
    let rep = with_file(f, fh, |file| Ok(file.view().datarep.clone()))?;
    rep.type_extent(f, &t)
}
