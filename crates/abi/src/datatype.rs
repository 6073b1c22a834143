//! Datatype calls: the constructors (each in its `int` and large-count `_c` form),
//! commit/free/dup, size and bounds queries, envelope and contents, names, and the
//! address helpers. The type engine (crossmpi-datatype) does the work; this layer reads
//! the C arguments, checks them and maps handles.

use crate::consts::*;
use crate::error::{call, Scope};
use crate::handle::{self, Kind, MpiStatus};
use crate::p2p;
use crate::types::{self, UserType};
use crate::util::{count, in_string, out, out_string, slice, slice_mut};
use crossmpi_core::datatype::{
    Basic, Combiner, Datatype, Distribution, ErrorKind, Order, TypeError,
};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use std::collections::HashMap;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Mutex;

/// A rejected constructor or pack call, reported under the name of the call the
/// application made (the engine names the `int` form).
pub fn type_error(function: &str, e: TypeError) -> MpiError {
    let class = match e.kind {
        ErrorKind::Argument => ErrorClass::Arg,
        ErrorKind::Overflow => ErrorClass::Count,
        ErrorKind::Truncate => ErrorClass::Truncate,
        ErrorKind::Conversion => ErrorClass::Conversion,
    };
    MpiError::arg(class, function, e.argument, e.value, e.reason)
}

/// An integer argument of either width, as the engine's 64-bit value.
trait Wide: Copy {
    fn wide(self) -> i64;
}
impl Wide for c_int {
    fn wide(self) -> i64 {
        self as i64
    }
}
impl Wide for i64 {
    fn wide(self) -> i64 {
        self
    }
}
impl Wide for isize {
    fn wide(self) -> i64 {
        self as i64
    }
}

/// A count argument (`int` or `MPI_Count`): non-negative.
fn count_of(function: &str, arg: &str, n: impl Wide) -> MpiResult<u64> {
    count(function, arg, n.wide())
}

/// An array argument of `n` counts.
fn counts<T: Wide>(function: &str, arg: &str, p: *const T, n: u64) -> MpiResult<Vec<u64>> {
    slice(function, arg, p, n as usize)?
        .iter()
        .map(|&v| count_of(function, arg, v))
        .collect()
}

/// An array argument of `n` displacements (elements or bytes).
fn displacements<T: Wide>(function: &str, arg: &str, p: *const T, n: u64) -> MpiResult<Vec<i64>> {
    Ok(slice(function, arg, p, n as usize)?
        .iter()
        .map(|&v| v.wide())
        .collect())
}

/// An array of `n` datatype handles (committed or not).
fn type_array(function: &str, p: *const usize, n: u64) -> MpiResult<Vec<Datatype>> {
    slice(function, "array_of_types", p, n as usize)?
        .iter()
        .map(|&h| types::lookup(function, "array_of_types", h))
        .collect()
}

fn order_of(function: &str, order: c_int) -> MpiResult<Order> {
    match order {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        v => Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "order",
            v,
            "not MPI_ORDER_C or MPI_ORDER_FORTRAN",
        )),
    }
}

fn distribution_of(function: &str, d: c_int) -> MpiResult<Distribution> {
    match d {
        MPI_DISTRIBUTE_BLOCK => Ok(Distribution::Block),
        MPI_DISTRIBUTE_CYCLIC => Ok(Distribution::Cyclic),
        MPI_DISTRIBUTE_NONE => Ok(Distribution::None),
        v => Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "array_of_distribs",
            v,
            "not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE",
        )),
    }
}

/// Registers what a constructor built (marking `_c` constructors) and stores the handle.
fn finish(
    function: &str,
    built: Result<Datatype, TypeError>,
    large: bool,
    newtype: *mut usize,
) -> MpiResult<()> {
    let t = built.map_err(|e| type_error(function, e))?;
    let t = if large { t.with_large_counts() } else { t };
    if newtype.is_null() {
        return out(function, "newtype", newtype, 0);
    }
    out(function, "newtype", newtype, types::create(t))
}

/// The shared body of every constructor: `build` reads the arguments and calls the
/// engine; errors go to the process's error handler.
fn construct(
    function: &str,
    large: bool,
    newtype: *mut usize,
    build: impl FnOnce() -> MpiResult<Result<Datatype, TypeError>>,
) -> c_int {
    call(Scope::Process, || {
        finish(function, build()?, large, newtype)
    })
}

