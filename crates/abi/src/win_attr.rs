//! Window attributes: the predefined `MPI_WIN_BASE`, `MPI_WIN_SIZE`,
//! `MPI_WIN_DISP_UNIT`, `MPI_WIN_CREATE_FLAVOR` and `MPI_WIN_MODEL`, and user keyvals
//! (created and freed with attr.rs's keyval table; values kept in the window's entry).
//! Windows are never duplicated, so copy callbacks never run; delete callbacks run on
//! `MPI_Win_delete_attr`, on replacement and at `MPI_Win_free`, with no lock held.

use crate::attr::{self, Found, Object};
use crate::consts::*;
use crate::error::{call as process_call, Scope};
use crate::win::{call, with_entry};
use crossmpi_core::comm::AttributeValue;
use crossmpi_core::error::MpiResult;
use std::os::raw::{c_int, c_void};

/// A predefined window attribute, if `key` is one: `MPI_WIN_BASE` is an address (as if
/// set from C), the others integers (C gets a pointer to an `MPI_Aint` for
/// `MPI_WIN_SIZE`, to an `int` for the rest).
fn predefined(a: &crate::win::Attrs, key: c_int) -> Option<Found> {
    let int = |value: &c_int| Found::Integer {
        value: *value as isize,
        storage: value as *const c_int as usize,
    };
    match key {
        k if k == MPI_WIN_BASE => Some(Found::Address(a.base)),
        k if k == MPI_WIN_SIZE => Some(Found::Integer {
            value: a.size,
            storage: &a.size as *const isize as usize,
        }),
        k if k == MPI_WIN_DISP_UNIT => Some(int(&a.disp_unit)),
        k if k == MPI_WIN_CREATE_FLAVOR => Some(int(&a.flavor)),
        k if k == MPI_WIN_MODEL => Some(int(&a.model)),
        _ => None,
    }
}

/// A window's user attributes.
struct WinStore(usize);

impl attr::Store for WinStore {
    fn handle(&self) -> usize {
        self.0
    }
    fn object(&self) -> Object {
        Object::Win
    }
    fn get(&self, function: &str, key: c_int) -> MpiResult<Option<Found>> {
        with_entry(function, self.0, |e| {
            Ok(e.user_attrs.get(&key).map(Found::of))
        })
    }
    fn put(&self, function: &str, key: c_int, value: AttributeValue) -> MpiResult<()> {
        with_entry(function, self.0, |e| {
            e.user_attrs.insert(key, value);
            Ok(())
        })
    }
    fn remove(&self, function: &str, key: c_int) -> MpiResult<()> {
        with_entry(function, self.0, |e| {
            e.user_attrs.remove(&key);
            Ok(())
        })
    }
    fn first_to_delete(&self, function: &str) -> MpiResult<Option<(c_int, Found)>> {
        with_entry(function, self.0, |e| {
            Ok(e.user_attrs
                .last_key_value()
                .map(|(&k, v)| (k, Found::of(v))))
        })
    }
}

/// For `MPI_Win_free`: deletes every user attribute, running the delete callbacks.
pub fn delete_all(function: &str, win: usize) -> MpiResult<()> {
    attr::delete_all(function, &WinStore(win))
}

export_with_fortran! {
    |language| fn MPI_Win_create_keyval / PMPI_Win_create_keyval / crossmpi_fortran_win_create_keyval(copy_fn: usize, delete_fn: usize, win_keyval: *mut c_int, extra_state: *mut c_void) -> c_int {
        attr::keyval_out("MPI_Win_create_keyval", Object::Win, language, copy_fn, delete_fn, win_keyval, extra_state)
    }

    |language| fn MPI_Win_set_attr / PMPI_Win_set_attr / crossmpi_fortran_win_set_attr(win: usize, win_keyval: c_int, attribute_val: *mut c_void) -> c_int {
        let f = "MPI_Win_set_attr";
        call(win, || attr::set(f, &WinStore(win), win_keyval, language.stored(attribute_val as usize)))
    }

    |language| fn MPI_Win_get_attr / PMPI_Win_get_attr / crossmpi_fortran_win_get_attr(win: usize, win_keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) -> c_int {
        let f = "MPI_Win_get_attr";
        call(win, || {
            let found = match with_entry(f, win, |e| Ok(predefined(&e.attrs, win_keyval)))? {
                Some(v) => Some(v),
                None => {
                    attr::keyval(f, Object::Win, win_keyval, false)?;
                    attr::Store::get(&WinStore(win), f, win_keyval)?
                }
            };
            attr::give(f, language, found, attribute_val, flag)
        })
    }
}

export! {
    fn MPI_Win_free_keyval / PMPI_Win_free_keyval(win_keyval: *mut c_int) -> c_int {
        process_call(Scope::Process, || attr::free_keyval("MPI_Win_free_keyval", Object::Win, win_keyval))
    }

    fn MPI_Win_delete_attr / PMPI_Win_delete_attr(win: usize, win_keyval: c_int) -> c_int {
        let f = "MPI_Win_delete_attr";
        call(win, || attr::delete(f, &WinStore(win), "win_keyval", win_keyval))
    }
}
