//! Maps each C parameter to the way a Fortran caller passes it (see docs/fortran.md).
//!
//! gfortran passes every argument by reference, character lengths as hidden trailing
//! `size_t` values, and procedures as their code address, so a wrapper compiled with
//! `bind(C, name="mpi_send_")` receives exactly what the Fortran caller pushed. What
//! differs from C is only: handles (a 4-byte `INTEGER` in Fortran, a pointer-sized value
//! in C), strings (blank-padded in Fortran, NUL-terminated in C), the sentinels
//! (addresses of variables in common blocks), 1-based request indices, and attribute values.

use crate::header::{CParam, Header, Prototype};

/// Integer types passed by value in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Int,
    Aint,
    /// `MPI_Count` and `MPI_Offset` (64 bits).
    Wide,
}

impl Scalar {
    pub fn c_kind(self) -> &'static str {
        match self {
            Scalar::Int => "c_int",
            Scalar::Aint => "c_intptr_t",
            Scalar::Wide => "c_int64_t",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An integer passed by value in C.
    Value(Scalar),
    /// A handle passed by value in C.
    Handle,
    /// A pointer whose target has the same layout in both languages (choice buffers,
    /// integers, logicals, addresses, statuses); sentinel addresses are translated.
    Address,
    /// Request indices (0-based in C, 1-based in Fortran): `indx` or `array_of_indices`,
    /// with the name of the parameter holding their number (None: one index).
    Indices(Option<String>),
    /// A pointer to one handle.
    HandlePtr {
        is_const: bool,
    },
    /// An array of handles and the Fortran expression giving its length.
    HandleArray {
        is_const: bool,
        length: String,
    },
    StringIn,
    StringOut,
    /// The in/out length of the string result `string` in the functions where the
    /// standard counts C's terminating NUL in C only ([`NUL_COUNTED_LENGTHS`]): Fortran
    /// gives the characters there is room for and gets the value's length; 0 asks for the
    /// length alone and leaves the string unchanged.
    StringLength {
        string: String,
    },
    /// A callback whose C calling convention matches Fortran's (user ops, error handlers).
    Procedure,
    /// A Fortran procedure C cannot call directly: C gets a trampoline
    /// (fortran/support.f90) that calls the procedure with Fortran's conventions.
    Trampolined(Trampoline),
    /// The extra state of a function taking trampolined procedures: C gets a record
    /// (fortran/support.f90) holding those procedures (named by the listed parameters,
    /// in order) and the program's extra state.
    CallbackRecord {
        record: Record,
        procedures: Vec<String>,
    },
    /// `argc`/`argv` of MPI_Init, MPI_Init_thread and MPI_Info_create_env: absent from
    /// the Fortran binding; C gets 0 (by value) or NULL (a pointer).
    Omitted {
        by_value: bool,
    },
    /// Strings for C built from a Fortran `CHARACTER` array, read only where `at_root`
    /// (a Fortran condition) holds: the spawn functions use them at the root only, and
    /// other processes may pass anything. Elsewhere C gets NULL.
    Strings {
        shape: StringShape,
        at_root: String,
    },
    /// An attribute value given by value in C, by reference in Fortran.
    AttrIn {
        wide: bool,
    },
    /// An attribute value returned through `void *` in C; `flag` names the parameter
    /// saying whether there is one.
    AttrOut {
        wide: bool,
        flag: String,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StringShape {
    /// `CHARACTER(*) argv(*)` ended by a blank element (`MPI_ARGV_NULL`: none): C gets a
    /// NULL-terminated `char *[]`.
    Argv,
    /// `count` strings (`array_of_commands`): C gets a `char *[count]`.
    Commands { count: String },
    /// `ARRAY_OF_ARGV(count, *)`, one blank-terminated argv per row (`MPI_ARGVS_NULL`:
    /// none): C gets a `char **[count]`.
    ArgvLists { count: String },
}

/// The C callbacks of fortran/support.f90 that call a Fortran procedure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trampoline {
    Copy,
    Delete,
    GrequestQuery,
    GrequestFree,
    GrequestCancel,
    /// Datarep conversions (`wide`: with an `MPI_Count` count, for
    /// MPI_Register_datarep_c); `MPI_CONVERSION_FN_NULL` gives C a NULL function instead.
    DatarepRead {
        wide: bool,
    },
    DatarepWrite {
        wide: bool,
    },
    DatarepExtent,
}

impl Trampoline {
    /// The Fortran expression giving C the trampoline for the procedure in `arg`.
    pub fn c_function(self, arg: &str) -> String {
        let name = match self {
            Trampoline::Copy => "copy",
            Trampoline::Delete => "delete",
            Trampoline::GrequestQuery => "grequest_query",
            Trampoline::GrequestFree => "grequest_free",
            Trampoline::GrequestCancel => "grequest_cancel",
            Trampoline::DatarepRead { wide: false } => "datarep_read",
            Trampoline::DatarepWrite { wide: false } => "datarep_write",
            Trampoline::DatarepRead { wide: true } => "datarep_read_c",
            Trampoline::DatarepWrite { wide: true } => "datarep_write_c",
            Trampoline::DatarepExtent => "datarep_extent",
        };
        let f = format!("c_funloc(crossmpi_{name}_trampoline)");
        match self {
            Trampoline::DatarepRead { .. } | Trampoline::DatarepWrite { .. } => {
                format!("crossmpi_conversion_callback({arg}, {f})")
            }
            Trampoline::Copy => format!("crossmpi_copy_callback({arg})"),
            _ => f,
        }
    }
}

/// What the C extra state of a function with trampolined procedures points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A keyval; `narrow`: the MPI-1 MPI_KEYVAL_CREATE, whose extra state and
    /// attribute values are default `INTEGER`s.
    Keyval {
        narrow: bool,
    },
    Grequest,
    Datarep,
}

impl Record {
    /// The Fortran kind of the program's extra state.
    pub fn extra_state_kind(self) -> &'static str {
        match self {
            Record::Keyval { narrow: true } => Scalar::Int.c_kind(),
            _ => Scalar::Aint.c_kind(),
        }
    }