fn old(function: &str, h: usize) -> MpiResult<Datatype> {
    types::lookup(function, "oldtype", h)
}

fn contiguous(f: &str, large: bool, n: i64, oldtype: usize, newtype: *mut usize) -> c_int {
    construct(f, large, newtype, || {
        Ok(Datatype::contiguous(
            count(f, "count", n)?,
            &old(f, oldtype)?,
        ))
    })
}

fn vector(
    f: &str,
    large: bool,
    n: i64,
    blocklength: i64,
    stride: i64,
    bytes: bool,
    oldtype: usize,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        let (n, bl) = (count(f, "count", n)?, count(f, "blocklength", blocklength)?);
        let t = old(f, oldtype)?;
        Ok(if bytes {
            Datatype::hvector(n, bl, stride, &t)
        } else {
            Datatype::vector(n, bl, stride, &t)
        })
    })
}

fn indexed<C: Wide, D: Wide>(
    f: &str,
    large: bool,
    n: i64,
    blocklengths: *const C,
    displs: *const D,
    bytes: bool,
    oldtype: usize,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        let n = count(f, "count", n)?;
        let bl = counts(f, "array_of_blocklengths", blocklengths, n)?;
        let d = displacements(f, "array_of_displacements", displs, n)?;
        let t = old(f, oldtype)?;
        Ok(if bytes {
            Datatype::hindexed(&bl, &d, &t)
        } else {
            Datatype::indexed(&bl, &d, &t)
        })
    })
}

fn indexed_block<D: Wide>(
    f: &str,
    large: bool,
    n: i64,
    blocklength: i64,
    displs: *const D,
    bytes: bool,
    oldtype: usize,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        let (n, bl) = (count(f, "count", n)?, count(f, "blocklength", blocklength)?);
        let d = displacements(f, "array_of_displacements", displs, n)?;
        let t = old(f, oldtype)?;
        Ok(if bytes {
            Datatype::hindexed_block(bl, &d, &t)
        } else {
            Datatype::indexed_block(bl, &d, &t)
        })
    })
}

fn structure<C: Wide, D: Wide>(
    f: &str,
    large: bool,
    n: i64,
    blocklengths: *const C,
    displs: *const D,
    array_of_types: *const usize,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        let n = count(f, "count", n)?;
        let bl = counts(f, "array_of_blocklengths", blocklengths, n)?;
        let d = displacements(f, "array_of_displacements", displs, n)?;
        let t = type_array(f, array_of_types, n)?;
        Ok(Datatype::structure(&bl, &d, &t))
    })
}

fn subarray<C: Wide>(
    f: &str,
    large: bool,
    ndims: c_int,
    sizes: *const C,
    subsizes: *const C,
    starts: *const C,
    order: c_int,
    oldtype: usize,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        let n = count(f, "ndims", ndims as i64)?;
        let s = counts(f, "array_of_sizes", sizes, n)?;
        let sub = counts(f, "array_of_subsizes", subsizes, n)?;
        let st = counts(f, "array_of_starts", starts, n)?;
        let o = order_of(f, order)?;
        Ok(Datatype::subarray(&s, &sub, &st, o, &old(f, oldtype)?))
    })
}

fn darray<C: Wide>(
    f: &str,
    large: bool,
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: *const C,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: usize,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        let n = count(f, "ndims", ndims as i64)?;
        let g = counts(f, "array_of_gsizes", gsizes, n)?;
        let d = slice(f, "array_of_distribs", distribs, n as usize)?
            .iter()
            .map(|&v| distribution_of(f, v))
            .collect::<MpiResult<Vec<_>>>()?;
        let a = displacements(f, "array_of_dargs", dargs, n)?;
        let p = counts(f, "array_of_psizes", psizes, n)?;
        Ok(Datatype::darray(
            count(f, "size", size as i64)?,
            count(f, "rank", rank as i64)?,
            &g,
            &d,
            &a,
            &p,
            order_of(f, order)?,
            &old(f, oldtype)?,
        ))
    })
}

fn resized(
    f: &str,
    large: bool,
    oldtype: usize,
    lb: i64,
    extent: i64,
    newtype: *mut usize,
) -> c_int {
    construct(f, large, newtype, || {
        Ok(Datatype::resized(&old(f, oldtype)?, lb, extent))
    })
}

