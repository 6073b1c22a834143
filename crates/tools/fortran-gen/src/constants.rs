//! Emits the Fortran constants: mpi.h's integer constants and handles with their ABI
//! values, the Fortran-only ones (status size and indices, kinds), and the sentinels,
//! which are variables in common blocks so that wrappers can recognise their addresses.
//!
//! The text is written so it compiles as fixed form (statements from column 7, at most
//! 72 columns, `!` comments in column 1) and as free form, since `mpif.h` is included by
//! both kinds of program.

use crate::header::{ConstKind, Constant};
use std::fmt::Write;

/// Constants that exist only in the Fortran bindings.
const FORTRAN_ONLY: &[(&str, i64)] = &[
    ("MPI_STATUS_SIZE", 8),
    ("MPI_SOURCE", 1),
    ("MPI_TAG", 2),
    ("MPI_ERROR", 3),
    ("MPI_ADDRESS_KIND", 8),
    ("MPI_OFFSET_KIND", 8),
    ("MPI_COUNT_KIND", 8),
    ("MPI_INTEGER_KIND", 4),
];

/// The MPI-1 marker types MPI-3 removed, which old codes still use: datatype handles
/// outside the ABI's table, with the values the library gives them (crates/abi's
/// `types::MPI1_LB`/`MPI1_UB`); in `mpif.h`, `mpi` and `mpi_f08` alike, as in Open MPI
/// 4.1 (MPICH's test `f08/datatype/allctypesf08` names them through `mpi_f08`).
const MPI1_MARKERS: &[(&str, i64)] = &[("MPI_LB", 0x3f0), ("MPI_UB", 0x3f1)];

/// Sentinel variables: name, Fortran type and shape, common block. The library's
/// support module (fortran/support.f90) declares the same blocks and maps their
/// addresses to C values.
pub const SENTINELS: &[(&str, &str, &str, &str)] = &[
    ("MPI_BOTTOM", "integer", "", "crossmpi_bottom"),
    ("MPI_IN_PLACE", "integer", "", "crossmpi_in_place"),
    (
        "MPI_BUFFER_AUTOMATIC",
        "integer",
        "",
        "crossmpi_buffer_automatic",
    ),
    (
        "MPI_STATUS_IGNORE",
        "integer",
        "(MPI_STATUS_SIZE)",
        "crossmpi_status_ignore",
    ),
    (
        "MPI_STATUSES_IGNORE",
        "integer",
        "(MPI_STATUS_SIZE,1)",
        "crossmpi_statuses_ignore",
    ),
    (
        "MPI_ERRCODES_IGNORE",
        "integer",
        "(1)",
        "crossmpi_errcodes_ignore",
    ),
    ("MPI_UNWEIGHTED", "integer", "(1)", "crossmpi_unweighted"),
    (
        "MPI_WEIGHTS_EMPTY",
        "integer",
        "(1)",
        "crossmpi_weights_empty",
    ),
    // Passed where MPI_COMM_SPAWN(_MULTIPLE) takes CHARACTER arrays.
    ("MPI_ARGV_NULL", "character", "(1)", "crossmpi_argv_null"),
    ("MPI_ARGVS_NULL", "character", "(1)", "crossmpi_argvs_null"),
];

/// Names whose Fortran meaning differs from C's (in C, MPI_SOURCE etc. are struct
/// fields): the C value is not emitted.
fn replaced_by_fortran(name: &str) -> bool {
    FORTRAN_ONLY.iter().any(|(n, _)| *n == name)
}

/// Which binding the declarations are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `mpif.h` and the `mpi` module: handles and statuses are INTEGERs.
    Integer,
    /// `mpi_f08`: handles are `TYPE(MPI_Comm)`..., statuses `TYPE(MPI_Status)`, and the
    /// status indices MPI_SOURCE/MPI_TAG/MPI_ERROR are component names instead.
    F08,
}

/// The status sentinels, which mpi_f08 declares as `TYPE(MPI_Status)`.
fn is_status(name: &str) -> bool {
    name.starts_with("MPI_STATUS")
}

