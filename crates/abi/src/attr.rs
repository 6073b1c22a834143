//! Attribute caching: keyvals with copy/delete callbacks, attributes on communicators
//! (stored in the core `Comm`) and on datatypes (stored here, keyed by type handle).
//!
//! Callbacks are user code that may call MPI, so they always run with no lock held.
//! A delete callback runs while its attribute is still set (`MPI_*_get_attr` inside it
//! finds the value), and the attribute goes only if the callback succeeds, as in Open MPI
//! and MPICH: on replacement the old value stays when its delete callback fails, and the
//! call returns that error. [`Store`] gives the three objects' attributes these rules.
//! Keyval entries are never reused: `MPI_*_free_keyval` only marks them freed, because
//! attributes set with a freed keyval stay valid until deleted (the standard's rule), and
//! an application creates only a handful of keyvals.
//!
//! Values cross languages as MPI-4.0 section 19.3.7 says: C sets and gets addresses,
//! Fortran integers. Each stored value says which kind it is ([`AttributeValue`]), a
//! Fortran one living in storage the attribute owns, whose address is C's view of it;
//! C's addresses are Fortran's integers. The calls of the Fortran bindings are the
//! `crossmpi_fortran_*` entries beside the C functions (`export_with_fortran!`), and a
//! keyval created through them runs its callbacks (Fortran procedures behind the
//! trampolines of fortran/support.f90) with Fortran's view, storing what a copy
//! callback gives as an integer.

use crate::comm::{self, handle_of, with_comm};
use crate::consts::*;
use crate::error::{call, Scope};
use crate::util::out;
use crossmpi_core::comm::{AttributeValue, CommId};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use crossmpi_core::runtime;
use std::collections::BTreeMap;
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;

/// `MPI_Comm_copy_attr_function` and its datatype, window and MPI-1 twins (same ABI).
pub type CopyFn =
    unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
/// `MPI_Comm_delete_attr_function` and its twins.
pub type DeleteFn = unsafe extern "C" fn(usize, c_int, *mut c_void, *mut c_void) -> c_int;

/// The objects keyvals are created for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Object {
    Comm,
    Type,
    /// Windows (their attributes are kept in `win.rs`).
    Win,
}

/// The language whose view of attribute values a call takes, or a keyval's callbacks:
/// C sees addresses, Fortran integers.
#[derive(Clone, Copy)]
pub enum Language {
    C,
    Fortran,
}

impl Language {
    /// What an attribute set from this language with `value` (the pointer argument of the
    /// C call, which the Fortran bindings fill with the integer) stores.
    pub(crate) fn stored(self, value: usize) -> AttributeValue {
        match self {
            Language::C => AttributeValue::Address(value),
            Language::Fortran => AttributeValue::Integer(Box::new(value as isize)),
        }
    }
}

/// An attribute found on an object, read without holding its store: an address, or an
/// integer and the address of the storage holding it (C's view of it).
#[derive(Clone, Copy)]
pub(crate) enum Found {
    Address(usize),
    Integer { value: isize, storage: usize },
}

impl Found {
    pub(crate) fn of(stored: &AttributeValue) -> Found {
        match stored {
            AttributeValue::Address(a) => Found::Address(*a),
            AttributeValue::Integer(v) => Found::Integer {
                value: **v,
                storage: &**v as *const isize as usize,
            },
        }
    }

    /// A predefined integer attribute (`MPI_TAG_UB`...), which behaves as if set by
    /// `MPI_ATTR_PUT`: C is given the address of its cell.
    pub(crate) fn int_cell(cell: &AtomicI32) -> Found {
        Found::Integer {
            value: cell.load(Ordering::Relaxed) as isize,
            storage: cell.as_ptr() as usize,
        }
    }

    /// The value as `language` sees it: C an address (for an integer, of its storage),
    /// Fortran an integer (an address converted).
    pub(crate) fn seen_from(self, language: Language) -> usize {
        match (self, language) {
            (Found::Address(a), _) => a,
            (Found::Integer { storage, .. }, Language::C) => storage,
            (Found::Integer { value, .. }, Language::Fortran) => value as usize,
        }
    }

    /// What `MPI_*_DUP_FN` gives the copy: the same kind of value, an integer in storage
    /// of its own.
    fn duplicate(self) -> AttributeValue {
        match self {
            Found::Address(a) => AttributeValue::Address(a),
            Found::Integer { value, .. } => AttributeValue::Integer(Box::new(value)),
        }
    }
}

