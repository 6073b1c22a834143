//! `MPI_Status` accessors (MPI 4.1: `MPI_Status_get/set_source/tag/error`), the setters
//! generalized requests use (`MPI_Status_set_elements(_x/_c)`, `MPI_Status_set_cancelled`),
//! and `MPI_Request_get_status_all/any/some`, which report completion without freeing.

use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, store_status, MpiStatus};
use crate::p2p::{request, statuses};
use crate::types;
use crate::util::{count, out, slice, slice_mut};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::request::Status;
use crossmpi_core::runtime::{self, Runtime};
use std::os::raw::c_int;

fn status_ref<'a>(function: &str, status: *const MpiStatus) -> MpiResult<&'a MpiStatus> {
    Ok(&slice(function, "status", status, 1)?[0])
}

fn status_mut<'a>(function: &str, status: *mut MpiStatus) -> MpiResult<&'a mut MpiStatus> {
    Ok(&mut slice_mut(function, "status", status, 1)?[0])
}

/// Bytes whose packed stream of `datatype` holds exactly `elements` basic elements, so
/// `MPI_Get_elements` returns `elements` afterwards.
fn bytes_of_elements(function: &str, datatype: usize, elements: i64) -> MpiResult<u64> {
    let n = count(function, "count", elements)?;
    let t = types::lookup(function, "datatype", datatype)?;
    let size = t.size();
    let per = t.elements_in(size).unwrap_or(0);
    if size == 0 || per == 0 {
        return if n == 0 {
            Ok(0)
        } else {
            Err(MpiError::arg(
                ErrorClass::Type,
                function,
                "datatype",
                handle::describe(datatype),
                "holds no data, so only 0 elements can be set",
            ))
        };
    }
    let whole = (n / per).checked_mul(size);
    let rest = n % per;
    // The partial instance: the shortest prefix holding `rest` elements (types whose
    // one instance spans more than 1 MiB of elements are not searched).
    let partial = (0..=size.min(1 << 20)).find(|&b| t.elements_in(b) == Some(rest));
    match (whole, partial) {
        (Some(w), Some(p)) if w.checked_add(p).is_some() => Ok(w + p),
        _ => Err(MpiError::arg(
            ErrorClass::Count,
            function,
            "count",
            elements,
            "no byte count of this datatype holds that many elements",
        )),
    }
}

fn set_elements(function: &str, status: *mut MpiStatus, datatype: usize, n: i64) -> c_int {
    call(Scope::Process, || {
        let bytes = bytes_of_elements(function, datatype, n)?;
        let s = status_mut(function, status)?;
        s.internal[0] = bytes as u32 as c_int;
        s.internal[1] = (bytes >> 32) as u32 as c_int;
        Ok(())
    })
}

/// Whether a request counts as inactive for the get_status calls (NULL, or a persistent
/// request not started), else its status if it completed.
fn peek(rt: &mut Runtime, function: &str, h: usize) -> MpiResult<Option<Option<Status>>> {
    if h == MPI_REQUEST_NULL {
        return Ok(None);
    }
    let id = request(rt, function, "array_of_requests", h)?;
    let r = rt.st.requests.get(id).unwrap();
    if r.persistent.is_some() && !r.active {
        return Ok(None);
    }
    crate::mpi4_requests::settle(rt, h);
    Ok(Some(rt.peek_done(id)))
}

/// The state of each request of an array, after one round of progress.
fn peek_all(function: &str, hs: &[usize]) -> MpiResult<Vec<Option<Option<Status>>>> {
    // query_fn may call MPI: generalized requests are asked before the runtime is taken
    let generalized: Vec<_> = hs
        .iter()
        .map(|&h| crate::mpi4_requests::query_now(h))
        .collect();
    runtime::with(function, |rt| {
        rt.poll();
        hs.iter()
            .zip(generalized)
            .map(|(&h, g)| match g {
                Some(done) => Ok(Some(done)),
                None => peek(rt, function, h),
            })
            .collect()
    })
}

fn request_array<'a>(function: &str, n: c_int, p: *const usize) -> MpiResult<&'a [usize]> {
    let n = count(function, "count", n as i64)? as usize;
    slice(function, "array_of_requests", p, n)
}

