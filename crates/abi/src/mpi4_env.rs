//! MPI 4.1 / 5.0 environment calls: removing user error classes, codes and strings,
//! `MPI_Get_hw_resource_info`, the MPI 5.0 ABI queries (`MPI_Abi_get_info`, the Fortran
//! information and LOGICAL values the Fortran binding library registers), and the
//! `MPI_Type_create_f90_*` parameterised types.

use crate::consts::*;
use crate::error::{self, call, Scope};
use crate::info;
use crate::types;
use crate::util::{out, slice, slice_mut};
use crossmpi_core::datatype::{Basic, F90};
use crossmpi_core::error::{ErrorClass, MpiError, MpiResult};
use std::os::raw::{c_int, c_void};
use std::sync::Mutex;

/// The Fortran types whose sizes `MPI_Abi_get_fortran_info` reports, by info key.
const FORTRAN_SIZES: &[(&str, usize)] = &[
    ("mpi_logical_size", MPI_LOGICAL),
    ("mpi_integer_size", MPI_INTEGER),
    ("mpi_real_size", MPI_REAL),
    ("mpi_double_precision_size", MPI_DOUBLE_PRECISION),
];

/// The optional Fortran types `MPI_Abi_get_fortran_info` says are supported.
const FORTRAN_OPTIONAL: &[(&str, usize)] = &[
    ("mpi_logical1_supported", MPI_LOGICAL1),
    ("mpi_logical2_supported", MPI_LOGICAL2),
    ("mpi_logical4_supported", MPI_LOGICAL4),
    ("mpi_logical8_supported", MPI_LOGICAL8),
    ("mpi_logical16_supported", MPI_LOGICAL16),
    ("mpi_integer1_supported", MPI_INTEGER1),
    ("mpi_integer2_supported", MPI_INTEGER2),
    ("mpi_integer4_supported", MPI_INTEGER4),
    ("mpi_integer8_supported", MPI_INTEGER8),
    ("mpi_integer16_supported", MPI_INTEGER16),
    ("mpi_real2_supported", MPI_REAL2),
    ("mpi_real4_supported", MPI_REAL4),
    ("mpi_real8_supported", MPI_REAL8),
    ("mpi_real16_supported", MPI_REAL16),
    ("mpi_complex4_supported", MPI_COMPLEX4),
    ("mpi_complex8_supported", MPI_COMPLEX8),
    ("mpi_complex16_supported", MPI_COMPLEX16),
    ("mpi_complex32_supported", MPI_COMPLEX32),
    ("mpi_double_complex_supported", MPI_DOUBLE_COMPLEX),
];

fn type_size(h: usize) -> u64 {
    types::lookup("MPI_Abi_get_fortran_info", "datatype", h).map_or(0, |t| t.size())
}

fn fortran_info() -> info::Pairs {
    let sizes = FORTRAN_SIZES
        .iter()
        .map(|&(key, h)| (key.to_string(), type_size(h).to_string()));
    let optional = FORTRAN_OPTIONAL
        .iter()
        .map(|&(key, h)| (key.to_string(), (type_size(h) > 0).to_string()));
    sizes.chain(optional).collect()
}

/// Checks what the Fortran library says against the sizes crossmpi's Fortran types have:
/// they are fixed (gfortran's defaults), so a library built with other sizes (-i8,
/// -fdefault-real-8) cannot be served and is told so.
fn check_fortran_info(function: &str, pairs: &info::Pairs) -> MpiResult<()> {
    for (key, value) in pairs {
        let Some(&(_, h)) = FORTRAN_SIZES.iter().find(|(k, _)| k == key) else {
            continue;
        };
        if value.trim().parse::<u64>().ok() != Some(type_size(h)) {
            return Err(MpiError::arg(
                ErrorClass::Unsupported,
                function,
                "info",
                format!("{key}={value}"),
                format!(
                    "crossmpi's Fortran types have {key} = {} (default gfortran kinds)",
                    type_size(h)
                ),
            ));
        }
    }
    Ok(())
}

/// The LOGICAL .TRUE. and .FALSE. bit patterns of one LOGICAL size.
struct Booleans {
    size: usize,
    true_bits: Vec<u8>,
    false_bits: Vec<u8>,
}

/// What the Fortran library registered, one entry per size.
static FORTRAN_BOOLEANS: Mutex<Vec<Booleans>> = Mutex::new(Vec::new());

fn logical_bytes(function: &str, size: c_int) -> MpiResult<usize> {
    match size {
        1 | 2 | 4 | 8 | 16 => Ok(size as usize),
        _ => Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "logical_size",
            size,
            "LOGICAL kinds have 1, 2, 4, 8 or 16 bytes",
        )),
    }
}