    /// The support function that builds the record from the procedures and the extra
    /// state.
    pub fn constructor(self, procedures: &[String], extra_state: &str) -> String {
        let procs: Vec<String> = procedures.iter().map(|p| format!("a_{p}, ")).collect();
        let procs = procs.concat();
        match self {
            Record::Keyval { narrow } => format!(
                "crossmpi_keyval_record({procs}int({extra_state}, c_intptr_t), {})",
                fortran_logical(narrow)
            ),
            Record::Grequest => format!("crossmpi_grequest_record({procs}{extra_state})"),
            Record::Datarep => format!("crossmpi_datarep_record({procs}{extra_state})"),
        }
    }
}

fn fortran_logical(b: bool) -> &'static str {
    if b {
        ".true."
    } else {
        ".false."
    }
}

/// The in/out lengths of string results that count the terminating NUL in C and not in
/// Fortran (MPI-4.0, MPI_INFO_GET_STRING and MPI_SESSION_GET_NTH_PSET: "In C, buflen
/// includes the required space for the null terminator", "If buflen is set to 0, value
/// is not changed"): function, length, string.
const NUL_COUNTED_LENGTHS: &[(&str, &str, &str)] = &[
    ("MPI_Info_get_string", "buflen", "value"),
    ("MPI_Session_get_nth_pset", "pset_len", "pset_name"),
];

/// Callback types whose C call passes everything by reference like Fortran does.
const FORTRAN_COMPATIBLE_CALLBACKS: &[&str] = &[
    "MPI_User_function",
    "MPI_User_function_c",
    "MPI_Comm_errhandler_function",
    "MPI_File_errhandler_function",
    "MPI_Win_errhandler_function",
    "MPI_Session_errhandler_function",
];

/// What a wrapper does with the C function's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returns {
    /// An error code, stored in the Fortran `ierror` argument.
    ErrorCode,
    /// A value, which the Fortran routine returns as a function (MPI_Wtime,
    /// MPI_Aint_add...).
    Value(ValueType),
    /// Nothing: the Fortran binding of the variadic MPI_Pcontrol has no `ierror`.
    Nothing,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    Double,
    Aint,
}

impl ValueType {
    /// The result type of the wrapper and of the C function's interface.
    pub fn c_type(self) -> &'static str {
        match self {
            ValueType::Double => "real(c_double)",
            ValueType::Aint => "integer(c_intptr_t)",
        }
    }

    /// The result type in the modules' interfaces.
    pub fn fortran_type(self) -> &'static str {
        match self {
            ValueType::Double => "double precision",
            ValueType::Aint => "integer(kind=8)",
        }
    }
}

/// How a C function maps to its Fortran binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub returns: Returns,
    /// The kind of every C parameter, in order.
    pub params: Vec<Kind>,
}

