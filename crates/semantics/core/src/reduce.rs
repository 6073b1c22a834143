//! Reduction operators as collectives apply them: a predefined operator (applied by the
//! datatype engine to every basic element) or a user function (registered through the
//! C ABI, which wraps the C callback in a closure).
//!
//! Data is combined in its packed form: `inout[i] = input[i] op inout[i]` over `count`
//! elements of the datatype, packed contiguously.

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::userbuf::UserBuf;
use crossmpi_datatype::op::{self, Op};
use crossmpi_datatype::Datatype;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// A user reduction: called with (input, inout, count, datatype) on packed data.
pub type UserReduce = dyn Fn(&[u8], &mut [u8], u64, &Datatype) + Send + Sync;

#[derive(Clone)]
pub enum ReduceOp {
    Builtin(Op),
    User {
        f: Arc<UserReduce>,
        commutative: bool,
    },
}

impl ReduceOp {
    pub fn is_commutative(&self) -> bool {
        match self {
            ReduceOp::Builtin(_) => true,
            ReduceOp::User { commutative, .. } => *commutative,
        }
    }

    /// Combines packed `input` into packed `inout` (`count` elements of `dtype`).
    pub fn apply(
        &self,
        function: &str,
        input: &[u8],
        inout: &mut [u8],
        count: u64,
        dtype: &Datatype,
    ) -> MpiResult<()> {
        match self {
            ReduceOp::User { f, .. } => {
                f(input, inout, count, dtype);
                Ok(())
            }
            ReduceOp::Builtin(o) => {
                let basic = dtype.uniform_basic().ok_or_else(|| {
                    MpiError::context(
                        ErrorClass::Op,
                        function,
                        format!("{o:?} needs a datatype made of one predefined type"),
                    )
                })?;
                op::apply(*o, basic, input, inout)
                    .map_err(|e| MpiError::context(ErrorClass::Op, function, e))
            }
        }
    }

    /// A user's operator (which may call MPI: see [`Deferred`]).
    pub fn is_user(&self) -> bool {
        matches!(self, ReduceOp::User { .. })
    }

    /// A user operator's combination of `input` into `inout` as a [`Deferred`] call, and
    /// the flag it sets once done; None for a predefined operator, which runs in place.
    pub fn defer(
        &self,
        input: UserBuf,
        inout: UserBuf,
        count: u64,
        dtype: &Datatype,
    ) -> Option<(Deferred, Arc<AtomicBool>)> {
        let ReduceOp::User { f, .. } = self else {
            return None;
        };
        let done = Arc::new(AtomicBool::new(false));
        let call = Deferred {
            f: f.clone(),
            input,
            inout,
            count,
            dtype: dtype.clone(),
            done: done.clone(),
        };
        Some((call, done))
    }

    /// Checks, before any data moves, that the operator is defined for the datatype.
    pub fn check(&self, function: &str, dtype: &Datatype) -> MpiResult<()> {
        match self {
            ReduceOp::User { .. } => Ok(()),
            ReduceOp::Builtin(o) => match dtype.uniform_basic() {
                Some(b) if op::is_defined(*o, b) => Ok(()),
                Some(b) => Err(MpiError::context(
                    ErrorClass::Op,
                    function,
                    format!("{o:?} is not defined for {}", b.mpi_name()),
                )),
                None if dtype.size() == 0 => Ok(()),
                None => Err(MpiError::context(
                    ErrorClass::Op,
                    function,
                    format!("{o:?} needs a datatype made of one predefined type"),
                )),
            },
        }
    }
}

/// A user operator's combination that progress met while a call held the runtime, run
/// once the runtime is let go (`runtime::run_deferred`): the user's function may call MPI
/// itself (`MPI_Comm_rank`, `MPI_Type_size`, `MPI_Abort`, ...), as Open MPI and MPICH
/// allow, and a call made while another holds the runtime could not go in.
pub struct Deferred {
    f: Arc<UserReduce>,
    input: UserBuf,
    inout: UserBuf,
    count: u64,
    dtype: Datatype,
    done: Arc<AtomicBool>,
}

impl Deferred {
    pub fn run(self) {
        (self.f)(
            self.input.read().0,
            self.inout.write().0,
            self.count,
            &self.dtype,
        );
        self.done.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossmpi_datatype::Basic;

    #[test]
    fn builtin_sum_on_ints_and_refusal_on_pairs() {
        let int = Datatype::basic(Basic::Int);
        let a: Vec<u8> = [1i32, 2, 3].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let mut b: Vec<u8> = [10i32, 20, 30]
            .iter()
            .flat_map(|x| x.to_ne_bytes())
            .collect();
        ReduceOp::Builtin(Op::Sum)
            .apply("t", &a, &mut b, 3, &int)
            .unwrap();
        let got: Vec<i32> = b
            .chunks(4)
            .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, vec![11, 22, 33]);
        let pair = Datatype::basic(Basic::TwoInt);
        assert!(ReduceOp::Builtin(Op::Sum)
            .check("MPI_Reduce", &pair)
            .is_err());
        assert!(ReduceOp::Builtin(Op::MinLoc)
            .check("MPI_Reduce", &pair)
            .is_ok());
    }

    #[test]
    fn user_operators_run_their_closure() {
        let concat = ReduceOp::User {
            f: Arc::new(|i: &[u8], io: &mut [u8], _n, _t: &Datatype| {
                for (x, y) in i.iter().zip(io.iter_mut()) {
                    *y = y.wrapping_mul(2).wrapping_add(*x);
                }
            }),
            commutative: false,
        };
        assert!(!concat.is_commutative());
        let mut io = [3u8];
        concat
            .apply("t", &[1], &mut io, 1, &Datatype::basic(Basic::Byte))
            .unwrap();
        assert_eq!(io, [7]);
    }
}
