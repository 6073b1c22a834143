//! Reduction operator handles: the predefined `MPI_Op`s (applied by the datatype engine)
//! and operators applications create from a C callback, plus `MPI_Reduce_local`.
//!
//! The core reduces packed data (`ReduceOp::apply`). A C user function instead expects
//! elements laid out as the datatype describes them in memory, and the datatype's
//! handle: [`resolve`] wraps the callback so it gets exactly that.

use crate::consts::{HANDLE_CONSTANTS, MPI_OP_NULL};
use crate::error::{call, Scope};
use crate::handle::{self, Kind};
use crate::p2p::buffer;
use crate::types;
use crate::util::out;
use crossmpi_core::datatype::op::Op;
use crossmpi_core::datatype::Datatype;
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::reduce::ReduceOp;
use crossmpi_core::slab::Slab;
use std::os::raw::{c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

/// `MPI_User_function`.
pub type UserFunction = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut usize);
/// `MPI_User_function_c`.
pub type UserFunctionC = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut i64, *mut usize);

#[derive(Clone, Copy)]
enum Callback {
    Int(UserFunction),
    Large(UserFunctionC),
}

static USER_OPS: Mutex<Slab<ReduceOp>> = Mutex::new(Slab::new_const());

fn user_ops() -> std::sync::MutexGuard<'static, Slab<ReduceOp>> {
    USER_OPS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Predefined operator handles are below this value (the ABI gives them 0x20..0x3f).
const PREDEFINED_LIMIT: usize = 0x40;

/// The predefined operator a handle value names, if it names one: a table indexed by
/// the value, built once (reductions look their operator up on every call).
pub(crate) fn predefined(op: usize) -> Option<Op> {
    static TABLE: OnceLock<[Option<Op>; PREDEFINED_LIMIT]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [None; PREDEFINED_LIMIT];
        for &o in Op::ALL {
            let value = HANDLE_CONSTANTS
                .iter()
                .find(|(name, _)| *name == o.mpi_name())
                .map(|&(_, v)| v);
            if let Some(slot) = value.and_then(|v| table.get_mut(v)) {
                *slot = Some(o);
            }
        }
        table
    });
    table.get(op).copied().flatten()
}

fn bad_op(function: &str, op: usize, why: &str) -> MpiError {
    MpiError::arg(ErrorClass::Op, function, "op", handle::describe(op), why)
}

/// The operator an `MPI_Op` handle names: predefined operators map to the datatype
/// engine's, user operators to a closure calling the application's function.
pub fn resolve(function: &str, op: usize) -> MpiResult<ReduceOp> {
    if let Some(o) = predefined(op) {
        return Ok(ReduceOp::Builtin(o));
    }
    if op == MPI_OP_NULL {
        return Err(bad_op(function, op, "MPI_OP_NULL is not an operator"));
    }
    let slot =
        handle::decode(Kind::Op, op).ok_or_else(|| bad_op(function, op, "not an operator"))?;
    user_ops()
        .by_index(slot)
        .map(|(_, o)| o.clone())
        .ok_or_else(|| bad_op(function, op, "freed or never created"))
}

/// Wraps a C callback as a core reduction on packed data.
fn user_op(callback: Callback, commutative: bool) -> ReduceOp {
    let f = move |input: &[u8], inout: &mut [u8], count: u64, dtype: &Datatype| {
        let handle = types::handle_for(dtype);
        if dtype.is_contiguous() {
            // The packed bytes are the memory image; the callback may scribble on its
            // input vector, so it gets a copy rather than the caller's immutable bytes.
            let mut input = input.to_vec();
            let shift = dtype.lb() as isize;
            invoke(
                callback,
                &mut input,
                inout,
                shift,
                count,
                dtype.extent(),
                handle.value(),
            );
        } else {
            // Lay both operands out as the datatype describes, call, repack the result.
            let (lo, hi) = dtype.span(count);
            let origin = -lo as isize;
            let mut a = vec![0u8; (hi - lo) as usize];
            let mut b = vec![0u8; (hi - lo) as usize];
            dtype.unpack_at(input, &mut a, origin, count, 0);
            dtype.unpack_at(inout, &mut b, origin, count, 0);
            invoke(
                callback,
                &mut a,
                &mut b,
                -origin,
                count,
                dtype.extent(),
                handle.value(),
            );
            dtype.pack_at(&b, origin, count, 0, inout);
        }
    };
    ReduceOp::User {
        f: Arc::new(f),
        commutative,
    }
}

