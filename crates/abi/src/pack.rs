//! `MPI_Pack`/`MPI_Unpack` (the native representation: the bytes a message carries) and
//! `MPI_Pack_external`/`MPI_Unpack_external` ("external32", the standard's portable
//! big-endian representation), with their size queries.

use crate::comm::with_comm;
use crate::datatype::type_error;
use crate::error::{call, Scope};
use crate::p2p::buffer;
use crate::types;
use crate::util::{count, in_string, out, slice};
use crossmpi_core::datatype::TypeError;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::userbuf::{self, UserBuf};
use std::os::raw::{c_char, c_int, c_void};

/// The packing buffer's room: `[position, position + len)` must lie in `[0, size)`.
fn room(function: &str, size_arg: &str, size: i64, position: i64, len: u64) -> MpiResult<usize> {
    if size < 0 {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            size_arg,
            size,
            "sizes cannot be negative",
        ));
    }
    if position < 0 || position > size {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "position",
            position,
            format!("outside the {size}-byte buffer"),
        ));
    }
    if len > (size - position) as u64 {
        return Err(MpiError::arg(
            ErrorClass::Truncate,
            function,
            size_arg,
            size,
            format!(
                "{len} bytes do not fit after position {position} ({} bytes left)",
                size - position
            ),
        ));
    }
    Ok(position as usize)
}

/// The packing buffer as a `UserBuf` of plain bytes (the only way core code reads or
/// writes application memory), after checking the pointer.
fn bytes_at(
    function: &str,
    arg: &str,
    p: *const c_void,
    at: usize,
    len: u64,
) -> MpiResult<UserBuf> {
    if len > 0 && p.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Buffer,
            function,
            arg,
            "NULL",
            format!("{len} bytes need a buffer"),
        ));
    }
    Ok(userbuf::bytes(p as usize + at, len as usize))
}

fn check_comm(function: &str, comm: usize) -> MpiResult<()> {
    with_comm(function, comm, |_, _| Ok(()))
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Pack,
    Unpack,
}

#[derive(Clone, Copy, PartialEq)]
enum Rep {
    Native,
    External32,
}

/// Moves `data` to or from the packing buffer at `position` (checked against its
/// `size`) and returns the position after it.
fn transfer(
    function: &str,
    way: Way,
    rep: Rep,
    data: UserBuf,
    packed: *const c_void,
    size: i64,
    position: i64,
) -> MpiResult<i64> {
    let len = match rep {
        Rep::Native => data.bytes(),
        Rep::External32 => data.dtype.external32_size(data.count),
    };
    let (size_arg, buf_arg) = match way {
        Way::Pack => ("outsize", "outbuf"),
        Way::Unpack => ("insize", "inbuf"),
    };
    let at = room(function, size_arg, size, position, len)?;
    let packed = bytes_at(function, buf_arg, packed, at, len)?;
    let external = |r: Result<(), TypeError>| r.map_err(|e| type_error(function, e));
    match (way, rep) {
        (Way::Pack, Rep::Native) => data.pack_into(0, packed.write().0),
        (Way::Unpack, Rep::Native) => data.unpack_from(0, packed.read().0),
        (Way::Pack, Rep::External32) => {
            let (mem, origin) = data.read();
            external(
                data.dtype
                    .pack_external32(mem, origin, data.count, packed.write().0),
            )?
        }
        (Way::Unpack, Rep::External32) => {
            let (mem, origin) = data.write();
            external(
                data.dtype
                    .unpack_external32(packed.read().0, mem, origin, data.count),
            )?
        }
    }
    Ok(position + len as i64)
}

fn pack_size(function: &str, incount: i64, datatype: usize, comm: usize) -> MpiResult<u64> {
    check_comm(function, comm)?;
    let n = count(function, "incount", incount)?;
    Ok(types::lookup(function, "datatype", datatype)?.packed_size(n))
}

/// Only "external32" is a data representation crossmpi knows.
fn check_datarep(function: &str, datarep: *const c_char) -> MpiResult<()> {
    let rep = in_string(function, "datarep", datarep)?;
    if rep != "external32" {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "datarep",
            format!("\"{rep}\""),
            "the only data representation is \"external32\"",
        ));
    }
    Ok(())
}

fn pack_external_size(
    function: &str,
    datarep: *const c_char,
    incount: i64,
    datatype: usize,
) -> MpiResult<u64> {
    check_datarep(function, datarep)?;
    let n = count(function, "incount", incount)?;
    Ok(types::lookup(function, "datatype", datatype)?.external32_size(n))
}

/// Reads the position argument, runs `step` from it and stores the new position.
fn advance<P: Copy + Into<i64> + TryFrom<i64>>(
    function: &str,
    position: *mut P,
    step: impl FnOnce(i64) -> MpiResult<i64>,
) -> MpiResult<()> {
    let from = slice(function, "position", position, 1)?[0].into();
    let to = step(from)?;
    let to = P::try_from(to).map_err(|_| {
        MpiError::arg(
            ErrorClass::Count,
            function,
            "position",
            to,
            "the new position does not fit the argument's type",
        )
    })?;
    out(function, "position", position, to)
}

/// Stores a size query's answer in an `int` or `MPI_Count`/`MPI_Aint` argument.
fn out_size<P: TryFrom<u64>>(function: &str, p: *mut P, size: u64) -> MpiResult<()> {
    let v = P::try_from(size).map_err(|_| {
        MpiError::arg(
            ErrorClass::Count,
            function,
            "size",
            size,
            "does not fit the argument's type (use the _c form)",
        )
    })?;
    out(function, "size", p, v)
}