/// `MPI_Type_create_f90_integer`: the smallest integer kind with `10^-r < n < 10^r`.
fn f90_integer(function: &str, r: c_int) -> MpiResult<Basic> {
    Ok(match r {
        i32::MIN..=-1 => return Err(range_error(function, "r", r)),
        0..=2 => Basic::Integer1,
        3..=4 => Basic::Integer2,
        5..=9 => Basic::Integer4,
        10..=18 => Basic::Integer8,
        19..=38 => Basic::Integer16,
        _ => return Err(range_error(function, "r", r)),
    })
}

/// The smallest real kind with at least `p` decimal digits and exponent range `r`
/// (`MPI_UNDEFINED` leaves one free): 0 for REAL*4, 1 for REAL*8, 2 for REAL*16.
fn f90_real_kind(function: &str, p: c_int, r: c_int) -> MpiResult<usize> {
    let undefined = |v: c_int| v == MPI_UNDEFINED;
    if undefined(p) && undefined(r) {
        return Err(MpiError::arg(
            ErrorClass::Arg,
            function,
            "p",
            "MPI_UNDEFINED",
            "p and r cannot both be MPI_UNDEFINED",
        ));
    }
    let p = if undefined(p) { 0 } else { p };
    let r = if undefined(r) { 0 } else { r };
    if p < 0 {
        return Err(range_error(function, "p", p));
    }
    if r < 0 {
        return Err(range_error(function, "r", r));
    }
    // (digits, exponent range) of IEEE single, double and quadruple precision.
    [(6, 37), (15, 307), (33, 4931)]
        .iter()
        .position(|&(digits, range)| p <= digits && r <= range)
        .ok_or_else(|| range_error(function, if p > 33 { "p" } else { "r" }, p.max(r)))
}

fn range_error(function: &str, arg: &str, v: c_int) -> MpiError {
    MpiError::arg(
        ErrorClass::Arg,
        function,
        arg,
        v,
        "no Fortran kind of that precision or range exists",
    )
}

/// Stores a new info object through `out_ptr` (checked first, so none is leaked).
fn new_info(function: &str, arg: &str, out_ptr: *mut usize, pairs: info::Pairs) -> MpiResult<()> {
    slice_mut(function, arg, out_ptr, 1)?;
    out(function, arg, out_ptr, info::create(pairs))
}