/// The sentinel values of `MPI_*_NULL_COPY_FN` and `MPI_*_DUP_FN` in the ABI.
const NULL_COPY: usize = 0;
const DUP_COPY: usize = 1;

#[derive(Clone, Copy)]
pub(crate) struct Keyval {
    object: Object,
    /// The language of the callbacks: the one of the call that created the keyval.
    language: Language,
    /// The copy callback's address, or one of the sentinels.
    copy: usize,
    /// The delete callback's address, or 0 for `MPI_*_NULL_DELETE_FN`.
    delete: usize,
    extra: usize,
    freed: bool,
}

/// User keyvals are `FIRST_KEYVAL + index`: above every predefined attribute key.
const FIRST_KEYVAL: c_int = 0x1000;

static KEYVALS: Mutex<Vec<Keyval>> = Mutex::new(Vec::new());

fn keyvals() -> std::sync::MutexGuard<'static, Vec<Keyval>> {
    KEYVALS.lock().unwrap_or_else(|p| p.into_inner())
}

fn create_keyval(
    object: Object,
    language: Language,
    copy: usize,
    delete: usize,
    extra: usize,
) -> c_int {
    let mut k = keyvals();
    k.push(Keyval {
        object,
        language,
        copy,
        delete,
        extra,
        freed: false,
    });
    FIRST_KEYVAL + k.len() as c_int - 1
}

/// The keyval `key` of `object`; `for_new` refuses freed keyvals (setting, not reading).
pub(crate) fn keyval(
    function: &str,
    object: Object,
    key: c_int,
    for_new: bool,
) -> MpiResult<Keyval> {
    let bad = |why: &str| MpiError::arg(ErrorClass::Keyval, function, "keyval", key, why);
    let k = keyvals()
        .get((key - FIRST_KEYVAL).max(-1) as usize)
        .copied()
        .ok_or_else(|| bad("not a keyval created by MPI_*_create_keyval"))?;
    if k.object != object {
        return Err(bad(&format!(
            "a keyval for {:?} objects, not {object:?}",
            k.object
        )));
    }
    if for_new && k.freed {
        return Err(bad("freed"));
    }
    Ok(k)
}

pub(crate) fn free_keyval(function: &str, object: Object, key: *mut c_int) -> MpiResult<()> {
    if key.is_null() {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "keyval",
            "NULL",
            "a pointer to a keyval is required",
        ));
    }
    // SAFETY: non-null int* argument (C ABI contract).
    let k = unsafe { *key };
    keyval(function, object, k, true)?;
    keyvals()[(k - FIRST_KEYVAL) as usize].freed = true;
    out(function, "keyval", key, MPI_KEYVAL_INVALID)
}

fn callback_error(function: &str, which: &str, key: c_int, code: c_int) -> MpiError {
    crate::error::callback_failed(
        function,
        format_args!("the {which} callback of keyval {key}"),
        code,
    )
}

/// Runs the delete callback of `key` for a value removed from object `h`, in the view of
/// the keyval's language.
fn run_delete(function: &str, h: usize, key: c_int, k: &Keyval, value: Found) -> MpiResult<()> {
    if k.delete == 0 {
        return Ok(());
    }
    // SAFETY: a non-zero delete address is a function the application registered with
    // MPI_*_create_keyval, of the standard's delete-callback type.
    let f: DeleteFn = unsafe { std::mem::transmute::<usize, DeleteFn>(k.delete) };
    let value = value.seen_from(k.language);
    // SAFETY: called with the standard's arguments: the handle, the keyval, the
    // attribute value and the extra state the application registered.
    let rc = unsafe { f(h, key, value as *mut c_void, k.extra as *mut c_void) };
    if rc != MPI_SUCCESS {
        return Err(callback_error(function, "delete", key, rc));
    }
    Ok(())
}

/// The attributes of one object: a communicator, a datatype or a window.
pub(crate) trait Store {
    /// The handle the callbacks are given.
    fn handle(&self) -> usize;
    fn object(&self) -> Object;
    fn get(&self, function: &str, key: c_int) -> MpiResult<Option<Found>>;
    fn put(&self, function: &str, key: c_int, value: AttributeValue) -> MpiResult<()>;
    fn remove(&self, function: &str, key: c_int) -> MpiResult<()>;
    /// The attribute to delete first when the object is freed.
    fn first_to_delete(&self, function: &str) -> MpiResult<Option<(c_int, Found)>>;
}