impl Signature {
    /// Whether the function sets or gets attribute values, or creates a keyval whose
    /// callbacks see them: its wrappers call the library's entry that takes and gives
    /// Fortran's view of the values (`crossmpi_fortran_x`, docs/fortran.md).
    pub fn takes_attribute_values(&self) -> bool {
        self.params.iter().any(|k| {
            matches!(
                k,
                Kind::AttrIn { .. }
                    | Kind::AttrOut { .. }
                    | Kind::CallbackRecord {
                        record: Record::Keyval { .. },
                        ..
                    }
            )
        })
    }
}

/// Why a function gets no generated wrapper, or how it maps to Fortran.
pub fn classify(header: &Header, f: &Prototype) -> Result<Signature, String> {
    if f.name.starts_with("MPI_T_") {
        return Err("MPI_T has no Fortran binding in the standard".into());
    }
    if f.name.ends_with("_toint") || f.name.ends_with("_fromint") {
        return Err("C only: converts between a handle and the integer a Fortran handle is".into());
    }
    // A variadic function (MPI_Pcontrol) takes its fixed arguments from Fortran.
    let returns = match (f.returns.as_str(), f.variadic) {
        ("int", false) => Returns::ErrorCode,
        ("int", true) => Returns::Nothing,
        ("double", false) => Returns::Value(ValueType::Double),
        ("MPI_Aint", false) => Returns::Value(ValueType::Aint),
        (other, _) => return Err(format!("returns {other} (C only)")),
    };
    let params = f
        .params
        .iter()
        .map(|p| classify_param(header, f, p))
        .collect::<Result<_, _>>()?;
    Ok(Signature { returns, params })
}

fn other_param<'a>(f: &'a Prototype, names: &[&str]) -> Option<&'a CParam> {
    f.params.iter().find(|p| names.contains(&p.name.as_str()))
}

fn classify_param(header: &Header, f: &Prototype, p: &CParam) -> Result<Kind, String> {
    let ind = p.indirection();
    let reject = |why: &str| Err(format!("parameter '{}': {why}", p.name));
    if p.name == "attribute_val" {
        let wide = f.name != "MPI_Attr_put" && f.name != "MPI_Attr_get";
        if f.name.ends_with("_set_attr") || f.name == "MPI_Attr_put" {
            return Ok(Kind::AttrIn { wide });
        }
        return match other_param(f, &["flag"]) {
            Some(fl) => Ok(Kind::AttrOut {
                wide,
                flag: fl.name.clone(),
            }),
            None => reject("attribute value without flag"),
        };
    }
    if let Some(t) = trampoline(p) {
        return Ok(Kind::Trampolined(t));
    }
    if p.name == "extra_state" && p.base == "void" && ind == 1 {
        return callback_record(f).ok_or_else(|| {
            format!(
                "parameter '{}': extra state without procedures to call",
                p.name
            )
        });
    }
    if let Some((_, _, string)) = NUL_COUNTED_LENGTHS
        .iter()
        .find(|(function, length, _)| *function == f.name && *length == p.name)
    {
        return Ok(Kind::StringLength {
            string: string.to_string(),
        });
    }
    let has_argc = other_param(f, &["argc"]).is_some();
    if p.name == "argc" || (p.name == "argv" && has_argc) {
        return Ok(Kind::Omitted { by_value: ind == 0 });
    }
    if let Some(shape) = string_shape(f, p) {
        return Ok(Kind::Strings {
            shape: shape?,
            at_root: at_root(f)
                .ok_or_else(|| format!("parameter '{}': strings without root and comm", p.name))?,
        });
    }
    match (p.base.as_str(), ind) {
        ("int", 0) => Ok(Kind::Value(Scalar::Int)),
        ("MPI_Aint", 0) => Ok(Kind::Value(Scalar::Aint)),
        ("MPI_Count" | "MPI_Offset", 0) => Ok(Kind::Value(Scalar::Wide)),
        ("int", 1) if p.name == "indx" && f.name.contains("any") => Ok(Kind::Indices(None)),
        ("int", 1) if p.name == "array_of_indices" => match other_param(f, &["outcount"]) {
            Some(n) => Ok(Kind::Indices(Some(n.name.clone()))),
            None => reject("indices without outcount"),
        },
        ("int" | "MPI_Aint" | "MPI_Count" | "MPI_Offset" | "MPI_Status" | "void", 1)
        | ("int", 2) => Ok(Kind::Address),
        ("char", 1) if p.is_const => Ok(Kind::StringIn),
        ("char", 1) => Ok(Kind::StringOut),
        ("char", _) => reject("array of strings (argv)"),
        (ty, 0) if header.is_handle(ty) => Ok(Kind::Handle),
        (ty, 1) if header.is_handle(ty) && p.brackets == 0 => Ok(Kind::HandlePtr {
            is_const: p.is_const,
        }),
        (ty, 1) if header.is_handle(ty) => match handle_array_length(f, p) {
            Some(length) => Ok(Kind::HandleArray {
                is_const: p.is_const,
                length,
            }),
            None => reject("array of handles of unknown length"),
        },
        (ty, 1) if FORTRAN_COMPATIBLE_CALLBACKS.contains(&ty) => Ok(Kind::Procedure),
        (ty, _) => reject(&format!("type {ty} with {ind} indirections")),
    }
}