/// The user type a handle names, for calls that change it (commit, free, names).
fn with_user_type<R>(function: &str, h: usize, f: impl FnOnce(&mut UserType) -> R) -> MpiResult<R> {
    types::lookup(function, "datatype", h)?;
    let slot = handle::decode(Kind::Datatype, h).ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Type,
            function,
            "datatype",
            handle::describe(h),
            "predefined datatypes cannot be changed or freed",
        )
    })?;
    let mut all = types::user_types();
    let id = all.by_index(slot).map(|(id, _)| id);
    Ok(f(id.and_then(|id| all.get_mut(id)).ok_or_else(|| {
        MpiError::arg(
            ErrorClass::Type,
            function,
            "datatype",
            handle::describe(h),
            "freed",
        )
    })?))
}

/// Names given to predefined types with `MPI_Type_set_name`.
static PREDEFINED_NAMES: Mutex<Option<HashMap<usize, String>>> = Mutex::new(None);

fn name_of(function: &str, h: usize) -> MpiResult<String> {
    types::lookup(function, "datatype", h)?;
    if let Some(name) = types::predefined_name(h) {
        let renamed = PREDEFINED_NAMES.lock().unwrap_or_else(|p| p.into_inner());
        return Ok(renamed
            .as_ref()
            .and_then(|m| m.get(&h).cloned())
            .unwrap_or_else(|| name.to_string()));
    }
    with_user_type(function, h, |u| u.name.clone())
}

fn set_name(function: &str, h: usize, name: String) -> MpiResult<()> {
    if types::is_predefined(h) {
        let mut renamed = PREDEFINED_NAMES.lock().unwrap_or_else(|p| p.into_inner());
        renamed.get_or_insert_with(HashMap::new).insert(h, name);
        return Ok(());
    }
    with_user_type(function, h, |u| u.name = name)
}

/// Writes an `int` result, or MPI_UNDEFINED when the value does not fit.
fn out_int(function: &str, arg: &str, p: *mut c_int, v: i64) -> MpiResult<()> {
    out(
        function,
        arg,
        p,
        c_int::try_from(v).unwrap_or(MPI_UNDEFINED),
    )
}

/// An `MPI_Aint` or `MPI_Count` result (both 64-bit here).
trait Address: Copy {
    fn from_wide(v: i64) -> Self;
}
impl Address for isize {
    fn from_wide(v: i64) -> Self {
        v as isize
    }
}
impl Address for i64 {
    fn from_wide(v: i64) -> Self {
        v
    }
}

const TRUE_BOUNDS: [&str; 2] = ["true_lb", "true_extent"];

fn true_bounds(t: &Datatype) -> (i64, i64) {
    (t.true_lb(), t.true_extent())
}

/// The extent queries: two results of the datatype, named `names`.
fn bounds<T: Address>(
    function: &str,
    datatype: usize,
    names: [&str; 2],
    first: *mut T,
    second: *mut T,
    get: impl FnOnce(&Datatype) -> (i64, i64),
) -> c_int {
    call(Scope::Process, || {
        let (a, b) = get(&types::lookup(function, "datatype", datatype)?);
        out(function, names[0], first, T::from_wide(a))?;
        out(function, names[1], second, T::from_wide(b))
    })
}

/// The handle returned for a component type by `MPI_Type_get_contents`: predefined
/// types (Fortran 90 ones too) keep their handle, derived ones get a new handle the
/// application frees.
fn component_handle(t: &Datatype) -> usize {
    let predefined = t.basic_kind().and_then(types::predefined_handle);
    match predefined.or_else(|| t.f90_kind().map(|(kind, b)| types::f90(kind, b))) {
        Some(h) => h,
        None => {
            let h = types::create(t.clone());
            types::commit(h);
            h
        }
    }
}

struct Envelope {
    combiner: c_int,
    integers: i64,
    addresses: i64,
    large_counts: i64,
    datatypes: i64,
}

fn envelope(function: &str, h: usize) -> MpiResult<Envelope> {
    let e = types::lookup(function, "datatype", h)?.envelope();
    Ok(Envelope {
        combiner: e.combiner.abi_code() as c_int,
        integers: e.num_integers as i64,
        addresses: e.num_addresses as i64,
        large_counts: e.num_large_counts as i64,
        datatypes: e.num_datatypes as i64,
    })
}