/// `MPI_*_set_attr`: a value already set is handed to the delete callback first.
pub(crate) fn set(
    function: &str,
    store: &impl Store,
    key: c_int,
    value: AttributeValue,
) -> MpiResult<()> {
    let k = keyval(function, store.object(), key, true)?;
    if let Some(old) = store.get(function, key)? {
        run_delete(function, store.handle(), key, &k, old)?;
    }
    store.put(function, key, value)
}

/// `MPI_*_delete_attr`; `arg` names the keyval argument.
pub(crate) fn delete(function: &str, store: &impl Store, arg: &str, key: c_int) -> MpiResult<()> {
    let k = keyval(function, store.object(), key, false)?;
    let Some(value) = store.get(function, key)? else {
        return Err(MpiError::arg(
            ErrorClass::Keyval,
            function,
            arg,
            key,
            "no attribute is set with this keyval",
        ));
    };
    run_delete(function, store.handle(), key, &k, value)?;
    store.remove(function, key)
}

/// Deletes every attribute of an object being freed, one at a time (a delete callback
/// may itself set or delete attributes); stops at the first callback that fails.
pub(crate) fn delete_all(function: &str, store: &impl Store) -> MpiResult<()> {
    while let Some((key, value)) = store.first_to_delete(function)? {
        let k = keyval(function, store.object(), key, false)?;
        run_delete(function, store.handle(), key, &k, value)?;
        store.remove(function, key)?;
    }
    Ok(())
}

/// The value a copy callback gives the new object, if any: the callback sees and gives
/// values in the view of the keyval's language.
fn run_copy(
    function: &str,
    h: usize,
    key: c_int,
    k: &Keyval,
    value: Found,
) -> MpiResult<Option<AttributeValue>> {
    match k.copy {
        NULL_COPY => Ok(None),
        DUP_COPY => Ok(Some(value.duplicate())),
        addr => {
            let value = value.seen_from(k.language);
            // SAFETY: as in `run_delete`, for the copy-callback type.
            let f: CopyFn = unsafe { std::mem::transmute::<usize, CopyFn>(addr) };
            let (mut new, mut flag) = (0usize, 0 as c_int);
            // SAFETY: the standard's arguments: old handle, keyval, extra state, the value
            // in, pointers to the value out and to the flag (both live locals).
            let rc = unsafe {
                f(
                    h,
                    key,
                    k.extra as *mut c_void,
                    value as *mut c_void,
                    &mut new as *mut usize as *mut c_void,
                    &mut flag,
                )
            };
            if rc != MPI_SUCCESS {
                return Err(callback_error(function, "copy", key, rc));
            }
            Ok((flag != 0).then(|| k.language.stored(new)))
        }
    }
}

/// Gives the caller of `MPI_*_get_attr` what was found, in `language`'s view.
pub(crate) fn give(
    function: &str,
    language: Language,
    found: Option<Found>,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    out(function, "flag", flag, found.is_some() as c_int)?;
    match found {
        Some(v) => out(
            function,
            "attribute_val",
            attribute_val as *mut usize,
            v.seen_from(language),
        ),
        None => Ok(()),
    }
}

// ------------------------------------------------------------------ communicators

/// Copies `old`'s attributes to its duplicate `new` through the copy callbacks.
pub fn copy_comm_attrs(function: &str, old: CommId, new: CommId) -> MpiResult<()> {
    let (h, attrs) = runtime::with(function, |rt| {
        let attrs: Vec<(c_int, Found, u64)> = rt
            .comm(function, old)?
            .attributes
            .iter()
            .map(|(&key, (value, order))| (key, Found::of(value), *order))
            .collect();
        Ok((handle_of(rt, old), attrs))
    })?;
    for (key, value, order) in attrs {
        let k = keyval(function, Object::Comm, key, false)?;
        if let Some(v) = run_copy(function, h, key, &k, value)? {
            runtime::with(function, |rt| {
                rt.comm_mut(function, new)?
                    .attributes
                    .insert(key, (v, order));
                Ok(())
            })?;
        }
    }
    Ok(())
}

/// A communicator's attributes.
struct CommStore {
    id: CommId,
    handle: usize,
}