/// Declarations and `PARAMETER`s for every constant, then the sentinels.
pub fn declarations(constants: &[Constant], style: Style) -> Result<String, String> {
    let mut out = String::new();
    out.push_str("! Fortran-only constants\n");
    for (name, value) in FORTRAN_ONLY {
        if style == Style::F08 && ["MPI_SOURCE", "MPI_TAG", "MPI_ERROR"].contains(name) {
            continue;
        }
        declare(&mut out, name, "integer", &value.to_string());
    }
    out.push_str("! MPI-1 bound markers (removed in MPI-3, kept for old codes)\n");
    for (name, value) in MPI1_MARKERS {
        let marker = Constant {
            name: name.to_string(),
            value: *value,
            kind: ConstKind::Handle("MPI_Datatype".into()),
        };
        declare_constant(&mut out, &marker, style);
    }
    out.push_str("! Constants and predefined handles of mpi.h, with the MPI-5 ABI values\n");
    let mut seen = std::collections::HashSet::new();
    for c in constants {
        if replaced_by_fortran(&c.name) || !seen.insert(c.name.to_ascii_lowercase()) {
            continue;
        }
        declare_constant(&mut out, c, style);
    }
    out.push_str("! Sentinels: the library recognises these variables by address\n");
    for (name, ty, shape, block) in SENTINELS {
        if style == Style::F08 && is_status(name) {
            let shape = if shape.contains(',') { "(1)" } else { "" };
            let _ = writeln!(out, "      type(MPI_Status) {name}{shape}");
        } else {
            let _ = writeln!(out, "      {ty} {name}{shape}");
        }
        let _ = writeln!(out, "      common /{block}/ {name}");
    }
    if style == Style::Integer {
        check_fixed_form(&out)?;
    }
    Ok(out)
}

/// A constant of mpi.h (or a marker) as the binding of `style` declares it: handles are
/// `TYPE(MPI_Comm)`... in `mpi_f08`, `INTEGER`s elsewhere.
fn declare_constant(out: &mut String, c: &Constant, style: Style) {
    match (&c.kind, style) {
        (ConstKind::Handle(ty), Style::F08) => declare(
            out,
            &c.name,
            &format!("type({ty})"),
            &format!("{ty}({})", c.value),
        ),
        (ConstKind::Wide, _) => declare(out, &c.name, "integer(kind=8)", &c.value.to_string()),
        _ => declare(out, &c.name, "integer", &c.value.to_string()),
    }
}

fn declare(out: &mut String, name: &str, ty: &str, value: &str) {
    let _ = writeln!(out, "      {ty} {name}");
    let _ = writeln!(out, "      parameter ({name}={value})");
}

/// The predefined callbacks (procedures of fortran/support.f90),
/// declared `EXTERNAL` so programs can pass them to MPI_*_create_keyval,
/// MPI_KEYVAL_CREATE and MPI_REGISTER_DATAREP.
const PREDEFINED_CALLBACKS: &[&str] = &[
    "MPI_NULL_COPY_FN",
    "MPI_DUP_FN",
    "MPI_NULL_DELETE_FN",
    "MPI_CONVERSION_FN_NULL",
    "MPI_CONVERSION_FN_NULL_C",
    "MPI_COMM_NULL_COPY_FN",
    "MPI_COMM_DUP_FN",
    "MPI_COMM_NULL_DELETE_FN",
    "MPI_TYPE_NULL_COPY_FN",
    "MPI_TYPE_DUP_FN",
    "MPI_TYPE_NULL_DELETE_FN",
    "MPI_WIN_NULL_COPY_FN",
    "MPI_WIN_DUP_FN",
    "MPI_WIN_NULL_DELETE_FN",
];

pub fn callback_declarations() -> String {
    PREDEFINED_CALLBACKS
        .iter()
        .map(|name| format!("      external {name}\n"))
        .collect()
}