export! {
    fn MPI_Remove_error_class / PMPI_Remove_error_class(errorclass: c_int) -> c_int {
        call(Scope::Process, || error::remove_class("MPI_Remove_error_class", errorclass))
    }
    fn MPI_Remove_error_code / PMPI_Remove_error_code(errorcode: c_int) -> c_int {
        call(Scope::Process, || error::remove_code("MPI_Remove_error_code", errorcode))
    }
    fn MPI_Remove_error_string / PMPI_Remove_error_string(errorcode: c_int) -> c_int {
        call(Scope::Process, || error::remove_string("MPI_Remove_error_string", errorcode))
    }

    /// The hardware crossmpi knows: the node (the level MPI_COMM_TYPE_HW_GUIDED splits at)
    /// and the processors this process may run on.
    fn MPI_Get_hw_resource_info / PMPI_Get_hw_resource_info(hw_info: *mut usize) -> c_int {
        let f = "MPI_Get_hw_resource_info";
        call(Scope::Process, || {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
            let pairs = vec![
                ("mpi_hw_resource_type".to_string(), "mpi_shared_memory".to_string()),
                ("crossmpi_node".to_string(), host.trim().to_string()),
                ("crossmpi_cpus".to_string(), crossmpi_core::progress::available_cpus().to_string()),
            ];
            new_info(f, "hw_info", hw_info, pairs)
        })
    }

    fn MPI_Abi_get_info / PMPI_Abi_get_info(info: *mut usize) -> c_int {
        let f = "MPI_Abi_get_info";
        call(Scope::Process, || {
            let size = |n: usize| n.to_string();
            let pairs = vec![
                ("mpi_aint_size".to_string(), size(std::mem::size_of::<isize>())),
                ("mpi_count_size".to_string(), size(std::mem::size_of::<i64>())),
                ("mpi_offset_size".to_string(), size(std::mem::size_of::<i64>())),
            ];
            new_info(f, "info", info, pairs)
        })
    }

    fn MPI_Abi_get_fortran_info / PMPI_Abi_get_fortran_info(info: *mut usize) -> c_int {
        call(Scope::Process, || new_info("MPI_Abi_get_fortran_info", "info", info, fortran_info()))
    }

    fn MPI_Abi_set_fortran_info / PMPI_Abi_set_fortran_info(info: usize) -> c_int {
        let f = "MPI_Abi_set_fortran_info";
        call(Scope::Process, || check_fortran_info(f, &info::read(f, "info", info, false)?))
    }

    fn MPI_Abi_set_fortran_booleans / PMPI_Abi_set_fortran_booleans(logical_size: c_int, logical_true: *mut c_void, logical_false: *mut c_void) -> c_int {
        let f = "MPI_Abi_set_fortran_booleans";
        call(Scope::Process, || {
            let n = logical_bytes(f, logical_size)?;
            let t = slice(f, "logical_true", logical_true as *const u8, n)?.to_vec();
            let fl = slice(f, "logical_false", logical_false as *const u8, n)?.to_vec();
            if t == fl {
                return Err(MpiError::arg(ErrorClass::Arg, f, "logical_false", format!("{fl:?}"), "equals logical_true"));
            }
            let mut all = FORTRAN_BOOLEANS.lock().unwrap_or_else(|p| p.into_inner());
            all.retain(|b| b.size != n);
            all.push(Booleans { size: n, true_bits: t, false_bits: fl });
            Ok(())
        })
    }

    fn MPI_Abi_get_fortran_booleans / PMPI_Abi_get_fortran_booleans(logical_size: c_int, logical_true: *mut c_void, logical_false: *mut c_void, is_set: *mut c_int) -> c_int {
        let f = "MPI_Abi_get_fortran_booleans";
        call(Scope::Process, || {
            let n = logical_bytes(f, logical_size)?;
            let all = FORTRAN_BOOLEANS.lock().unwrap_or_else(|p| p.into_inner());
            let Some(b) = all.iter().find(|b| b.size == n) else {
                return out(f, "is_set", is_set, 0);
            };
            slice_mut(f, "logical_true", logical_true as *mut u8, n)?.copy_from_slice(&b.true_bits);
            slice_mut(f, "logical_false", logical_false as *mut u8, n)?.copy_from_slice(&b.false_bits);
            out(f, "is_set", is_set, 1)
        })
    }

    /// Each distinct request gets its own predefined type, laid out as the `MPI_INTEGERn`
    /// / `MPI_REALn` / `MPI_COMPLEXn` of the chosen kind and reporting the request in
    /// its envelope (`MPI_COMBINER_F90_*`, with `r` or `p, r`), as the standard asks.
    fn MPI_Type_create_f90_integer / PMPI_Type_create_f90_integer(r: c_int, newtype: *mut usize) -> c_int {
        let f = "MPI_Type_create_f90_integer";
        call(Scope::Process, || {
            let b = f90_integer(f, r)?;
            out(f, "newtype", newtype, types::f90(F90::Integer { r }, b))
        })
    }
    fn MPI_Type_create_f90_real / PMPI_Type_create_f90_real(p: c_int, r: c_int, newtype: *mut usize) -> c_int {
        let f = "MPI_Type_create_f90_real";
        call(Scope::Process, || {
            let kinds = [Basic::Real4, Basic::Real8, Basic::Real16];
            let b = kinds[f90_real_kind(f, p, r)?];
            out(f, "newtype", newtype, types::f90(F90::Real { p, r }, b))
        })
    }
    fn MPI_Type_create_f90_complex / PMPI_Type_create_f90_complex(p: c_int, r: c_int, newtype: *mut usize) -> c_int {
        let f = "MPI_Type_create_f90_complex";
        call(Scope::Process, || {
            let kinds = [Basic::Complex8, Basic::Complex16, Basic::Complex32];
            let b = kinds[f90_real_kind(f, p, r)?];
            out(f, "newtype", newtype, types::f90(F90::Complex { p, r }, b))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f90_kinds_follow_precision_and_range() {
        let f = "t";
        assert_eq!(f90_integer(f, 4).unwrap(), Basic::Integer2);
        assert_eq!(f90_integer(f, 9).unwrap(), Basic::Integer4);
        assert_eq!(f90_integer(f, 18).unwrap(), Basic::Integer8);
        assert!(f90_integer(f, 40).is_err());
        assert_eq!(f90_real_kind(f, 6, MPI_UNDEFINED).unwrap(), 0);
        assert_eq!(f90_real_kind(f, 7, 0).unwrap(), 1);
        assert_eq!(f90_real_kind(f, MPI_UNDEFINED, 400).unwrap(), 2);
        assert!(f90_real_kind(f, 40, 0).is_err());
        assert!(f90_real_kind(f, MPI_UNDEFINED, MPI_UNDEFINED).is_err());
    }

    #[test]
    fn fortran_info_reports_the_fixed_sizes_and_rejects_others() {
        let pairs = fortran_info();
        assert!(pairs.contains(&("mpi_integer_size".into(), "4".into())));
        assert!(pairs.contains(&("mpi_double_precision_size".into(), "8".into())));
        let ok = vec![("mpi_integer_size".to_string(), "4".to_string())];
        assert!(check_fortran_info("t", &ok).is_ok());
        let bad = vec![("mpi_integer_size".to_string(), "8".to_string())];
        let e = check_fortran_info("MPI_Abi_set_fortran_info", &bad).unwrap_err();
        assert!(e.message.contains("mpi_integer_size=8"), "{}", e.message);
    }
}
