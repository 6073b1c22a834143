//! What MPI_Type_get_envelope and MPI_Type_get_contents report: the constructor a
//! datatype was made with and its arguments, in the order the standard lists them.

use crate::basic::Basic;
use crate::Datatype;

/// Array storage order of subarray and darray.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    C,
    Fortran,
}

impl Order {
    /// The value of MPI_ORDER_C / MPI_ORDER_FORTRAN in the ABI's `mpi.h`.
    pub fn abi_code(self) -> i64 {
        match self {
            Order::C => 0xC,
            Order::Fortran => 0xF,
        }
    }
}

/// How darray distributes one dimension over the process grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    Block,
    Cyclic,
    None,
}

impl Distribution {
    /// The value of MPI_DISTRIBUTE_* in the ABI's `mpi.h`.
    pub fn abi_code(self) -> i64 {
        match self {
            Distribution::None => 16,
            Distribution::Block => 17,
            Distribution::Cyclic => 18,
        }
    }
}

/// The darg meaning "the default distribution argument" (MPI_DISTRIBUTE_DFLT_DARG).
/// The MPI layer passes its ABI constant through unchanged.
pub const DFLT_DARG: i64 = 19;

/// The constructor that made a datatype (MPI_COMBINER_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    Named,
    Dup,
    Contiguous,
    Vector,
    Hvector,
    Indexed,
    Hindexed,
    IndexedBlock,
    HindexedBlock,
    Struct,
    Subarray,
    Darray,
    F90Real,
    F90Complex,
    F90Integer,
    Resized,
}

impl Combiner {
    /// The value of MPI_COMBINER_* in the ABI's `mpi.h`.
    pub fn abi_code(self) -> i64 {
        match self {
            Combiner::Named => 101,
            Combiner::Dup => 102,
            Combiner::Contiguous => 103,
            Combiner::Vector => 104,
            Combiner::Hvector => 105,
            Combiner::Indexed => 106,
            Combiner::Hindexed => 107,
            Combiner::IndexedBlock => 108,
            Combiner::HindexedBlock => 109,
            Combiner::Struct => 110,
            Combiner::Subarray => 111,
            Combiner::Darray => 112,
            Combiner::F90Real => 113,
            Combiner::F90Complex => 114,
            Combiner::F90Integer => 115,
            Combiner::Resized => 116,
        }
    }
}

/// The numbers of arguments of each kind the constructor took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub combiner: Combiner,
    pub num_integers: u64,
    pub num_addresses: u64,
    pub num_large_counts: u64,
    pub num_datatypes: u64,
}

/// The constructor's arguments. Orders and distributions are given by their ABI codes.
#[derive(Clone, Debug)]
pub struct Contents {
    pub integers: Vec<i64>,
    pub addresses: Vec<i64>,
    pub large_counts: Vec<i64>,
    pub datatypes: Vec<Datatype>,
}

/// The Fortran 90 parameterised types (`MPI_Type_create_f90_*`): what the program asked
/// for, precision `p` and exponent range `r` (`MPI_UNDEFINED` as the caller passed it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum F90 {
    Real { p: i32, r: i32 },
    Complex { p: i32, r: i32 },
    Integer { r: i32 },
}

/// The MPI-1 bound markers `MPI_LB` and `MPI_UB` (removed in MPI-3, kept for old
/// Fortran codes): predefined types without data whose displacement in a structure
/// sets its lower or upper bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Lower,
    Upper,
}

/// A constructor call as recorded for envelope/contents.
#[derive(Clone, Debug)]
pub(crate) enum Ctor {
    Named(Basic),
    Marker(Marker),
    Dup(Datatype),
    Contiguous(u64, Datatype),
    Vector(u64, u64, i64, Datatype),
    Hvector(u64, u64, i64, Datatype),
    Indexed(Vec<u64>, Vec<i64>, Datatype),
    Hindexed(Vec<u64>, Vec<i64>, Datatype),
    IndexedBlock(u64, Vec<i64>, Datatype),
    HindexedBlock(u64, Vec<i64>, Datatype),
    Struct(Vec<u64>, Vec<i64>, Vec<Datatype>),
    Subarray(Vec<u64>, Vec<u64>, Vec<u64>, Order, Datatype),
    Darray(Darray),
    /// Laid out as the basic type of that kind.
    F90(F90, Basic),
    Resized(i64, i64, Datatype),
}

#[derive(Clone, Debug)]
pub(crate) struct Darray {
    pub(crate) size: u64,
    pub(crate) rank: u64,
    pub(crate) gsizes: Vec<u64>,
    pub(crate) distribs: Vec<Distribution>,
    pub(crate) dargs: Vec<i64>,
    pub(crate) psizes: Vec<u64>,
    pub(crate) order: Order,
    pub(crate) old: Datatype,
}

/// Which argument array a value goes to: counts and addresses move to the large-count
/// array when the type was made by a `_c` constructor; plain integers never move.
enum Arg {
    Int(Vec<i64>),
    Count(Vec<i64>),
    Addr(Vec<i64>),
}

fn ints<T: Copy + TryInto<i64>>(v: &[T]) -> Vec<i64> {
    v.iter()
        .map(|&x| x.try_into().unwrap_or(i64::MAX))
        .collect()
}

fn one<T: Copy + TryInto<i64>>(x: T) -> Vec<i64> {
    ints(&[x])
}