/// Refuses text that is not valid as fixed form: every line a `!` comment or a
/// statement starting in column 7, none longer than 72 columns.
fn check_fixed_form(text: &str) -> Result<(), String> {
    match text.lines().find(|l| {
        l.len() > 72 || !(l.starts_with('!') || l.starts_with("      ") && !l[6..].starts_with(' '))
    }) {
        Some(bad) => Err(format!("not valid fixed form: '{bad}'")),
        None => Ok(()),
    }
}

/// mpif.h: the constants plus the types of the functions that return a value.
pub fn mpif_h(constants: &[Constant]) -> Result<String, String> {
    let mut out = String::from(
        "! mpif.h: crossmpi's Fortran 77 interface, generated by\n\
         ! crossmpi-fortran-gen from mpi.h (do not edit).\n\
         ! Valid as fixed and as free source form.\n",
    );
    out.push_str(&declarations(constants, Style::Integer)?);
    out.push_str(
        "      external MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK\n      \
         double precision MPI_WTIME, MPI_WTICK, PMPI_WTIME, PMPI_WTICK\n      \
         external MPI_AINT_ADD, MPI_AINT_DIFF\n      \
         external PMPI_AINT_ADD, PMPI_AINT_DIFF\n      \
         integer(kind=MPI_ADDRESS_KIND) MPI_AINT_ADD, MPI_AINT_DIFF\n      \
         integer(kind=MPI_ADDRESS_KIND) PMPI_AINT_ADD, PMPI_AINT_DIFF\n",
    );
    out.push_str(&callback_declarations());
    check_fixed_form(&out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_struct_field_names_take_their_fortran_values() {
        let c = [Constant {
            name: "MPI_TAG".into(),
            value: 99,
            kind: ConstKind::Integer,
        }];
        let text = declarations(&c, Style::Integer).unwrap();
        assert!(text.contains("parameter (MPI_TAG=2)"));
        assert!(!text.contains("=99"));
    }

    #[test]
    fn overlong_lines_are_refused() {
        let c = [Constant {
            name: format!("MPI_{}", "X".repeat(70)),
            value: 1,
            kind: ConstKind::Integer,
        }];
        assert!(declarations(&c, Style::Integer).is_err());
    }

    #[test]
    fn mpif_h_is_fixed_form() {
        let c = [Constant {
            name: "MPI_COMM_WORLD".into(),
            value: 257,
            kind: ConstKind::Integer,
        }];
        let text = mpif_h(&c).unwrap();
        assert!(text.contains("      external MPI_COMM_DUP_FN\n"));
        assert!(check_fixed_form("external X\n").is_err());
        assert!(check_fixed_form("       x = 1\n").is_err());
    }

    #[test]
    fn f08_handles_and_statuses_are_derived_types() {
        let c = [Constant {
            name: "MPI_COMM_WORLD".into(),
            value: 257,
            kind: ConstKind::Handle("MPI_Comm".into()),
        }];
        let text = declarations(&c, Style::F08).unwrap();
        assert!(text.contains("type(MPI_Comm) MPI_COMM_WORLD"));
        assert!(text.contains("parameter (MPI_COMM_WORLD=MPI_Comm(257))"));
        assert!(text.contains("type(MPI_Status) MPI_STATUSES_IGNORE(1)"));
        assert!(!text.contains("MPI_SOURCE"));
        assert!(text.contains("parameter (MPI_LB=MPI_Datatype(1008))"));
        assert!(text.contains("parameter (MPI_UB=MPI_Datatype(1009))"));
        let text = declarations(&c, Style::Integer).unwrap();
        assert!(text.contains("parameter (MPI_COMM_WORLD=257)"));
        assert!(text.contains("parameter (MPI_LB=1008)"));
    }

    #[test]
    fn wide_constants_get_kind_8() {
        let c = [Constant {
            name: "MPI_DISPLACEMENT_CURRENT".into(),
            value: -1,
            kind: ConstKind::Wide,
        }];
        let text = declarations(&c, Style::Integer).unwrap();
        assert!(text.contains("integer(kind=8) MPI_DISPLACEMENT_CURRENT"));
    }
}