impl CommStore {
    fn of_handle(function: &str, comm: usize) -> MpiResult<CommStore> {
        let id = with_comm(function, comm, |_, id| Ok(id))?;
        Ok(CommStore { id, handle: comm })
    }

    fn of_id(function: &str, id: CommId) -> MpiResult<CommStore> {
        let handle = runtime::with(function, |rt| Ok(handle_of(rt, id)))?;
        Ok(CommStore { id, handle })
    }

    fn attributes<R>(
        &self,
        function: &str,
        f: impl FnOnce(&mut BTreeMap<c_int, (AttributeValue, u64)>) -> R,
    ) -> MpiResult<R> {
        runtime::with(function, |rt| {
            Ok(f(&mut rt.comm_mut(function, self.id)?.attributes))
        })
    }
}

impl Store for CommStore {
    fn handle(&self) -> usize {
        self.handle
    }
    fn object(&self) -> Object {
        Object::Comm
    }
    fn get(&self, function: &str, key: c_int) -> MpiResult<Option<Found>> {
        self.attributes(function, |a| a.get(&key).map(|v| Found::of(&v.0)))
    }
    fn put(&self, function: &str, key: c_int, value: AttributeValue) -> MpiResult<()> {
        let order = SET_ORDER.fetch_add(1, Ordering::Relaxed);
        self.attributes(function, |a| {
            a.insert(key, (value, order));
        })
    }
    fn remove(&self, function: &str, key: c_int) -> MpiResult<()> {
        self.attributes(function, |a| {
            a.remove(&key);
        })
    }
    /// The most recently set (the order MPI requires for `MPI_COMM_SELF` at finalize).
    fn first_to_delete(&self, function: &str) -> MpiResult<Option<(c_int, Found)>> {
        self.attributes(function, |a| {
            a.iter()
                .max_by_key(|(_, v)| v.1)
                .map(|(&k, v)| (k, Found::of(&v.0)))
        })
    }
}

/// Deletes every attribute of a communicator being freed, running the callbacks.
pub fn delete_comm_attrs(function: &str, comm: CommId) -> MpiResult<()> {
    delete_all(function, &CommStore::of_id(function, comm)?)
}

/// For `MPI_Finalize`, before anything else: deletes the attributes of
/// `MPI_COMM_SELF`, so libraries caching cleanup actions there (HDF5 does) run them.
pub fn finalize_self(function: &str) -> MpiResult<()> {
    let id = runtime::with(function, |rt| Ok(rt.self_comm))?;
    delete_comm_attrs(function, id)
}

/// Orders attribute settings (for deletion in reverse order).
static SET_ORDER: AtomicU64 = AtomicU64::new(0);

fn comm_set(function: &str, comm: usize, key: c_int, value: AttributeValue) -> MpiResult<()> {
    set(function, &CommStore::of_handle(function, comm)?, key, value)
}

fn comm_delete(function: &str, comm: usize, key: c_int) -> MpiResult<()> {
    delete(
        function,
        &CommStore::of_handle(function, comm)?,
        "keyval",
        key,
    )
}

/// `MPI_Comm_get_attr` in `language`'s view; the predefined attributes are integers.
fn comm_get(
    function: &str,
    language: Language,
    comm: usize,
    key: c_int,
    value: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    let found = with_comm(function, comm, |rt, id| {
        if let Some(cell) = comm::predefined_attribute(rt, id, key) {
            return Ok(Some(Found::int_cell(cell)));
        }
        Ok(rt
            .comm(function, id)?
            .attributes
            .get(&key)
            .map(|a| Found::of(&a.0)))
    })?;
    give(function, language, found, value, flag)
}

// ------------------------------------------------------------------ datatypes

/// Attributes of datatypes by type handle.
type TypeAttrs = BTreeMap<usize, BTreeMap<c_int, AttributeValue>>;

static TYPE_ATTRS: Mutex<TypeAttrs> = Mutex::new(BTreeMap::new());

fn type_attrs() -> std::sync::MutexGuard<'static, TypeAttrs> {
    TYPE_ATTRS.lock().unwrap_or_else(|p| p.into_inner())
}

/// The attribute `key` of datatype `datatype`, if set.
fn type_attr(datatype: usize, key: c_int) -> Option<Found> {
    type_attrs()
        .get(&datatype)
        .and_then(|m| m.get(&key))
        .map(Found::of)
}