impl Ctor {
    pub(crate) fn combiner(&self) -> Combiner {
        match self {
            Ctor::Named(_) | Ctor::Marker(_) => Combiner::Named,
            Ctor::Dup(_) => Combiner::Dup,
            Ctor::Contiguous(..) => Combiner::Contiguous,
            Ctor::Vector(..) => Combiner::Vector,
            Ctor::Hvector(..) => Combiner::Hvector,
            Ctor::Indexed(..) => Combiner::Indexed,
            Ctor::Hindexed(..) => Combiner::Hindexed,
            Ctor::IndexedBlock(..) => Combiner::IndexedBlock,
            Ctor::HindexedBlock(..) => Combiner::HindexedBlock,
            Ctor::Struct(..) => Combiner::Struct,
            Ctor::Subarray(..) => Combiner::Subarray,
            Ctor::Darray(..) => Combiner::Darray,
            Ctor::F90(F90::Real { .. }, _) => Combiner::F90Real,
            Ctor::F90(F90::Complex { .. }, _) => Combiner::F90Complex,
            Ctor::F90(F90::Integer { .. }, _) => Combiner::F90Integer,
            Ctor::Resized(..) => Combiner::Resized,
        }
    }

    /// The arguments in the standard's order, and the datatypes.
    fn args(&self) -> (Vec<Arg>, Vec<Datatype>) {
        use Arg::*;
        match self {
            Ctor::Named(_) | Ctor::Marker(_) => (vec![], vec![]),
            Ctor::Dup(old) => (vec![], vec![old.clone()]),
            Ctor::Contiguous(count, old) => (vec![Count(one(*count))], vec![old.clone()]),
            Ctor::Vector(count, bl, stride, old) => (
                vec![Count(one(*count)), Count(one(*bl)), Count(one(*stride))],
                vec![old.clone()],
            ),
            Ctor::Hvector(count, bl, stride, old) => (
                vec![Count(one(*count)), Count(one(*bl)), Addr(one(*stride))],
                vec![old.clone()],
            ),
            Ctor::Indexed(bls, displs, old) => (
                vec![
                    Count(one(bls.len())),
                    Count(ints(bls)),
                    Count(displs.clone()),
                ],
                vec![old.clone()],
            ),
            Ctor::Hindexed(bls, displs, old) => (
                vec![
                    Count(one(bls.len())),
                    Count(ints(bls)),
                    Addr(displs.clone()),
                ],
                vec![old.clone()],
            ),
            Ctor::IndexedBlock(bl, displs, old) => (
                vec![
                    Count(one(displs.len())),
                    Count(one(*bl)),
                    Count(displs.clone()),
                ],
                vec![old.clone()],
            ),
            Ctor::HindexedBlock(bl, displs, old) => (
                vec![
                    Count(one(displs.len())),
                    Count(one(*bl)),
                    Addr(displs.clone()),
                ],
                vec![old.clone()],
            ),
            Ctor::Struct(bls, displs, types) => (
                vec![
                    Count(one(bls.len())),
                    Count(ints(bls)),
                    Addr(displs.clone()),
                ],
                types.clone(),
            ),
            Ctor::Subarray(sizes, subsizes, starts, order, old) => (
                vec![
                    Int(one(sizes.len())),
                    Count(ints(sizes)),
                    Count(ints(subsizes)),
                    Count(ints(starts)),
                    Int(vec![order.abi_code()]),
                ],
                vec![old.clone()],
            ),
            Ctor::Darray(d) => (
                vec![
                    Int(vec![d.size as i64, d.rank as i64, d.gsizes.len() as i64]),
                    Count(ints(&d.gsizes)),
                    Int(d.distribs.iter().map(|x| x.abi_code()).collect()),
                    Int(d.dargs.clone()),
                    Int(ints(&d.psizes)),
                    Int(vec![d.order.abi_code()]),
                ],
                vec![d.old.clone()],
            ),
            Ctor::F90(F90::Real { p, r } | F90::Complex { p, r }, _) => {
                (vec![Int(vec![i64::from(*p), i64::from(*r)])], vec![])
            }
            Ctor::F90(F90::Integer { r }, _) => (vec![Int(vec![i64::from(*r)])], vec![]),
            Ctor::Resized(lb, extent, old) => (vec![Addr(vec![*lb, *extent])], vec![old.clone()]),
        }
    }

    pub(crate) fn contents(&self, large_counts: bool) -> Contents {
        let (args, datatypes) = self.args();
        let mut c = Contents {
            integers: vec![],
            addresses: vec![],
            large_counts: vec![],
            datatypes,
        };
        for arg in args {
            match (arg, large_counts) {
                (Arg::Int(v), _) | (Arg::Count(v), false) => c.integers.extend(v),
                (Arg::Addr(v), false) => c.addresses.extend(v),
                (Arg::Count(v) | Arg::Addr(v), true) => c.large_counts.extend(v),
            }
        }
        c
    }

    pub(crate) fn envelope(&self, large_counts: bool) -> Envelope {
        let c = self.contents(large_counts);
        Envelope {
            combiner: self.combiner(),
            num_integers: c.integers.len() as u64,
            num_addresses: c.addresses.len() as u64,
            num_large_counts: c.large_counts.len() as u64,
            num_datatypes: c.datatypes.len() as u64,
        }
    }
}