/// Calls the application's function on `count` elements whose base address is `shift`
/// bytes before the start of `input`/`inout` (the datatype's lower bound), in chunks the
/// `int` length of `MPI_User_function` can express.
fn invoke(
    callback: Callback,
    input: &mut [u8],
    inout: &mut [u8],
    shift: isize,
    count: u64,
    extent: i64,
    dtype: usize,
) {
    let mut dtype = dtype;
    let base_in = input.as_mut_ptr().wrapping_offset(-shift);
    let base_io = inout.as_mut_ptr().wrapping_offset(-shift);
    match callback {
        Callback::Large(f) => {
            let mut len = count as i64;
            // SAFETY: both vectors hold `count` elements of the datatype at the base
            // addresses given (the layout the caller built), as MPI_User_function_c expects.
            unsafe { f(base_in.cast(), base_io.cast(), &mut len, &mut dtype) };
        }
        Callback::Int(f) => {
            let mut done = 0u64;
            while done < count {
                let n = (count - done).min(c_int::MAX as u64);
                let mut len = n as c_int;
                let at = (done as i64).wrapping_mul(extent) as isize;
                // SAFETY: as above; elements `done..done + n` start `done` extents in.
                unsafe {
                    f(
                        base_in.wrapping_offset(at).cast(),
                        base_io.wrapping_offset(at).cast(),
                        &mut len,
                        &mut dtype,
                    )
                };
                done += n;
            }
        }
    }
}

fn create(callback: Callback, commute: c_int, op: *mut usize, function: &str) -> MpiResult<()> {
    let id = user_ops().insert(user_op(callback, commute != 0));
    out(function, "op", op, handle::encode(Kind::Op, id.index))
}

fn reduce_local(
    function: &str,
    inbuf: *const c_void,
    inoutbuf: *mut c_void,
    count: i64,
    datatype: usize,
    op: usize,
) -> MpiResult<()> {
    let input = buffer(function, inbuf, count, datatype)?;
    let inout = buffer(function, inoutbuf, count, datatype)?;
    let o = resolve(function, op)?;
    o.check(function, &input.dtype)?;
    let bytes = input.bytes() as usize;
    let mut a = vec![0u8; bytes];
    let mut b = vec![0u8; bytes];
    input.pack_into(0, &mut a);
    inout.pack_into(0, &mut b);
    o.apply(function, &a, &mut b, input.count, &input.dtype)?;
    inout.unpack_from(0, &b);
    Ok(())
}