/// The envelope for the `int` forms of the queries, which cannot describe a type a
/// large-count constructor built.
fn int_envelope(function: &str, h: usize) -> MpiResult<Envelope> {
    let e = envelope(function, h)?;
    if e.large_counts > 0 {
        return Err(MpiError::arg(
            ErrorClass::Type,
            function,
            "datatype",
            handle::describe(h),
            "built by a large-count constructor: use the _c form of this call",
        ));
    }
    Ok(e)
}

/// `MPI_Type_get_contents[_c]`: checks room (`max` per array), fills the arrays.
fn contents(
    function: &str,
    h: usize,
    max: [i64; 4],
    integers: *mut c_int,
    addresses: *mut isize,
    large_counts: *mut i64,
    datatypes: *mut usize,
) -> MpiResult<()> {
    let t = types::lookup(function, "datatype", h)?;
    if t.envelope().combiner == Combiner::Named {
        return Err(MpiError::arg(
            ErrorClass::Type,
            function,
            "datatype",
            handle::describe(h),
            "a predefined datatype has no contents (combiner MPI_COMBINER_NAMED)",
        ));
    }
    let c = t.contents();
    let names = [
        "max_integers",
        "max_addresses",
        "max_large_counts",
        "max_datatypes",
    ];
    let lens = [
        c.integers.len(),
        c.addresses.len(),
        c.large_counts.len(),
        c.datatypes.len(),
    ];
    for ((name, &have), &need) in names.iter().zip(&max).zip(&lens) {
        if have < need as i64 {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                function,
                name,
                have,
                format!("the datatype has {need} such arguments"),
            ));
        }
    }
    for (o, &v) in slice_mut(function, "array_of_integers", integers, lens[0])?
        .iter_mut()
        .zip(&c.integers)
    {
        *o = v as c_int;
    }
    for (o, &v) in slice_mut(function, "array_of_addresses", addresses, lens[1])?
        .iter_mut()
        .zip(&c.addresses)
    {
        *o = v as isize;
    }
    slice_mut(function, "array_of_large_counts", large_counts, lens[2])?
        .copy_from_slice(&c.large_counts);
    for (o, t) in slice_mut(function, "array_of_datatypes", datatypes, lens[3])?
        .iter_mut()
        .zip(&c.datatypes)
    {
        *o = component_handle(t);
    }
    Ok(())
}

/// `MPI_Type_match_size`: the Fortran sized type of the class and size.
fn match_size(function: &str, typeclass: c_int, size: c_int) -> MpiResult<usize> {
    let prefix = match typeclass {
        MPI_TYPECLASS_INTEGER => "MPI_INTEGER",
        MPI_TYPECLASS_REAL => "MPI_REAL",
        MPI_TYPECLASS_COMPLEX => "MPI_COMPLEX",
        v => {
            return Err(MpiError::arg(
                ErrorClass::Arg,
                function,
                "typeclass",
                v,
                "not MPI_TYPECLASS_INTEGER, _REAL or _COMPLEX",
            ))
        }
    };
    let name = format!("{prefix}{size}");
    Basic::ALL
        .iter()
        .find(|b| b.mpi_name() == name)
        .and_then(|&b| types::predefined_handle(b))
        .ok_or_else(|| {
            MpiError::arg(
                ErrorClass::Arg,
                function,
                "size",
                size,
                format!("no predefined {prefix}n type has this size"),
            )
        })
}

/// `MPI_Type_get_value_index`: the predefined MINLOC/MAXLOC pair of the two types.
fn value_index(function: &str, value: usize, index: usize) -> MpiResult<usize> {
    let v = types::lookup(function, "value_type", value)?.basic_kind();
    let i = types::lookup(function, "index_type", index)?.basic_kind();
    Ok(Basic::ALL
        .iter()
        .find(|b| {
            b.pair_members()
                .is_some_and(|(bv, bi)| Some(bv) == v && Some(bi) == i)
        })
        .and_then(|&b| types::predefined_handle(b))
        .unwrap_or(MPI_DATATYPE_NULL))
}