/// `MPI_Pack`/`MPI_Unpack` in either width: `user` holds `count` elements of
/// `datatype`, `packed` is the packing buffer of `size` bytes.
fn native<P: Copy + Into<i64> + TryFrom<i64>>(
    function: &str,
    way: Way,
    user: *const c_void,
    count: i64,
    datatype: usize,
    packed: *const c_void,
    size: i64,
    position: *mut P,
    comm: usize,
) -> c_int {
    call(Scope::Comm(comm), || {
        check_comm(function, comm)?;
        let data = buffer(function, user, count, datatype)?;
        advance(function, position, |p| {
            transfer(function, way, Rep::Native, data, packed, size, p)
        })
    })
}

/// `MPI_Pack_external`/`MPI_Unpack_external` in either width, as `native`.
fn external(
    function: &str,
    way: Way,
    datarep: *const c_char,
    user: *const c_void,
    count: i64,
    datatype: usize,
    packed: *const c_void,
    size: i64,
    position: *mut i64,
) -> c_int {
    call(Scope::Process, || {
        check_datarep(function, datarep)?;
        let data = buffer(function, user, count, datatype)?;
        advance(function, position, |p| {
            transfer(function, way, Rep::External32, data, packed, size, p)
        })
    })
}

export! {
    fn MPI_Pack / PMPI_Pack(inbuf: *const c_void, incount: c_int, datatype: usize, outbuf: *mut c_void, outsize: c_int, position: *mut c_int, comm: usize) -> c_int {
        native("MPI_Pack", Way::Pack, inbuf, incount as i64, datatype, outbuf, outsize as i64, position, comm)
    }
    fn MPI_Pack_c / PMPI_Pack_c(inbuf: *const c_void, incount: i64, datatype: usize, outbuf: *mut c_void, outsize: i64, position: *mut i64, comm: usize) -> c_int {
        native("MPI_Pack_c", Way::Pack, inbuf, incount, datatype, outbuf, outsize, position, comm)
    }
    fn MPI_Unpack / PMPI_Unpack(inbuf: *const c_void, insize: c_int, position: *mut c_int, outbuf: *mut c_void, outcount: c_int, datatype: usize, comm: usize) -> c_int {
        native("MPI_Unpack", Way::Unpack, outbuf, outcount as i64, datatype, inbuf, insize as i64, position, comm)
    }
    fn MPI_Unpack_c / PMPI_Unpack_c(inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void, outcount: i64, datatype: usize, comm: usize) -> c_int {
        native("MPI_Unpack_c", Way::Unpack, outbuf, outcount, datatype, inbuf, insize, position, comm)
    }
    fn MPI_Pack_size / PMPI_Pack_size(incount: c_int, datatype: usize, comm: usize, size: *mut c_int) -> c_int {
        let f = "MPI_Pack_size";
        call(Scope::Comm(comm), || out_size(f, size, pack_size(f, incount as i64, datatype, comm)?))
    }
    fn MPI_Pack_size_c / PMPI_Pack_size_c(incount: i64, datatype: usize, comm: usize, size: *mut i64) -> c_int {
        let f = "MPI_Pack_size_c";
        call(Scope::Comm(comm), || out_size(f, size, pack_size(f, incount, datatype, comm)?))
    }
    fn MPI_Pack_external / PMPI_Pack_external(datarep: *const c_char, inbuf: *const c_void, incount: c_int, datatype: usize, outbuf: *mut c_void, outsize: isize, position: *mut isize) -> c_int {
        external("MPI_Pack_external", Way::Pack, datarep, inbuf, incount as i64, datatype, outbuf, outsize as i64, position as *mut i64)
    }
    fn MPI_Pack_external_c / PMPI_Pack_external_c(datarep: *const c_char, inbuf: *const c_void, incount: i64, datatype: usize, outbuf: *mut c_void, outsize: i64, position: *mut i64) -> c_int {
        external("MPI_Pack_external_c", Way::Pack, datarep, inbuf, incount, datatype, outbuf, outsize, position)
    }
    fn MPI_Unpack_external / PMPI_Unpack_external(datarep: *const c_char, inbuf: *const c_void, insize: isize, position: *mut isize, outbuf: *mut c_void, outcount: c_int, datatype: usize) -> c_int {
        external("MPI_Unpack_external", Way::Unpack, datarep, outbuf, outcount as i64, datatype, inbuf, insize as i64, position as *mut i64)
    }
    fn MPI_Unpack_external_c / PMPI_Unpack_external_c(datarep: *const c_char, inbuf: *const c_void, insize: i64, position: *mut i64, outbuf: *mut c_void, outcount: i64, datatype: usize) -> c_int {
        external("MPI_Unpack_external_c", Way::Unpack, datarep, outbuf, outcount, datatype, inbuf, insize, position)
    }
    fn MPI_Pack_external_size / PMPI_Pack_external_size(datarep: *const c_char, incount: c_int, datatype: usize, size: *mut isize) -> c_int {
        let f = "MPI_Pack_external_size";
        call(Scope::Process, || out_size(f, size as *mut i64, pack_external_size(f, datarep, incount as i64, datatype)?))
    }
    fn MPI_Pack_external_size_c / PMPI_Pack_external_size_c(datarep: *const c_char, incount: i64, datatype: usize, size: *mut i64) -> c_int {
        let f = "MPI_Pack_external_size_c";
        call(Scope::Process, || out_size(f, size, pack_external_size(f, datarep, incount, datatype)?))
    }
}