/// The Fortran condition that holds at the root of `f`'s communicator, where the
/// arguments significant only at the root are read.
fn at_root(f: &Prototype) -> Option<String> {
    let root = other_param(f, &["root"])?;
    let comm = other_param(f, &["comm"])?;
    Some(format!(
        "crossmpi_is_root(a_{}, a_{})",
        root.name, comm.name
    ))
}

/// The shape of a string array parameter of the spawn functions, if `p` is one.
fn string_shape(f: &Prototype, p: &CParam) -> Option<Result<StringShape, String>> {
    let count = || {
        other_param(f, &["count"])
            .map(|c| format!("a_{}", c.name))
            .ok_or_else(|| format!("parameter '{}': strings without count", p.name))
    };
    Some(
        match (p.base.as_str(), p.stars, p.brackets, p.name.as_str()) {
            ("char", 1, 1, "argv") => Ok(StringShape::Argv),
            ("char", 1, 1, "array_of_commands") => {
                count().map(|count| StringShape::Commands { count })
            }
            ("char", 2, 1, "array_of_argv") => {
                count().map(|count| StringShape::ArgvLists { count })
            }
            _ => return None,
        },
    )
}

/// The trampoline through which C calls the procedure passed as `p`, if it needs one.
fn trampoline(p: &CParam) -> Option<Trampoline> {
    Some(match p.base.as_str() {
        "MPI_Comm_copy_attr_function"
        | "MPI_Type_copy_attr_function"
        | "MPI_Win_copy_attr_function"
        | "MPI_Copy_function" => Trampoline::Copy,
        "MPI_Comm_delete_attr_function"
        | "MPI_Type_delete_attr_function"
        | "MPI_Win_delete_attr_function"
        | "MPI_Delete_function" => Trampoline::Delete,
        "MPI_Grequest_query_function" => Trampoline::GrequestQuery,
        "MPI_Grequest_free_function" => Trampoline::GrequestFree,
        "MPI_Grequest_cancel_function" => Trampoline::GrequestCancel,
        "MPI_Datarep_conversion_function" | "MPI_Datarep_conversion_function_c" => {
            let wide = p.base.ends_with("_c");
            if p.name.starts_with("read") {
                Trampoline::DatarepRead { wide }
            } else {
                Trampoline::DatarepWrite { wide }
            }
        }
        "MPI_Datarep_extent_function" => Trampoline::DatarepExtent,
        _ => return None,
    })
}

/// The record standing for the extra state of `f`, which holds the procedures C calls
/// through trampolines.
fn callback_record(f: &Prototype) -> Option<Kind> {
    let called: Vec<(Trampoline, String)> = f
        .params
        .iter()
        .filter_map(|p| trampoline(p).map(|t| (t, p.name.clone())))
        .collect();
    let record = match called.first()?.0 {
        Trampoline::Copy | Trampoline::Delete => Record::Keyval {
            narrow: f.name == "MPI_Keyval_create",
        },
        Trampoline::GrequestQuery | Trampoline::GrequestFree | Trampoline::GrequestCancel => {
            Record::Grequest
        }
        Trampoline::DatarepRead { .. }
        | Trampoline::DatarepWrite { .. }
        | Trampoline::DatarepExtent => Record::Datarep,
    };
    Some(Kind::CallbackRecord {
        record,
        procedures: called.into_iter().map(|(_, name)| name).collect(),
    })
}