fn check_type(function: &str, datatype: usize) -> MpiResult<()> {
    crate::types::lookup(function, "datatype", datatype).map(|_| ())
}

/// For `MPI_Type_dup`: copies `old`'s attributes to `new` through the copy callbacks.
pub fn copy_type_attrs(function: &str, old: usize, new: usize) -> MpiResult<()> {
    let attrs: Vec<(c_int, Found)> = type_attrs()
        .get(&old)
        .map(|m| m.iter().map(|(&key, v)| (key, Found::of(v))).collect())
        .unwrap_or_default();
    for (key, value) in attrs {
        let k = keyval(function, Object::Type, key, false)?;
        if let Some(v) = run_copy(function, old, key, &k, value)? {
            type_attrs().entry(new).or_default().insert(key, v);
        }
    }
    Ok(())
}

/// A datatype's attributes (by type handle).
struct TypeStore(usize);

impl Store for TypeStore {
    fn handle(&self) -> usize {
        self.0
    }
    fn object(&self) -> Object {
        Object::Type
    }
    fn get(&self, _: &str, key: c_int) -> MpiResult<Option<Found>> {
        Ok(type_attr(self.0, key))
    }
    fn put(&self, _: &str, key: c_int, value: AttributeValue) -> MpiResult<()> {
        type_attrs().entry(self.0).or_default().insert(key, value);
        Ok(())
    }
    fn remove(&self, _: &str, key: c_int) -> MpiResult<()> {
        let mut all = type_attrs();
        if let Some(m) = all.get_mut(&self.0) {
            m.remove(&key);
            if m.is_empty() {
                all.remove(&self.0);
            }
        }
        Ok(())
    }
    fn first_to_delete(&self, _: &str) -> MpiResult<Option<(c_int, Found)>> {
        let all = type_attrs();
        Ok(all
            .get(&self.0)
            .and_then(|m| m.last_key_value())
            .map(|(&k, v)| (k, Found::of(v))))
    }
}

/// For `MPI_Type_free`: deletes every attribute of the type, running the callbacks.
pub fn delete_type_attrs(function: &str, datatype: usize) -> MpiResult<()> {
    delete_all(function, &TypeStore(datatype))
}

pub(crate) fn keyval_out(
    function: &str,
    object: Object,
    language: Language,
    copy: usize,
    delete: usize,
    key: *mut c_int,
    extra: *mut c_void,
) -> c_int {
    call(Scope::Process, || {
        out(
            function,
            "keyval",
            key,
            create_keyval(object, language, copy, delete, extra as usize),
        )
    })
}

/// `MPI_Type_get_attr` in `language`'s view.
fn type_get(
    function: &str,
    language: Language,
    datatype: usize,
    key: c_int,
    attribute_val: *mut c_void,
    flag: *mut c_int,
) -> MpiResult<()> {
    check_type(function, datatype)?;
    keyval(function, Object::Type, key, false)?;
    give(
        function,
        language,
        type_attr(datatype, key),
        attribute_val,
        flag,
    )
}