export! {
    fn MPI_Type_contiguous / PMPI_Type_contiguous(count: c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        contiguous("MPI_Type_contiguous", false, count as i64, oldtype, newtype)
    }
    fn MPI_Type_contiguous_c / PMPI_Type_contiguous_c(count: i64, oldtype: usize, newtype: *mut usize) -> c_int {
        contiguous("MPI_Type_contiguous_c", true, count, oldtype, newtype)
    }
    fn MPI_Type_vector / PMPI_Type_vector(count: c_int, blocklength: c_int, stride: c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        vector("MPI_Type_vector", false, count as i64, blocklength as i64, stride as i64, false, oldtype, newtype)
    }
    fn MPI_Type_vector_c / PMPI_Type_vector_c(count: i64, blocklength: i64, stride: i64, oldtype: usize, newtype: *mut usize) -> c_int {
        vector("MPI_Type_vector_c", true, count, blocklength, stride, false, oldtype, newtype)
    }
    fn MPI_Type_create_hvector / PMPI_Type_create_hvector(count: c_int, blocklength: c_int, stride: isize, oldtype: usize, newtype: *mut usize) -> c_int {
        vector("MPI_Type_create_hvector", false, count as i64, blocklength as i64, stride as i64, true, oldtype, newtype)
    }
    fn MPI_Type_create_hvector_c / PMPI_Type_create_hvector_c(count: i64, blocklength: i64, stride: i64, oldtype: usize, newtype: *mut usize) -> c_int {
        vector("MPI_Type_create_hvector_c", true, count, blocklength, stride, true, oldtype, newtype)
    }
    fn MPI_Type_indexed / PMPI_Type_indexed(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed("MPI_Type_indexed", false, count as i64, array_of_blocklengths, array_of_displacements, false, oldtype, newtype)
    }
    fn MPI_Type_indexed_c / PMPI_Type_indexed_c(count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed("MPI_Type_indexed_c", true, count, array_of_blocklengths, array_of_displacements, false, oldtype, newtype)
    }
    fn MPI_Type_create_hindexed / PMPI_Type_create_hindexed(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const isize, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed("MPI_Type_create_hindexed", false, count as i64, array_of_blocklengths, array_of_displacements, true, oldtype, newtype)
    }
    fn MPI_Type_create_hindexed_c / PMPI_Type_create_hindexed_c(count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed("MPI_Type_create_hindexed_c", true, count, array_of_blocklengths, array_of_displacements, true, oldtype, newtype)
    }
    fn MPI_Type_create_indexed_block / PMPI_Type_create_indexed_block(count: c_int, blocklength: c_int, array_of_displacements: *const c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed_block("MPI_Type_create_indexed_block", false, count as i64, blocklength as i64, array_of_displacements, false, oldtype, newtype)
    }
    fn MPI_Type_create_indexed_block_c / PMPI_Type_create_indexed_block_c(count: i64, blocklength: i64, array_of_displacements: *const i64, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed_block("MPI_Type_create_indexed_block_c", true, count, blocklength, array_of_displacements, false, oldtype, newtype)
    }
    fn MPI_Type_create_hindexed_block / PMPI_Type_create_hindexed_block(count: c_int, blocklength: c_int, array_of_displacements: *const isize, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed_block("MPI_Type_create_hindexed_block", false, count as i64, blocklength as i64, array_of_displacements, true, oldtype, newtype)
    }
    fn MPI_Type_create_hindexed_block_c / PMPI_Type_create_hindexed_block_c(count: i64, blocklength: i64, array_of_displacements: *const i64, oldtype: usize, newtype: *mut usize) -> c_int {
        indexed_block("MPI_Type_create_hindexed_block_c", true, count, blocklength, array_of_displacements, true, oldtype, newtype)
    }
    fn MPI_Type_create_struct / PMPI_Type_create_struct(count: c_int, array_of_blocklengths: *const c_int, array_of_displacements: *const isize, array_of_types: *const usize, newtype: *mut usize) -> c_int {
        structure("MPI_Type_create_struct", false, count as i64, array_of_blocklengths, array_of_displacements, array_of_types, newtype)
    }
    fn MPI_Type_create_struct_c / PMPI_Type_create_struct_c(count: i64, array_of_blocklengths: *const i64, array_of_displacements: *const i64, array_of_types: *const usize, newtype: *mut usize) -> c_int {
        structure("MPI_Type_create_struct_c", true, count, array_of_blocklengths, array_of_displacements, array_of_types, newtype)
    }
    fn MPI_Type_create_subarray / PMPI_Type_create_subarray(ndims: c_int, array_of_sizes: *const c_int, array_of_subsizes: *const c_int, array_of_starts: *const c_int, order: c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        subarray("MPI_Type_create_subarray", false, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype)
    }
    fn MPI_Type_create_subarray_c / PMPI_Type_create_subarray_c(ndims: c_int, array_of_sizes: *const i64, array_of_subsizes: *const i64, array_of_starts: *const i64, order: c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        subarray("MPI_Type_create_subarray_c", true, ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, newtype)
    }
    fn MPI_Type_create_darray / PMPI_Type_create_darray(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const c_int, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        darray("MPI_Type_create_darray", false, size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype)
    }
    fn MPI_Type_create_darray_c / PMPI_Type_create_darray_c(size: c_int, rank: c_int, ndims: c_int, array_of_gsizes: *const i64, array_of_distribs: *const c_int, array_of_dargs: *const c_int, array_of_psizes: *const c_int, order: c_int, oldtype: usize, newtype: *mut usize) -> c_int {
        darray("MPI_Type_create_darray_c", true, size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype, newtype)
    }
    fn MPI_Type_create_resized / PMPI_Type_create_resized(oldtype: usize, lb: isize, extent: isize, newtype: *mut usize) -> c_int {
        resized("MPI_Type_create_resized", false, oldtype, lb as i64, extent as i64, newtype)
    }
    fn MPI_Type_create_resized_c / PMPI_Type_create_resized_c(oldtype: usize, lb: i64, extent: i64, newtype: *mut usize) -> c_int {
        resized("MPI_Type_create_resized_c", true, oldtype, lb, extent, newtype)
    }

    fn MPI_Type_dup / PMPI_Type_dup(oldtype: usize, newtype: *mut usize) -> c_int {
        let f = "MPI_Type_dup";
        call(Scope::Process, || {
            let t = types::lookup(f, "oldtype", oldtype)?;
            let committed = types::committed(f, "oldtype", oldtype).is_ok();
            if newtype.is_null() {
                return out(f, "newtype", newtype, 0);
            }
            let h = types::create(t.dup());
            if let Err(e) = crate::attr::copy_type_attrs(f, oldtype, h) {
                // As for MPI_Comm_dup: the half-made duplicate goes, the output is NULL,
                // and the copy's failure is the error reported.
                let _ = crate::attr::delete_type_attrs(f, h);
                types::free(h);
                out(f, "newtype", newtype, MPI_DATATYPE_NULL)?;
                return Err(e);
            }
            if committed {
                types::commit(h);
            }
            out(f, "newtype", newtype, h)
        })
    }

    fn MPI_Type_commit / PMPI_Type_commit(datatype: *mut usize) -> c_int {
        let f = "MPI_Type_commit";
        call(Scope::Process, || {
            let h = slice(f, "datatype", datatype, 1)?[0];
            types::lookup(f, "datatype", h)?;
            types::commit(h);
            Ok(())
        })
    }

    fn MPI_Type_free / PMPI_Type_free(datatype: *mut usize) -> c_int {
        let f = "MPI_Type_free";
        call(Scope::Process, || {
            let h = slice(f, "datatype", datatype, 1)?[0];
            if with_user_type(f, h, |u| u.dtype.f90_kind().is_some())? {
                return Err(MpiError::arg(
                    ErrorClass::Type,
                    f,
                    "datatype",
                    handle::describe(h),
                    "predefined datatypes cannot be changed or freed (MPI_Type_create_f90_* \
                     returns predefined types)",
                ));
            }
            crate::attr::delete_type_attrs(f, h)?;
            types::free(h);
            out(f, "datatype", datatype, MPI_DATATYPE_NULL)
        })
    }

    fn MPI_Type_size / PMPI_Type_size(datatype: usize, size: *mut c_int) -> c_int {
        let f = "MPI_Type_size";
        call(Scope::Process, || out_int(f, "size", size, types::lookup(f, "datatype", datatype)?.size() as i64))
    }
    fn MPI_Type_size_x / PMPI_Type_size_x(datatype: usize, size: *mut i64) -> c_int {
        let f = "MPI_Type_size_x";
        call(Scope::Process, || out(f, "size", size, types::lookup(f, "datatype", datatype)?.size() as i64))
    }
    fn MPI_Type_size_c / PMPI_Type_size_c(datatype: usize, size: *mut i64) -> c_int {
        PMPI_Type_size_x(datatype, size)
    }

    fn MPI_Type_get_extent / PMPI_Type_get_extent(datatype: usize, lb: *mut isize, extent: *mut isize) -> c_int {
        bounds("MPI_Type_get_extent", datatype, ["lb", "extent"], lb, extent, |t| (t.lb(), t.extent()))
    }
    fn MPI_Type_get_extent_x / PMPI_Type_get_extent_x(datatype: usize, lb: *mut i64, extent: *mut i64) -> c_int {
        bounds("MPI_Type_get_extent_x", datatype, ["lb", "extent"], lb, extent, |t| (t.lb(), t.extent()))
    }
    fn MPI_Type_get_extent_c / PMPI_Type_get_extent_c(datatype: usize, lb: *mut i64, extent: *mut i64) -> c_int {
        bounds("MPI_Type_get_extent_c", datatype, ["lb", "extent"], lb, extent, |t| (t.lb(), t.extent()))
    }
    fn MPI_Type_get_true_extent / PMPI_Type_get_true_extent(datatype: usize, true_lb: *mut isize, true_extent: *mut isize) -> c_int {
        bounds("MPI_Type_get_true_extent", datatype, TRUE_BOUNDS, true_lb, true_extent, true_bounds)
    }
    fn MPI_Type_get_true_extent_x / PMPI_Type_get_true_extent_x(datatype: usize, true_lb: *mut i64, true_extent: *mut i64) -> c_int {
        bounds("MPI_Type_get_true_extent_x", datatype, TRUE_BOUNDS, true_lb, true_extent, true_bounds)
    }
    fn MPI_Type_get_true_extent_c / PMPI_Type_get_true_extent_c(datatype: usize, true_lb: *mut i64, true_extent: *mut i64) -> c_int {
        bounds("MPI_Type_get_true_extent_c", datatype, TRUE_BOUNDS, true_lb, true_extent, true_bounds)
    }

    fn MPI_Type_get_envelope / PMPI_Type_get_envelope(datatype: usize, num_integers: *mut c_int, num_addresses: *mut c_int, num_datatypes: *mut c_int, combiner: *mut c_int) -> c_int {
        let f = "MPI_Type_get_envelope";
        call(Scope::Process, || {
            let e = int_envelope(f, datatype)?;
            out(f, "num_integers", num_integers, e.integers as c_int)?;
            out(f, "num_addresses", num_addresses, e.addresses as c_int)?;
            out(f, "num_datatypes", num_datatypes, e.datatypes as c_int)?;
            out(f, "combiner", combiner, e.combiner)
        })
    }
    fn MPI_Type_get_envelope_c / PMPI_Type_get_envelope_c(datatype: usize, num_integers: *mut i64, num_addresses: *mut i64, num_large_counts: *mut i64, num_datatypes: *mut i64, combiner: *mut c_int) -> c_int {
        let f = "MPI_Type_get_envelope_c";
        call(Scope::Process, || {
            let e = envelope(f, datatype)?;
            out(f, "num_integers", num_integers, e.integers)?;
            out(f, "num_addresses", num_addresses, e.addresses)?;
            out(f, "num_large_counts", num_large_counts, e.large_counts)?;
            out(f, "num_datatypes", num_datatypes, e.datatypes)?;
            out(f, "combiner", combiner, e.combiner)
        })
    }

    fn MPI_Type_get_contents / PMPI_Type_get_contents(datatype: usize, max_integers: c_int, max_addresses: c_int, max_datatypes: c_int, array_of_integers: *mut c_int, array_of_addresses: *mut isize, array_of_datatypes: *mut usize) -> c_int {
        let f = "MPI_Type_get_contents";
        call(Scope::Process, || {
            int_envelope(f, datatype)?;
            let max = [max_integers as i64, max_addresses as i64, 0, max_datatypes as i64];
            contents(f, datatype, max, array_of_integers, array_of_addresses, std::ptr::null_mut(), array_of_datatypes)
        })
    }
    fn MPI_Type_get_contents_c / PMPI_Type_get_contents_c(datatype: usize, max_integers: i64, max_addresses: i64, max_large_counts: i64, max_datatypes: i64, array_of_integers: *mut c_int, array_of_addresses: *mut isize, array_of_large_counts: *mut i64, array_of_datatypes: *mut usize) -> c_int {
        let f = "MPI_Type_get_contents_c";
        call(Scope::Process, || {
            let max = [max_integers, max_addresses, max_large_counts, max_datatypes];
            contents(f, datatype, max, array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes)
        })
    }

    fn MPI_Type_get_name / PMPI_Type_get_name(datatype: usize, type_name: *mut c_char, resultlen: *mut c_int) -> c_int {
        let f = "MPI_Type_get_name";
        call(Scope::Process, || {
            let name = name_of(f, datatype)?;
            out_string(f, "type_name", type_name, resultlen, &name, MPI_MAX_OBJECT_NAME as usize)
        })
    }
    fn MPI_Type_set_name / PMPI_Type_set_name(datatype: usize, type_name: *const c_char) -> c_int {
        let f = "MPI_Type_set_name";
        call(Scope::Process, || set_name(f, datatype, in_string(f, "type_name", type_name)?))
    }

    fn MPI_Type_match_size / PMPI_Type_match_size(typeclass: c_int, size: c_int, datatype: *mut usize) -> c_int {
        let f = "MPI_Type_match_size";
        call(Scope::Process, || out(f, "datatype", datatype, match_size(f, typeclass, size)?))
    }
    fn MPI_Type_get_value_index / PMPI_Type_get_value_index(value_type: usize, index_type: usize, pair_type: *mut usize) -> c_int {
        let f = "MPI_Type_get_value_index";
        call(Scope::Process, || out(f, "pair_type", pair_type, value_index(f, value_type, index_type)?))
    }

    fn MPI_Get_address / PMPI_Get_address(location: *const c_void, address: *mut isize) -> c_int {
        let f = "MPI_Get_address";
        call(Scope::Process, || out(f, "address", address, location as isize))
    }
    fn MPI_Aint_add / PMPI_Aint_add(base: isize, disp: isize) -> isize {
        base.wrapping_add(disp)
    }
    fn MPI_Aint_diff / PMPI_Aint_diff(addr1: isize, addr2: isize) -> isize {
        addr1.wrapping_sub(addr2)
    }

    fn MPI_Get_count_c / PMPI_Get_count_c(status: *const MpiStatus, datatype: usize, count: *mut i64) -> c_int {
        let f = "MPI_Get_count_c";
        call(Scope::Process, || out(f, "count", count, p2p::as_count(p2p::received_count(f, status, datatype)?)))
    }
    fn MPI_Get_elements_c / PMPI_Get_elements_c(status: *const MpiStatus, datatype: usize, count: *mut i64) -> c_int {
        let f = "MPI_Get_elements_c";
        call(Scope::Process, || out(f, "count", count, p2p::as_count(p2p::received_elements(f, status, datatype)?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_keep_the_callers_name_and_get_their_class() {
        let e = Datatype::indexed(&[1, 2], &[0], &Datatype::basic(Basic::Int)).unwrap_err();
        let m = type_error("MPI_Type_indexed_c", e);
        assert_eq!(m.class, ErrorClass::Arg);
        assert!(m.message.starts_with("MPI_Type_indexed_c:"));
        assert!(m.message.contains("array_of_displacements"));
    }

    #[test]
    fn sized_and_pair_types_are_found() {
        let size_of = |h| types::lookup("t", "datatype", h).unwrap().size();
        assert_eq!(size_of(match_size("t", MPI_TYPECLASS_REAL, 8).unwrap()), 8);
        assert_eq!(
            size_of(match_size("t", MPI_TYPECLASS_COMPLEX, 16).unwrap()),
            16
        );
        assert_eq!(
            size_of(match_size("t", MPI_TYPECLASS_INTEGER, 2).unwrap()),
            2
        );
        assert!(match_size("t", MPI_TYPECLASS_INTEGER, 3).is_err());
        assert!(match_size("t", 7, 4).is_err());
        assert_eq!(value_index("t", MPI_FLOAT, MPI_INT).unwrap(), MPI_FLOAT_INT);
        assert_eq!(value_index("t", MPI_INT, MPI_INT).unwrap(), MPI_2INT);
        assert_eq!(
            value_index("t", MPI_CHAR, MPI_INT).unwrap(),
            MPI_DATATYPE_NULL
        );
    }
}
