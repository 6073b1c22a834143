//! The MPI_T event calls that act on registrations and event instances. crossmpi defines
//! no event types (tool_events.rs: enumeration reports none and `MPI_T_event_handle_alloc`
//! rejects every index), so no registration or instance can exist: each call checks that
//! the tool interface is initialized, then reports `MPI_T_ERR_INVALID_HANDLE`.

use crate::consts::*;
use crate::tool::{initialized, tcall};
use std::os::raw::{c_int, c_void};

/// Every handle these calls get is invalid: none was ever handed out.
fn no_such_handle() -> c_int {
    tcall(|| {
        initialized()?;
        Err(MPI_T_ERR_INVALID_HANDLE)
    })
}

type EventCb = Option<extern "C" fn(usize, usize, c_int, *mut c_void)>;
type FreeCb = Option<extern "C" fn(usize, c_int, *mut c_void)>;
type DroppedCb = Option<extern "C" fn(i64, usize, c_int, c_int, *mut c_void)>;

export! {
    fn MPI_T_event_handle_free / PMPI_T_event_handle_free(event_registration: usize, user_data: *mut c_void, free_cb_function: FreeCb) -> c_int {
        let _ = (event_registration, user_data, free_cb_function);
        no_such_handle()
    }
    fn MPI_T_event_handle_get_info / PMPI_T_event_handle_get_info(event_registration: usize, info_used: *mut usize) -> c_int {
        let _ = (event_registration, info_used);
        no_such_handle()
    }
    fn MPI_T_event_handle_set_info / PMPI_T_event_handle_set_info(event_registration: usize, info: usize) -> c_int {
        let _ = (event_registration, info);
        no_such_handle()
    }
    fn MPI_T_event_register_callback / PMPI_T_event_register_callback(event_registration: usize, cb_safety: c_int, info: usize, user_data: *mut c_void, event_cb_function: EventCb) -> c_int {
        let _ = (event_registration, cb_safety, info, user_data, event_cb_function);
        no_such_handle()
    }
    fn MPI_T_event_callback_get_info / PMPI_T_event_callback_get_info(event_registration: usize, cb_safety: c_int, info_used: *mut usize) -> c_int {
        let _ = (event_registration, cb_safety, info_used);
        no_such_handle()
    }
    fn MPI_T_event_callback_set_info / PMPI_T_event_callback_set_info(event_registration: usize, cb_safety: c_int, info: usize) -> c_int {
        let _ = (event_registration, cb_safety, info);
        no_such_handle()
    }
    fn MPI_T_event_set_dropped_handler / PMPI_T_event_set_dropped_handler(event_registration: usize, dropped_cb_function: DroppedCb) -> c_int {
        let _ = (event_registration, dropped_cb_function);
        no_such_handle()
    }
    fn MPI_T_event_read / PMPI_T_event_read(event_instance: usize, element_index: c_int, buffer: *mut c_void) -> c_int {
        let _ = (event_instance, element_index, buffer);
        no_such_handle()
    }
    fn MPI_T_event_copy / PMPI_T_event_copy(event_instance: usize, buffer: *mut c_void) -> c_int {
        let _ = (event_instance, buffer);
        no_such_handle()
    }
    fn MPI_T_event_get_timestamp / PMPI_T_event_get_timestamp(event_instance: usize, event_timestamp: *mut i64) -> c_int {
        let _ = (event_instance, event_timestamp);
        no_such_handle()
    }
    fn MPI_T_event_get_source / PMPI_T_event_get_source(event_instance: usize, source_index: *mut c_int) -> c_int {
        let _ = (event_instance, source_index);
        no_such_handle()
    }
}
