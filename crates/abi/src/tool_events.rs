//! MPI_T events and event sources: crossmpi defines none, so enumeration reports zero
//! and every index or name is invalid. Exported so tools that look for events link and
//! find out at run time.

use crate::consts::*;
use crate::tool::{category, in_name, initialized, put, tcall};
use std::os::raw::{c_char, c_int, c_void};

export! {
    fn MPI_T_event_get_num / PMPI_T_event_get_num(num_events: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            put(num_events, 0);
            Ok(())
        })
    }

    fn MPI_T_source_get_num / PMPI_T_source_get_num(num_sources: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            put(num_sources, 0);
            Ok(())
        })
    }

    fn MPI_T_category_get_num_events / PMPI_T_category_get_num_events(cat_index: c_int, num_events: *mut c_int) -> c_int {
        tcall(|| {
            initialized()?;
            category(cat_index)?;
            put(num_events, 0);
            Ok(())
        })
    }

    fn MPI_T_category_get_events / PMPI_T_category_get_events(cat_index: c_int, len: c_int, indices: *mut c_int) -> c_int {
        let _ = (len, indices);
        tcall(|| {
            initialized()?;
            category(cat_index).map(|_| ())
        })
    }

    fn MPI_T_event_get_index / PMPI_T_event_get_index(name: *const c_char, event_index: *mut c_int) -> c_int {
        let _ = event_index;
        tcall(|| {
            initialized()?;
            in_name(name)?;
            Err(MPI_T_ERR_INVALID_NAME)
        })
    }

    fn MPI_T_event_get_info / PMPI_T_event_get_info(event_index: c_int, name: *mut c_char, name_len: *mut c_int, verbosity: *mut c_int, array_of_datatypes: *mut usize, array_of_displacements: *mut isize, num_elements: *mut c_int, enumtype: *mut usize, info: *mut usize, desc: *mut c_char, desc_len: *mut c_int, bind: *mut c_int) -> c_int {
        let _ = (event_index, name, name_len, verbosity, array_of_datatypes, array_of_displacements, num_elements, enumtype, info, desc, desc_len, bind);
        tcall(|| {
            initialized()?;
            Err(MPI_T_ERR_INVALID_INDEX)
        })
    }

    fn MPI_T_event_handle_alloc / PMPI_T_event_handle_alloc(event_index: c_int, obj_handle: *mut c_void, info: usize, event_registration: *mut usize) -> c_int {
        let _ = (event_index, obj_handle, info, event_registration);
        tcall(|| {
            initialized()?;
            Err(MPI_T_ERR_INVALID_INDEX)
        })
    }

    fn MPI_T_source_get_info / PMPI_T_source_get_info(source_index: c_int, name: *mut c_char, name_len: *mut c_int, desc: *mut c_char, desc_len: *mut c_int, ordering: *mut c_int, ticks_per_second: *mut i64, max_ticks: *mut i64, info: *mut usize) -> c_int {
        let _ = (source_index, name, name_len, desc, desc_len, ordering, ticks_per_second, max_ticks, info);
        tcall(|| {
            initialized()?;
            Err(MPI_T_ERR_INVALID_INDEX)
        })
    }

    fn MPI_T_source_get_timestamp / PMPI_T_source_get_timestamp(source_index: c_int, timestamp: *mut i64) -> c_int {
        let _ = (source_index, timestamp);
        tcall(|| {
            initialized()?;
            Err(MPI_T_ERR_INVALID_INDEX)
        })
    }
}
