//! Datatype handles: the predefined types (named by the standard, found through the
//! header's constants) and the types applications build.

use crate::consts::{HANDLE_CONSTANTS, MPI_DATATYPE_NULL};
use crate::handle::{self, Kind};
use crossmpi_core::datatype::{Basic, Datatype, Marker, F90};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::slab::Slab;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A type an application built: committed or not, with its name.
pub struct UserType {
    pub dtype: Datatype,
    pub committed: bool,
    pub name: String,
}

static USER_TYPES: Mutex<Slab<UserType>> = Mutex::new(Slab::new_const());

pub fn user_types() -> std::sync::MutexGuard<'static, Slab<UserType>> {
    USER_TYPES.lock().unwrap_or_else(|p| p.into_inner())
}

/// Predefined datatype handles are below this value (the ABI gives them 0x200..0x2ff).
const PREDEFINED_LIMIT: usize = 0x400;

/// The handles of the MPI-1 marker types `MPI_LB` and `MPI_UB`, which MPI-3 removed and
/// the MPI-5.0 ABI does not have: old Fortran codes still use them, so `mpif.h` and the
/// `mpi` module define them with these values (crossmpi-fortran-gen's constants), above
/// the ABI's block of predefined datatypes.
pub const MPI1_LB: usize = 0x3f0;
pub const MPI1_UB: usize = 0x3f1;

/// Predefined datatype handle value -> its type, as a table indexed by the value (the
/// lookup is on every communication call's path).
fn predefined() -> &'static [Option<Datatype>] {
    static TABLE: OnceLock<Vec<Option<Datatype>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table = vec![None; PREDEFINED_LIMIT];
        for &b in Basic::ALL {
            if let Some(&(_, value)) = HANDLE_CONSTANTS
                .iter()
                .find(|(name, _)| *name == b.mpi_name())
            {
                table[value] = Some(Datatype::basic(b));
            }
        }
        table[MPI1_LB] = Some(Datatype::marker(Marker::Lower));
        table[MPI1_UB] = Some(Datatype::marker(Marker::Upper));
        table
    })
}

fn predefined_type(h: usize) -> Option<&'static Datatype> {
    predefined().get(h).and_then(Option::as_ref)
}

/// The predefined type a handle names if its elements lie dense in memory (no gaps,
/// lower bound 0: every type but some MINLOC/MAXLOC pairs), by table lookup: the
/// one-sided direct path moves `count * size` bytes of them without a datatype object.
pub fn predefined_dense(h: usize) -> Option<Basic> {
    static TABLE: OnceLock<Vec<Option<Basic>>> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        predefined()
            .iter()
            .map(|t| {
                let t = t.as_ref()?;
                let dense = t.is_contiguous() && t.lb() == 0 && t.extent() == t.size() as i64;
                t.basic_kind().filter(|_| dense)
            })
            .collect()
    });
    table.get(h).copied().flatten()
}

/// The name of the predefined type a handle names.
pub fn predefined_name(h: usize) -> Option<&'static str> {
    match h {
        MPI1_LB => Some("MPI_LB"),
        MPI1_UB => Some("MPI_UB"),
        _ => predefined_type(h)?.basic_kind().map(Basic::mpi_name),
    }
}

/// The handle of a predefined type (for `MPI_Type_get_contents` and friends).
pub fn predefined_handle(b: Basic) -> Option<usize> {
    HANDLE_CONSTANTS
        .iter()
        .find(|(name, _)| *name == b.mpi_name())
        .map(|&(_, v)| v)
}

fn bad(function: &str, arg: &str, h: usize, why: &str) -> MpiError {
    MpiError::arg(ErrorClass::Type, function, arg, handle::describe(h), why)
}

/// Any live datatype, committed or not.
pub fn lookup(function: &str, arg: &str, h: usize) -> MpiResult<Datatype> {
    if let Some(t) = predefined_type(h) {
        return Ok(t.clone());
    }
    if h == MPI_DATATYPE_NULL {
        return Err(bad(function, arg, h, "MPI_DATATYPE_NULL is not a datatype"));
    }
    let slot = handle::decode(Kind::Datatype, h)
        .ok_or_else(|| bad(function, arg, h, "not a datatype handle"))?;
    user_types()
        .by_index(slot)
        .map(|(_, t)| t.dtype.clone())
        .ok_or_else(|| bad(function, arg, h, "freed or never created"))
}

/// A datatype usable for communication: committed.
pub fn committed(function: &str, arg: &str, h: usize) -> MpiResult<Datatype> {
    with_committed(function, arg, h, |t| Ok(t.clone()))
}

/// Runs `f` on a committed datatype without taking a reference to it: one look into
/// the table, which is on every communication call's path with a built type.
pub fn with_committed<R>(
    function: &str,
    arg: &str,
    h: usize,
    f: impl FnOnce(&Datatype) -> MpiResult<R>,
) -> MpiResult<R> {
    if let Some(t) = predefined_type(h) {
        return f(t);
    }
    let Some(slot) = handle::decode(Kind::Datatype, h) else {
        return lookup(function, arg, h).and_then(|t| f(&t));
    };
    match user_types().by_index(slot) {
        Some((_, t)) if t.committed => f(&t.dtype),
        Some(_) => Err(bad(
            function,
            arg,
            h,
            "not committed (call MPI_Type_commit first)",
        )),
        None => Err(bad(function, arg, h, "freed or never created")),
    }
}

pub fn is_predefined(h: usize) -> bool {
    predefined_type(h).is_some()
}