/// The Fortran expression (over the wrapper's `a_` dummies) for the number of handles in
/// an array argument, when the C prototype determines it.
fn handle_array_length(f: &Prototype, p: &CParam) -> Option<String> {
    let count_of = |names: &[&str]| other_param(f, names).map(|c| format!("a_{}", c.name));
    match p.name.as_str() {
        "array_of_requests" | "array_of_types" => count_of(&["count", "incount"]),
        // MPI_Comm_spawn_multiple reads the infos, like its count, at the root only.
        "array_of_info" => {
            let count = count_of(&["count"])?;
            Some(format!("merge({count}, 0, {})", at_root(f)?))
        }
        "array_of_datatypes" => count_of(&["max_datatypes"]),
        // Alltoallw takes one type per process of the (remote) group; the neighbourhood
        // version one per out- (send) or in-neighbour (receive) of the topology.
        "sendtypes" | "recvtypes" if f.name.contains("eighbor") => {
            let outgoing = if p.name == "sendtypes" {
                ".true."
            } else {
                ".false."
            };
            count_of(&["comm"]).map(|c| format!("crossmpi_neighbor_count({c}, {outgoing})"))
        }
        "sendtypes" | "recvtypes" => {
            count_of(&["comm"]).map(|c| format!("crossmpi_alltoallw_length({c})"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::parse_prototype;

    fn header() -> Header {
        Header::parse(
            "typedef struct MPI_ABI_Comm *MPI_Comm;\n\
             typedef struct MPI_ABI_Datatype *MPI_Datatype;\n\
             typedef struct MPI_ABI_Request *MPI_Request;\n\
             typedef struct MPI_ABI_Info *MPI_Info;\n\
             int MPI_Barrier(MPI_Comm comm);\n",
        )
        .unwrap()
    }

    fn kinds(line: &str) -> Result<Vec<Kind>, String> {
        classify(&header(), &parse_prototype(line).unwrap()).map(|s| s.params)
    }

    fn returns(line: &str) -> Returns {
        classify(&header(), &parse_prototype(line).unwrap())
            .unwrap()
            .returns
    }

    #[test]
    fn results_become_ierror_function_values_or_nothing() {
        assert_eq!(
            returns("int MPI_Barrier(MPI_Comm comm);"),
            Returns::ErrorCode
        );
        assert_eq!(
            returns("double MPI_Wtime(void);"),
            Returns::Value(ValueType::Double)
        );
        assert_eq!(
            returns("MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp);"),
            Returns::Value(ValueType::Aint)
        );
        assert_eq!(
            returns("int MPI_Pcontrol(const int level, ...);"),
            Returns::Nothing
        );
    }

    #[test]
    fn send_maps_buffer_values_and_handles() {
        let k = kinds("int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);").unwrap();
        assert_eq!(k[0], Kind::Address);
        assert_eq!(k[1], Kind::Value(Scalar::Int));
        assert_eq!(k[2], Kind::Handle);
    }

    #[test]
    fn request_arrays_take_their_length_from_count() {
        let k = kinds("int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[], MPI_Status *array_of_statuses);").unwrap();
        assert_eq!(
            k[1],
            Kind::HandleArray {
                is_const: false,
                length: "a_incount".into()
            }
        );
        assert_eq!(k[3], Kind::Indices(Some("outcount".into())));
    }

    #[test]
    fn neighbor_alltoallw_types_count_the_neighbours() {
        let k = kinds("int MPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);").unwrap();
        let length = |k: &Kind| match k {
            Kind::HandleArray { length, .. } => length.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(length(&k[3]), "crossmpi_neighbor_count(a_comm, .true.)");
        assert_eq!(length(&k[7]), "crossmpi_neighbor_count(a_comm, .false.)");
    }

    #[test]
    fn unmappable_functions_give_a_reason() {
        let e = kinds("int MPI_Foo(int n, char **names[]);").unwrap_err();
        assert!(e.contains("array of strings"), "{e}");
        let e = kinds("int MPI_Foo(int n, MPI_Datatype types[]);").unwrap_err();
        assert!(e.contains("unknown length"), "{e}");
        let e = kinds("MPI_Comm MPI_Foo(void);").unwrap_err();
        assert!(e.contains("returns MPI_Comm"), "{e}");
        let e = kinds("int MPI_Comm_toint(MPI_Comm comm);").unwrap_err();
        assert!(e.contains("C only"), "{e}");
        let e = kinds("int MPI_Foo(void *extra_state);").unwrap_err();
        assert!(e.contains("extra state"), "{e}");
    }

    #[test]
    fn argc_and_argv_are_left_out() {
        let k = kinds("int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);")
            .unwrap();
        assert_eq!(k[0], Kind::Omitted { by_value: false });
        assert_eq!(k[1], Kind::Omitted { by_value: false });
        let k = kinds("int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info);").unwrap();
        assert_eq!(k[0], Kind::Omitted { by_value: true });
        assert_eq!(k[1], Kind::Omitted { by_value: false });
    }

    #[test]
    fn spawn_strings_are_converted() {
        let k = kinds("int MPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]);").unwrap();
        assert_eq!(k[0], Kind::StringIn);
        let at_root = "crossmpi_is_root(a_root, a_comm)".to_string();
        assert_eq!(
            k[1],
            Kind::Strings {
                shape: StringShape::Argv,
                at_root: at_root.clone()
            }
        );
        assert_eq!(k[7], Kind::Address);
        let k = kinds("int MPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[], const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]);").unwrap();
        let count = "a_count".to_string();
        assert_eq!(
            k[1],
            Kind::Strings {
                shape: StringShape::Commands {
                    count: count.clone()
                },
                at_root: at_root.clone()
            }
        );
        assert_eq!(
            k[2],
            Kind::Strings {
                shape: StringShape::ArgvLists { count },
                at_root: at_root.clone()
            }
        );
        assert_eq!(
            k[4],
            Kind::HandleArray {
                is_const: true,
                length: format!("merge(a_count, 0, {at_root})")
            }
        );
    }

    #[test]
    fn keyval_callbacks_go_through_trampolines() {
        let k = kinds("int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn, MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval, void *extra_state);").unwrap();
        assert_eq!(k[0], Kind::Trampolined(Trampoline::Copy));
        assert_eq!(k[1], Kind::Trampolined(Trampoline::Delete));
        assert_eq!(
            Trampoline::Copy.c_function("a_copy"),
            "crossmpi_copy_callback(a_copy)"
        );
        assert_eq!(
            k[3],
            Kind::CallbackRecord {
                record: Record::Keyval { narrow: false },
                procedures: vec!["comm_copy_attr_fn".into(), "comm_delete_attr_fn".into()]
            }
        );
        let k = kinds("int MPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval, void *extra_state);").unwrap();
        assert_eq!(k[0], Kind::Trampolined(Trampoline::Copy));
        let Kind::CallbackRecord { record, .. } = &k[3] else {
            panic!("{:?}", k[3]);
        };
        assert_eq!(*record, Record::Keyval { narrow: true });
        assert_eq!(record.extra_state_kind(), "c_int");
    }

    #[test]
    fn grequest_and_datarep_procedures_go_through_trampolines() {
        let k = kinds("int MPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn, MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request);").unwrap();
        assert_eq!(k[2], Kind::Trampolined(Trampoline::GrequestCancel));
        let Kind::CallbackRecord { record, procedures } = &k[3] else {
            panic!("{:?}", k[3]);
        };
        assert_eq!(
            record.constructor(procedures, "a_extra_state"),
            "crossmpi_grequest_record(a_query_fn, a_free_fn, a_cancel_fn, a_extra_state)"
        );
        let k = kinds("int MPI_Register_datarep_c(const char *datarep, MPI_Datarep_conversion_function_c *read_conversion_fn, MPI_Datarep_conversion_function_c *write_conversion_fn, MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state);").unwrap();
        assert_eq!(
            k[1],
            Kind::Trampolined(Trampoline::DatarepRead { wide: true })
        );
        assert_eq!(
            Trampoline::DatarepWrite { wide: false }.c_function("a_w"),
            "crossmpi_conversion_callback(a_w, c_funloc(crossmpi_datarep_write_trampoline))"
        );
        assert_eq!(
            Trampoline::DatarepExtent.c_function("a_e"),
            "c_funloc(crossmpi_datarep_extent_trampoline)"
        );
    }

    #[test]
    fn lengths_counting_the_nul_in_c_only_are_converted() {
        let k = kinds("int MPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag);").unwrap();
        assert_eq!(
            k[2],
            Kind::StringLength {
                string: "value".into()
            }
        );
        assert_eq!(k[3], Kind::StringOut);
        assert_eq!(k[4], Kind::Address);
        let k = kinds(
            "int MPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag);",
        )
        .unwrap();
        assert_eq!(k[2], Kind::Address);
    }

    #[test]
    fn attribute_values_are_read_with_their_flag() {
        let k = kinds("int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);").unwrap();
        assert_eq!(
            k[2],
            Kind::AttrOut {
                wide: true,
                flag: "flag".into()
            }
        );
        let k = kinds("int MPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val);").unwrap();
        assert_eq!(k[2], Kind::AttrIn { wide: false });
    }
}