export! {
    fn MPI_Status_get_source / PMPI_Status_get_source(status: *const MpiStatus, source: *mut c_int) -> c_int {
        let f = "MPI_Status_get_source";
        call(Scope::Process, || out(f, "source", source, status_ref(f, status)?.source))
    }
    fn MPI_Status_get_tag / PMPI_Status_get_tag(status: *const MpiStatus, tag: *mut c_int) -> c_int {
        let f = "MPI_Status_get_tag";
        call(Scope::Process, || out(f, "tag", tag, status_ref(f, status)?.tag))
    }
    fn MPI_Status_get_error / PMPI_Status_get_error(status: *const MpiStatus, error: *mut c_int) -> c_int {
        let f = "MPI_Status_get_error";
        call(Scope::Process, || out(f, "error", error, status_ref(f, status)?.error))
    }
    fn MPI_Status_set_source / PMPI_Status_set_source(status: *mut MpiStatus, source: c_int) -> c_int {
        let f = "MPI_Status_set_source";
        call(Scope::Process, || {
            status_mut(f, status)?.source = source;
            Ok(())
        })
    }
    fn MPI_Status_set_tag / PMPI_Status_set_tag(status: *mut MpiStatus, tag: c_int) -> c_int {
        let f = "MPI_Status_set_tag";
        call(Scope::Process, || {
            status_mut(f, status)?.tag = tag;
            Ok(())
        })
    }
    fn MPI_Status_set_error / PMPI_Status_set_error(status: *mut MpiStatus, error: c_int) -> c_int {
        let f = "MPI_Status_set_error";
        call(Scope::Process, || {
            status_mut(f, status)?.error = error;
            Ok(())
        })
    }
    fn MPI_Status_set_cancelled / PMPI_Status_set_cancelled(status: *mut MpiStatus, flag: c_int) -> c_int {
        let f = "MPI_Status_set_cancelled";
        call(Scope::Process, || {
            status_mut(f, status)?.internal[2] = (flag != 0) as c_int;
            Ok(())
        })
    }
    fn MPI_Status_set_elements / PMPI_Status_set_elements(status: *mut MpiStatus, datatype: usize, count: c_int) -> c_int {
        set_elements("MPI_Status_set_elements", status, datatype, count as i64)
    }
    fn MPI_Status_set_elements_x / PMPI_Status_set_elements_x(status: *mut MpiStatus, datatype: usize, count: i64) -> c_int {
        set_elements("MPI_Status_set_elements_x", status, datatype, count)
    }
    fn MPI_Status_set_elements_c / PMPI_Status_set_elements_c(status: *mut MpiStatus, datatype: usize, count: i64) -> c_int {
        set_elements("MPI_Status_set_elements_c", status, datatype, count)
    }

    fn MPI_Request_get_status_all / PMPI_Request_get_status_all(count: c_int, array_of_requests: *const usize, flag: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int {
        let f = "MPI_Request_get_status_all";
        call(Scope::Process, || {
            let hs = request_array(f, count, array_of_requests)?;
            let states = peek_all(f, hs)?;
            let all = states.iter().all(|s| !matches!(s, Some(None)));
            out(f, "flag", flag, all as c_int)?;
            if all {
                if let Some(sts) = statuses(f, array_of_statuses, hs.len())? {
                    for (out, s) in sts.iter_mut().zip(&states) {
                        store_status(out, &s.flatten().unwrap_or_else(Status::proc_null_empty));
                    }
                }
            }
            Ok(())
        })
    }

    fn MPI_Request_get_status_any / PMPI_Request_get_status_any(count: c_int, array_of_requests: *const usize, index: *mut c_int, flag: *mut c_int, status: *mut MpiStatus) -> c_int {
        let f = "MPI_Request_get_status_any";
        call(Scope::Process, || {
            let hs = request_array(f, count, array_of_requests)?;
            let states = peek_all(f, hs)?;
            if states.iter().all(Option::is_none) {
                out(f, "flag", flag, 1)?;
                out(f, "index", index, MPI_UNDEFINED)?;
                store_status(status, &Status::proc_null_empty());
                return Ok(());
            }
            match states.iter().position(|s| matches!(s, Some(Some(_)))) {
                Some(i) => {
                    out(f, "flag", flag, 1)?;
                    out(f, "index", index, i as c_int)?;
                    store_status(status, &states[i].flatten().unwrap());
                    Ok(())
                }
                None => {
                    out(f, "flag", flag, 0)?;
                    out(f, "index", index, MPI_UNDEFINED)
                }
            }
        })
    }

    fn MPI_Request_get_status_some / PMPI_Request_get_status_some(incount: c_int, array_of_requests: *const usize, outcount: *mut c_int, array_of_indices: *mut c_int, array_of_statuses: *mut MpiStatus) -> c_int {
        let f = "MPI_Request_get_status_some";
        call(Scope::Process, || {
            let hs = request_array(f, incount, array_of_requests)?;
            let states = peek_all(f, hs)?;
            if states.iter().all(Option::is_none) {
                return out(f, "outcount", outcount, MPI_UNDEFINED);
            }
            let done: Vec<(usize, Status)> = states
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.flatten().map(|s| (i, s)))
                .collect();
            out(f, "outcount", outcount, done.len() as c_int)?;
            let idx = slice_mut(f, "array_of_indices", array_of_indices, done.len())?;
            let mut sts = statuses(f, array_of_statuses, done.len())?;
            for (k, (i, s)) in done.iter().enumerate() {
                idx[k] = *i as c_int;
                if let Some(sts) = sts.as_deref_mut() {
                    store_status(&mut sts[k], s);
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_elements_round_trips_through_get_elements() {
        let mut s = MpiStatus::default();
        assert_eq!(set_elements("t", &mut s, MPI_INT, 1 << 33), MPI_SUCCESS);
        assert_eq!(s.bytes(), 4 << 33);
        assert_eq!(set_elements("t", &mut s, MPI_BYTE, 7), MPI_SUCCESS);
        assert_eq!(s.bytes(), 7);
    }
}