export_with_fortran! {
    |language| fn MPI_Comm_create_keyval / PMPI_Comm_create_keyval / crossmpi_fortran_comm_create_keyval(copy_fn: usize, delete_fn: usize, comm_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        keyval_out("MPI_Comm_create_keyval", Object::Comm, language, copy_fn, delete_fn, comm_keyval, extra_state)
    }

    |language| fn MPI_Keyval_create / PMPI_Keyval_create / crossmpi_fortran_keyval_create(copy_fn: usize, delete_fn: usize, keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        keyval_out("MPI_Keyval_create", Object::Comm, language, copy_fn, delete_fn, keyval, extra_state)
    }

    |language| fn MPI_Comm_set_attr / PMPI_Comm_set_attr / crossmpi_fortran_comm_set_attr(comm: usize, comm_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        call(Scope::Comm(comm), || comm_set("MPI_Comm_set_attr", comm, comm_keyval, language.stored(attribute_val as usize)))
    }

    |language| fn MPI_Attr_put / PMPI_Attr_put / crossmpi_fortran_attr_put(comm: usize, keyval: c_int, attribute_val: *mut c_void) -> c_int {
        call(Scope::Comm(comm), || comm_set("MPI_Attr_put", comm, keyval, language.stored(attribute_val as usize)))
    }

    |language| fn MPI_Comm_get_attr / PMPI_Comm_get_attr / crossmpi_fortran_comm_get_attr(comm: usize, comm_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        call(Scope::Comm(comm), || comm_get("MPI_Comm_get_attr", language, comm, comm_keyval, attribute_val, flag))
    }

    |language| fn MPI_Attr_get / PMPI_Attr_get / crossmpi_fortran_attr_get(comm: usize, keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        call(Scope::Comm(comm), || comm_get("MPI_Attr_get", language, comm, keyval, attribute_val, flag))
    }

    |language| fn MPI_Type_create_keyval / PMPI_Type_create_keyval / crossmpi_fortran_type_create_keyval(copy_fn: usize, delete_fn: usize, type_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        keyval_out("MPI_Type_create_keyval", Object::Type, language, copy_fn, delete_fn, type_keyval, extra_state)
    }

    |language| fn MPI_Type_set_attr / PMPI_Type_set_attr / crossmpi_fortran_type_set_attr(datatype: usize, type_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let f = "MPI_Type_set_attr";
        call(Scope::Process, || {
            check_type(f, datatype)?;
            set(f, &TypeStore(datatype), type_keyval, language.stored(attribute_val as usize))
        })
    }

    |language| fn MPI_Type_get_attr / PMPI_Type_get_attr / crossmpi_fortran_type_get_attr(datatype: usize, type_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        call(Scope::Process, || type_get("MPI_Type_get_attr", language, datatype, type_keyval, attribute_val, flag))
    }
}

export! {
    fn MPI_Comm_free_keyval / PMPI_Comm_free_keyval(comm_keyval: *mut c_int) -> c_int {
        call(Scope::Process, || free_keyval("MPI_Comm_free_keyval", Object::Comm, comm_keyval))
    }

    fn MPI_Keyval_free / PMPI_Keyval_free(keyval: *mut c_int) -> c_int {
        call(Scope::Process, || free_keyval("MPI_Keyval_free", Object::Comm, keyval))
    }

    fn MPI_Comm_delete_attr / PMPI_Comm_delete_attr(comm: usize, comm_keyval: c_int) -> c_int {
        call(Scope::Comm(comm), || comm_delete("MPI_Comm_delete_attr", comm, comm_keyval))
    }

    fn MPI_Attr_delete / PMPI_Attr_delete(comm: usize, keyval: c_int) -> c_int {
        call(Scope::Comm(comm), || comm_delete("MPI_Attr_delete", comm, keyval))
    }

    fn MPI_Type_free_keyval / PMPI_Type_free_keyval(type_keyval: *mut c_int) -> c_int {
        call(Scope::Process, || free_keyval("MPI_Type_free_keyval", Object::Type, type_keyval))
    }

    fn MPI_Type_delete_attr / PMPI_Type_delete_attr(datatype: usize, type_keyval: c_int) -> c_int {
        let f = "MPI_Type_delete_attr";
        call(Scope::Process, || {
            check_type(f, datatype)?;
            delete(f, &TypeStore(datatype), "type_keyval", type_keyval)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fortran_integers_are_stored_and_seen_through_their_storage_from_c() {
        let stored = Language::Fortran.stored(-5isize as usize);
        let found = Found::of(&stored);
        assert_eq!(found.seen_from(Language::Fortran), -5isize as usize);
        let AttributeValue::Integer(cell) = &stored else {
            panic!("a Fortran value is an integer");
        };
        assert_eq!(
            found.seen_from(Language::C),
            &**cell as *const isize as usize
        );
    }

    #[test]
    fn c_addresses_are_fortran_integers() {
        let found = Found::of(&Language::C.stored(0x1234));
        assert_eq!(found.seen_from(Language::C), 0x1234);
        assert_eq!(found.seen_from(Language::Fortran), 0x1234);
        assert!(matches!(found.duplicate(), AttributeValue::Address(0x1234)));
    }

    #[test]
    fn dup_fn_gives_an_integer_storage_of_its_own() {
        let stored = Language::Fortran.stored(1 << 40);
        let original = Found::of(&stored);
        let copy = original.duplicate();
        let copied = Found::of(&copy);
        assert_eq!(copied.seen_from(Language::Fortran), 1 << 40);
        assert_ne!(
            copied.seen_from(Language::C),
            original.seen_from(Language::C)
        );
    }
}