export! {
    fn MPI_Op_create / PMPI_Op_create(user_fn: Option<UserFunction>, commute: c_int, op: *mut usize) -> c_int {
        let f = "MPI_Op_create";
        call(Scope::Process, || {
            let cb = user_fn.ok_or_else(|| MpiError::arg(ErrorClass::Arg, f, "user_fn", "NULL", "a function is required"))?;
            create(Callback::Int(cb), commute, op, f)
        })
    }

    fn MPI_Op_create_c / PMPI_Op_create_c(user_fn: Option<UserFunctionC>, commute: c_int, op: *mut usize) -> c_int {
        let f = "MPI_Op_create_c";
        call(Scope::Process, || {
            let cb = user_fn.ok_or_else(|| MpiError::arg(ErrorClass::Arg, f, "user_fn", "NULL", "a function is required"))?;
            create(Callback::Large(cb), commute, op, f)
        })
    }

    fn MPI_Op_free / PMPI_Op_free(op: *mut usize) -> c_int {
        let f = "MPI_Op_free";
        call(Scope::Process, || {
            let h = *crate::util::slice(f, "op", op, 1)?.first().unwrap_or(&MPI_OP_NULL);
            if predefined(h).is_some() {
                return Err(bad_op(f, h, "predefined operators cannot be freed"));
            }
            let slot = handle::decode(Kind::Op, h).ok_or_else(|| bad_op(f, h, "not a user operator"))?;
            let mut ops = user_ops();
            let id = ops.by_index(slot).map(|(id, _)| id).ok_or_else(|| bad_op(f, h, "freed or never created"))?;
            ops.remove(id);
            drop(ops);
            out(f, "op", op, MPI_OP_NULL)
        })
    }

    fn MPI_Op_commutative / PMPI_Op_commutative(op: usize, commute: *mut c_int) -> c_int {
        let f = "MPI_Op_commutative";
        call(Scope::Process, || {
            let o = resolve(f, op)?;
            out(f, "commute", commute, o.is_commutative() as c_int)
        })
    }

    fn MPI_Reduce_local / PMPI_Reduce_local(inbuf: *const c_void, inoutbuf: *mut c_void, count: c_int, datatype: usize, op: usize) -> c_int {
        call(Scope::Process, || reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count as i64, datatype, op))
    }

    fn MPI_Reduce_local_c / PMPI_Reduce_local_c(inbuf: *const c_void, inoutbuf: *mut c_void, count: i64, datatype: usize, op: usize) -> c_int {
        call(Scope::Process, || reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::*;

    #[test]
    fn every_predefined_handle_resolves() {
        for (h, o) in [
            (MPI_SUM, Op::Sum),
            (MPI_MIN, Op::Min),
            (MPI_MAX, Op::Max),
            (MPI_PROD, Op::Prod),
            (MPI_LAND, Op::Land),
            (MPI_LOR, Op::Lor),
            (MPI_LXOR, Op::Lxor),
            (MPI_BAND, Op::Band),
            (MPI_BOR, Op::Bor),
            (MPI_BXOR, Op::Bxor),
            (MPI_MINLOC, Op::MinLoc),
            (MPI_MAXLOC, Op::MaxLoc),
            (MPI_REPLACE, Op::Replace),
            (MPI_NO_OP, Op::NoOp),
        ] {
            match resolve("t", h) {
                Ok(ReduceOp::Builtin(got)) => assert_eq!(got, o),
                _ => panic!("{} does not resolve", o.mpi_name()),
            }
        }
        let e = resolve("MPI_Reduce", MPI_OP_NULL).err().unwrap();
        assert_eq!(e.class, ErrorClass::Op);
        assert!(e.message.contains("MPI_Reduce") && e.message.contains("MPI_OP_NULL"));
        assert!(resolve("t", MPI_COMM_WORLD).is_err());
    }

    /// A user function on elements of {int at 0, hole, int at 8} (extent 12): sums the
    /// first ints, multiplies the second ones, and records the handle it got.
    unsafe extern "C" fn on_pairs(a: *mut c_void, b: *mut c_void, len: *mut c_int, t: *mut usize) {
        // SAFETY (of the whole body): the wrapper passes `len` elements of 12 bytes laid
        // out from `a` and `b`, and valid `len`/`t` pointers.
        SEEN.store(*t, std::sync::atomic::Ordering::SeqCst);
        for k in 0..*len as usize {
            let (x, y) = (a.cast::<i32>().add(3 * k), b.cast::<i32>().add(3 * k));
            *y += *x;
            *y.add(2) *= *x.add(2);
        }
    }
    static SEEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    #[test]
    fn user_functions_see_the_memory_layout_and_the_handle_of_the_type() {
        use crossmpi_core::datatype::Basic;
        let int = Datatype::basic(Basic::Int);
        let t = Datatype::resized(&Datatype::vector(2, 1, 2, &int).unwrap(), 0, 12).unwrap();
        let h = types::create(t.clone());
        let op = user_op(Callback::Int(on_pairs), false);
        let packed = |v: &[i32]| v.iter().flat_map(|x| x.to_ne_bytes()).collect::<Vec<u8>>();
        let input = packed(&[1, 2, 3, 4]);
        let mut inout = packed(&[10, 20, 30, 40]);
        op.apply("t", &input, &mut inout, 2, &t).unwrap();
        assert_eq!(inout, packed(&[11, 40, 33, 160]));
        assert_eq!(SEEN.load(std::sync::atomic::Ordering::SeqCst), h);
        assert!(!op.is_commutative());
        types::free(h);
    }
}