/// Registers a new (uncommitted) type and returns its handle.
pub fn create(dtype: Datatype) -> usize {
    let id = user_types().insert(UserType {
        dtype,
        committed: false,
        name: String::new(),
    });
    handle::encode(Kind::Datatype, id.index)
}

/// The handle of the Fortran 90 type `kind` (laid out as `b`), made on its first
/// request: one handle per distinct request, as the standard asks, so a program may ask
/// again and again without filling the table. Such a type is predefined, so it is never
/// freed (`MPI_Type_free` tells it by `Datatype::f90_kind`).
pub fn f90(kind: F90, b: Basic) -> usize {
    static MADE: Mutex<Option<HashMap<F90, usize>>> = Mutex::new(None);
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    *made
        .get_or_insert_with(HashMap::new)
        .entry(kind)
        .or_insert_with(|| {
            let id = user_types().insert(UserType {
                dtype: Datatype::f90(kind, b),
                committed: true,
                name: String::new(),
            });
            handle::encode(Kind::Datatype, id.index)
        })
}

/// Marks a user type committed (predefined types always are).
pub fn commit(h: usize) {
    if let Some(slot) = handle::decode(Kind::Datatype, h) {
        let mut all = user_types();
        if let Some((id, _)) = all.by_index(slot) {
            if let Some(t) = all.get_mut(id) {
                t.committed = true;
            }
        }
    }
}

/// Releases a user type's handle; operations in flight keep their own reference.
pub fn free(h: usize) {
    if let Some(slot) = handle::decode(Kind::Datatype, h) {
        let mut all = user_types();
        if let Some((id, _)) = all.by_index(slot) {
            all.remove(id);
        }
    }
}

/// A handle naming a datatype while a user callback runs; a temporary handle (for a type
/// no application handle names) is freed when this is dropped.
pub struct TypeHandle {
    value: usize,
    temporary: bool,
}

impl TypeHandle {
    pub fn value(&self) -> usize {
        self.value
    }
}

impl Drop for TypeHandle {
    fn drop(&mut self) {
        if self.temporary {
            free(self.value);
        }
    }
}

/// The handle an application knows `dtype` by, for user reduction functions (which get
/// the datatype handle of the reduction): the predefined handle, else a live user
/// handle of the same type (committed ones first), else a temporary committed handle.
pub fn handle_for(dtype: &Datatype) -> TypeHandle {
    if let Some(v) = dtype.basic_kind().and_then(predefined_handle) {
        return TypeHandle {
            value: v,
            temporary: false,
        };
    }
    let mut types = user_types();
    let found = types
        .iter()
        .filter(|(_, t)| t.dtype.same(dtype))
        .max_by_key(|(_, t)| t.committed)
        .map(|(id, _)| handle::encode(Kind::Datatype, id.index));
    if let Some(value) = found {
        return TypeHandle {
            value,
            temporary: false,
        };
    }
    let id = types.insert(UserType {
        dtype: dtype.clone(),
        committed: true,
        name: String::new(),
    });
    TypeHandle {
        value: handle::encode(Kind::Datatype, id.index),
        temporary: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::*;

    #[test]
    fn predefined_handles_map_to_their_types() {
        assert_eq!(lookup("t", "datatype", MPI_INT).unwrap().size(), 4);
        assert_eq!(lookup("t", "datatype", MPI_DOUBLE).unwrap().size(), 8);
        assert_eq!(lookup("t", "datatype", MPI_DOUBLE_INT).unwrap().size(), 12);
        let e = lookup("MPI_Send", "datatype", MPI_DATATYPE_NULL).unwrap_err();
        assert_eq!(e.class, ErrorClass::Type);
        assert!(e.message.contains("MPI_Send") && e.message.contains("MPI_DATATYPE_NULL"));
        for name in [
            "MPI_CHAR",
            "MPI_BYTE",
            "MPI_PACKED",
            "MPI_INTEGER",
            "MPI_2INT",
            "MPI_C_BOOL",
            "MPI_AINT",
            "MPI_COUNT",
        ] {
            let v = HANDLE_CONSTANTS.iter().find(|(n, _)| *n == name).unwrap().1;
            assert!(is_predefined(v), "{name} has no type");
        }
    }

    #[test]
    fn user_types_must_be_committed_for_communication() {
        let h = create(Datatype::contiguous(3, &Datatype::basic(Basic::Int)).unwrap());
        assert!(committed("MPI_Send", "datatype", h).is_err());
        user_types()
            .by_index(handle::decode(Kind::Datatype, h).unwrap())
            .unwrap();
        let slot = handle::decode(Kind::Datatype, h).unwrap();
        let (id, _) = user_types().by_index(slot).unwrap();
        user_types().get_mut(id).unwrap().committed = true;
        assert_eq!(committed("MPI_Send", "datatype", h).unwrap().size(), 12);
    }

    #[test]
    fn callbacks_get_the_application_handle_or_a_temporary_one() {
        let int = Datatype::basic(Basic::Int);
        assert_eq!(handle_for(&int).value(), MPI_INT);
        let t = Datatype::hvector(3, 2, 40, &int).unwrap();
        let h = create(t.clone());
        assert_eq!(handle_for(&t).value(), h);
        let other = Datatype::hvector(3, 2, 44, &int).unwrap();
        let temp = handle_for(&other);
        assert_ne!(temp.value(), h);
        assert_eq!(
            committed("t", "datatype", temp.value()).unwrap().extent(),
            2 * 44 + 8
        );
        let value = temp.value();
        drop(temp);
        assert!(lookup("t", "datatype", value).is_err());
        free(h);
        assert!(lookup("t", "datatype", h).is_err());
    }
}
