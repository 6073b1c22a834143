//! The predefined reduction operators over packed (possibly unaligned) bytes, with the
//! standard's table of which operator is defined on which type class.

mod extended;
mod half;
mod kernels;

use crate::basic::{Basic, Class, Num, Shape};
use std::fmt;

/// A predefined reduction operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Sum,
    Min,
    Max,
    Prod,
    Land,
    Lor,
    Lxor,
    Band,
    Bor,
    Bxor,
    MinLoc,
    MaxLoc,
    Replace,
    NoOp,
}

impl Op {
    pub const ALL: &'static [Op] = &[
        Op::Sum,
        Op::Min,
        Op::Max,
        Op::Prod,
        Op::Land,
        Op::Lor,
        Op::Lxor,
        Op::Band,
        Op::Bor,
        Op::Bxor,
        Op::MinLoc,
        Op::MaxLoc,
        Op::Replace,
        Op::NoOp,
    ];

    pub fn mpi_name(self) -> &'static str {
        match self {
            Op::Sum => "MPI_SUM",
            Op::Min => "MPI_MIN",
            Op::Max => "MPI_MAX",
            Op::Prod => "MPI_PROD",
            Op::Land => "MPI_LAND",
            Op::Lor => "MPI_LOR",
            Op::Lxor => "MPI_LXOR",
            Op::Band => "MPI_BAND",
            Op::Bor => "MPI_BOR",
            Op::Bxor => "MPI_BXOR",
            Op::MinLoc => "MPI_MINLOC",
            Op::MaxLoc => "MPI_MAXLOC",
            Op::Replace => "MPI_REPLACE",
            Op::NoOp => "MPI_NO_OP",
        }
    }
}

/// A reduction that cannot be done: names the operator, the type and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpError {
    pub op: Op,
    pub basic: Basic,
    pub reason: String,
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} on {}: {}",
            self.op.mpi_name(),
            self.basic.mpi_name(),
            self.reason
        )
    }
}

impl std::error::Error for OpError {}

/// Whether `op` is defined on `basic`: the standard's table (MPI-5.0 section 6.9.2),
/// plus what both Open MPI and MPICH also accept, so programs written for them run
/// unchanged: `MPI_CHAR` (a C `char`, of the text class in the standard) takes every
/// integer operator, and the multi-language integers (`MPI_AINT`, `MPI_OFFSET`,
/// `MPI_COUNT`) the logical ones too (MPICH's coll/allred, opbor and opprod use them).
pub fn is_defined(op: Op, basic: Basic) -> bool {
    use Class::*;
    let class = if basic == Basic::Char {
        CInteger
    } else {
        basic.class()
    };
    match op {
        Op::Sum | Op::Prod => matches!(
            class,
            CInteger | FortranInteger | MultiLanguage | Floating | Complex
        ),
        Op::Min | Op::Max => matches!(class, CInteger | FortranInteger | MultiLanguage | Floating),
        Op::Land | Op::Lor | Op::Lxor => matches!(class, CInteger | MultiLanguage | Logical),
        Op::Band | Op::Bor | Op::Bxor => {
            matches!(class, CInteger | FortranInteger | MultiLanguage | Byte)
        }
        Op::MinLoc | Op::MaxLoc => class == Pair,
        Op::Replace | Op::NoOp => true,
    }
}

/// `inout[i] = input[i] (op) inout[i]` over the packed elements of `basic` in both slices.
/// Integers wrap on overflow; logical results are 1 (true) or 0 (false), as gfortran and
/// C store them.
pub fn apply(op: Op, basic: Basic, input: &[u8], inout: &mut [u8]) -> Result<(), OpError> {
    let error = |reason: String| OpError { op, basic, reason };
    if !is_defined(op, basic) {
        return Err(error(
            "the standard does not define this operator on this type".into(),
        ));
    }
    let size = basic.size() as usize;
    if input.len() != inout.len() || !input.len().is_multiple_of(size) {
        return Err(error(format!(
            "buffers of {} and {} bytes are not the same whole number of {size}-byte elements",
            input.len(),
            inout.len()
        )));
    }
    match (op, basic.shape()) {
        (Op::NoOp, _) => {}
        (Op::Replace, _) => inout.copy_from_slice(input),
        (Op::MinLoc | Op::MaxLoc, Shape::Pair(value, index)) => {
            kernels::locate(op == Op::MinLoc, value, index, input, inout)
        }
        (_, Shape::Scalar(Num::X87 | Num::F128) | Shape::Complex(Num::X87 | Num::F128)) => {
            extended::apply(op, basic.shape(), input, inout)
        }
        (_, Shape::Scalar(num)) => kernels::scalar(op, num, input, inout),
        (_, Shape::Complex(num)) => kernels::complex(op, num, input, inout),
        (_, Shape::Pair(..)) => {
            return Err(error(
                "pairs take only MINLOC, MAXLOC, REPLACE and NO_OP".into(),
            ))
        }
    }
    Ok(())
}
