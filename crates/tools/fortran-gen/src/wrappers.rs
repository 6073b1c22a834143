//! Emits one Fortran wrapper per C function: an external procedure whose binding label
//! is gfortran's name for the MPI routine (`mpi_send_`), which converts what differs
//! between the languages and calls the C function through a `bind(C)` interface.

use crate::classify::{Kind, Returns, Scalar, Signature, StringShape};
use crate::header::{CParam, Prototype};
use std::collections::HashMap;
use std::fmt::Write;

/// The symbol gfortran calls for an external procedure named `name`.
pub fn fortran_symbol(name: &str) -> String {
    format!("{}_", name.to_ascii_lowercase())
}

/// Declarations, conversions and the call of one wrapper, gathered per parameter.
#[derive(Default)]
struct Parts {
    dummies: Vec<String>,
    hidden: Vec<String>,
    decls: Vec<String>,
    c_decls: Vec<String>,
    locals: Vec<String>,
    before: Vec<String>,
    actuals: Vec<String>,
    after: Vec<String>,
    /// Copies of C string results into the Fortran arguments, kept apart: a routine with
    /// a `flag` result leaves its string argument alone when the flag says there is none.
    string_outs: Vec<String>,
    /// The in/out lengths of those strings, set after the copies (which test what the
    /// caller gave) and under the same condition.
    length_outs: Vec<String>,
    /// String arguments lose their leading blanks too (info keys and values, the spawn
    /// command).
    strip_leading: bool,
    /// The condition under which a string result is copied back, by parameter name: the
    /// caller gave its in/out length room (0 asks for the length alone).
    rooms: HashMap<String, String>,
}

impl Parts {
    fn add(&mut self, name: &str, kind: &Kind) {
        let a = format!("a_{name}");
        if let Kind::Omitted { by_value } = kind {
            let (ty, value) = if *by_value {
                ("integer(c_int)", "0_c_int")
            } else {
                ("type(c_ptr)", "c_null_ptr")
            };
            self.c_decls.push(format!("{ty}, value :: {name}"));
            self.actuals.push(value.into());
            return;
        }
        self.dummies.push(a.clone());
        match kind {
            Kind::Omitted { .. } => {}
            Kind::Value(s) => {
                self.decls.push(format!("integer({}) :: {a}", s.c_kind()));
                self.c_decls
                    .push(format!("integer({}), value :: {name}", s.c_kind()));
                self.actuals.push(a);
            }
            Kind::Handle => {
                self.decls.push(format!("integer(c_int) :: {a}"));
                self.c_decls
                    .push(format!("integer(c_intptr_t), value :: {name}"));
                self.actuals.push(format!("int({a}, c_intptr_t)"));
            }
            Kind::Address | Kind::Indices(_) => {
                self.decls.push(format!("type(c_ptr), value :: {a}"));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.actuals.push(format!("crossmpi_address({a})"));
                if let Kind::Indices(count) = kind {
                    let n = match count {
                        Some(c) => format!("crossmpi_int_at(a_{c})"),
                        None => "1".to_string(),
                    };
                    self.after
                        .push(format!("call crossmpi_one_based(ierr_c, {a}, {n})"));
                }
            }
            Kind::HandlePtr { is_const } => {
                let h = format!("h_{name}");
                self.decls.push(format!("integer(c_int) :: {a}"));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.locals
                    .push(format!("integer(c_intptr_t), target :: {h}"));
                self.before.push(format!("{h} = {a}"));
                self.actuals.push(format!("c_loc({h})"));
                if !is_const {
                    self.after.push(format!("{a} = int({h}, c_int)"));
                }
            }
            Kind::HandleArray { is_const, length } => {
                let (h, n) = (format!("h_{name}"), format!("n_{name}"));
                self.decls.push(format!("integer(c_int) :: {a}(*)"));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.locals.push(format!(
                    "integer(c_intptr_t), allocatable, target :: {h}(:)"
                ));
                self.locals.push(format!("integer :: {n}"));
                self.before.push(format!("{n} = int({length})"));
                self.before.push(format!("allocate({h}(max({n}, 1)))"));
                self.before.push(format!("{h}(1:{n}) = {a}(1:{n})"));
                self.actuals.push(format!("c_loc({h})"));
                if !is_const {
                    self.after
                        .push(format!("{a}(1:{n}) = int({h}(1:{n}), c_int)"));
                }
            }
            Kind::StringIn | Kind::StringOut => {
                let (s, len) = (format!("s_{name}"), format!("{a}_len"));
                self.decls.push(format!("character(kind=c_char) :: {a}(*)"));
                self.hidden.push(len.clone());
                self.decls
                    .push(format!("integer(c_size_t), value :: {len}"));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.locals.push(format!(
                    "character(kind=c_char), allocatable, target :: {s}(:)"
                ));
                if *kind == Kind::StringIn {
                    let convert = if self.strip_leading {
                        "crossmpi_stripped_string_in"
                    } else {
                        "crossmpi_string_in"
                    };
                    self.before.push(format!("call {convert}({a}, {len}, {s})"));
                } else {
                    self.before
                        .push(format!("call crossmpi_string_buffer({len}, {s})"));
                    let copy = format!("call crossmpi_string_out({s}, {a}, {len})");
                    self.string_outs.push(match self.rooms.get(name) {
                        Some(room) => format!("if ({room}) {copy}"),
                        None => copy,
                    });
                }
                self.actuals.push(format!("c_loc({s})"));
            }
            Kind::StringLength { string } => {
                let l = format!("l_{name}");
                self.decls.push(format!("integer(c_int) :: {a}"));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.locals.push(format!("integer(c_int), target :: {l}"));
                self.before
                    .push(format!("{l} = crossmpi_c_length({a}, a_{string}_len)"));
                self.actuals.push(format!("c_loc({l})"));
                self.length_outs
                    .push(format!("if (ierr_c == 0) {a} = {l} - 1"));
            }
            Kind::Procedure => {
                self.decls.push(format!("type(c_funptr), value :: {a}"));
                self.c_decls
                    .push(format!("type(c_funptr), value :: {name}"));
                self.actuals.push(a);
            }
            Kind::Trampolined(t) => {
                self.decls.push(format!("type(c_funptr), value :: {a}"));
                self.c_decls
                    .push(format!("type(c_funptr), value :: {name}"));
                self.actuals.push(t.c_function(&a));
            }
            Kind::CallbackRecord { record, procedures } => {
                self.decls
                    .push(format!("integer({}) :: {a}", record.extra_state_kind()));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.actuals.push(record.constructor(procedures, &a));
            }
            Kind::Strings { shape, at_root } => {
                let (l, len) = (format!("l_{name}"), format!("{a}_len"));
                self.decls.push(format!("type(c_ptr), value :: {a}"));
                self.hidden.push(len.clone());
                self.decls
                    .push(format!("integer(c_size_t), value :: {len}"));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.locals
                    .push(format!("type(crossmpi_string_list), target :: {l}"));
                let convert = match shape {
                    StringShape::Argv => format!("crossmpi_argv_in({a}, {len}, {l})"),
                    StringShape::Commands { count } => {
                        format!("crossmpi_strings_in({a}, {len}, {count}, {l})")
                    }
                    StringShape::ArgvLists { count } => {
                        format!("crossmpi_argv_lists_in({a}, {len}, {count}, {l})")
                    }
                };
                self.before
                    .push(format!("if ({at_root}) &\n      call {convert}"));
                self.actuals.push(format!("{l}%c"));
            }
            Kind::AttrIn { wide } => {
                self.decls
                    .push(format!("integer({}) :: {a}", attr_kind(*wide)));
                self.c_decls
                    .push(format!("integer(c_intptr_t), value :: {name}"));
                self.actuals.push(format!("int({a}, c_intptr_t)"));
            }
            Kind::AttrOut { wide, flag } => {
                let v = format!("v_{name}");
                self.decls
                    .push(format!("integer({}) :: {a}", attr_kind(*wide)));
                self.c_decls.push(format!("type(c_ptr), value :: {name}"));
                self.locals
                    .push(format!("integer(c_intptr_t), target :: {v}"));
                self.actuals.push(format!("c_loc({v})"));
                self.after.push(format!(
                    "if (ierr_c == 0 .and. crossmpi_int_at(a_{flag}) /= 0) {a} = int({v}, {})",
                    attr_kind(*wide)
                ));
            }
        }
    }
}

fn attr_kind(wide: bool) -> &'static str {
    if wide {
        Scalar::Aint.c_kind()
    } else {
        Scalar::Int.c_kind()
    }
}

/// The C library's entry for the Fortran binding of `MPI_X` that takes and gives
/// Fortran's view of attribute values: `crossmpi_fortran_x` (crates/abi's
/// `export_with_fortran!`).
fn fortran_entry(name: &str) -> String {
    format!(
        "crossmpi_fortran_{}",
        name.trim_start_matches("MPI_").to_ascii_lowercase()
    )
}

/// Joins items as continued Fortran lines, one per line.
fn continued(items: &[String], indent: &str) -> String {
    if items.is_empty() {
        return String::new();
    }
    format!("&\n{indent}{}", items.join(&format!(", &\n{indent}")))
}

/// Which entry point a wrapper provides: `mpi_x_` calling `MPI_X`, or the profiling
/// name `pmpi_x_` calling `PMPI_X` (what a Fortran tool that interposed `mpi_x_` calls).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Mpi,
    Profiling,
}

pub fn wrapper(f: &Prototype, sig: &Signature, entry: Entry) -> String {
    // The standard strips leading and trailing blanks from Fortran info keys and values
    // and from MPI_COMM_SPAWN's command (the spawn arguments and MPI_COMM_SPAWN_MULTIPLE's
    // commands go through fortran/support.f90's string lists, which strip both too).
    let mut parts = Parts {
        strip_leading: f.name.starts_with("MPI_Info_") || f.name == "MPI_Comm_spawn",
        rooms: f
            .params
            .iter()
            .zip(&sig.params)
            .filter_map(|(p, k)| match k {
                Kind::StringLength { string } => {
                    Some((string.clone(), format!("a_{} > 0", p.name)))
                }
                _ => None,
            })
            .collect(),
        ..Parts::default()
    };
    for (p, k) in f.params.iter().zip(&sig.params) {
        parts.add(&p.name, k);
    }
    let flag = f
        .params
        .iter()
        .zip(&sig.params)
        .any(|(p, k)| p.name == "flag" && *k == Kind::Address);
    let name = match entry {
        Entry::Mpi => f.name.clone(),
        Entry::Profiling => format!("P{}", f.name),
    };
    // Attribute values: both entries call the library's Fortran entry (as in MPICH and
    // Open MPI, a C tool interposing MPI_Comm_set_attr does not see Fortran's calls).
    let c_name = if sig.takes_attribute_values() {
        fortran_entry(&f.name)
    } else {
        name.clone()
    };
    let lower = name.to_ascii_lowercase();
    let mut dummies = parts.dummies.clone();
    if sig.returns == Returns::ErrorCode {
        dummies.push("ierror".into());
    }
    dummies.extend(parts.hidden.iter().cloned());
    let c_names: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
    let (kind, c_result) = match sig.returns {
        Returns::Value(v) => (format!("{} function", v.c_type()), v.c_type()),
        _ => ("subroutine".to_string(), "integer(c_int)"),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{kind} crossmpi_{lower}({}) &\n    bind(C, name=\"{}\")",
        continued(&dummies, "    "),
        fortran_symbol(&name)
    );
    out.push_str("  use crossmpi_fortran_support\n  implicit none\n");
    for d in &parts.decls {
        let _ = writeln!(out, "  {d}");
    }
    match sig.returns {
        // Optional so one wrapper serves mpi_f08, where callers may omit ierror
        // (gfortran then passes NULL).
        Returns::ErrorCode => out.push_str("  integer(c_int), optional :: ierror\n"),
        Returns::Value(_) => {}
        // No ierror to give it to, as the standard's Fortran binding says.
        Returns::Nothing => out.push_str("  integer(c_int) :: ierr_c\n"),
    }
    if sig.returns == Returns::ErrorCode {
        out.push_str("  integer(c_int) :: ierr_c\n");
    }
    for l in &parts.locals {
        let _ = writeln!(out, "  {l}");
    }
    let _ = writeln!(
        out,
        "  interface\n    {c_result} function c_{lower}({}) &\n        bind(C, name=\"{}\")\n      import\n      implicit none",
        continued(&c_names, "        "),
        c_name
    );
    for d in &parts.c_decls {
        let _ = writeln!(out, "      {d}");
    }
    let _ = writeln!(out, "    end function\n  end interface");
    for b in &parts.before {
        let _ = writeln!(out, "  {b}");
    }
    let result = match sig.returns {
        Returns::Value(_) => format!("crossmpi_{lower}"),
        _ => "ierr_c".to_string(),
    };
    let _ = writeln!(
        out,
        "  {result} = c_{lower}({})",
        continued(&parts.actuals, "      ")
    );
    for a in &parts.after {
        let _ = writeln!(out, "  {a}");
    }
    let results: Vec<&String> = parts.string_outs.iter().chain(&parts.length_outs).collect();
    if flag && !results.is_empty() {
        // MPI_Info_get: with flag false, `value` keeps what the caller had in it.
        out.push_str(
            "  if (crossmpi_flag_set(a_flag)) then
",
        );
        for a in &results {
            let _ = writeln!(out, "    {a}");
        }
        out.push_str(
            "  end if
",
        );
    } else {
        for a in &results {
            let _ = writeln!(out, "  {a}");
        }
    }
    out.push_str(match sig.returns {
        Returns::ErrorCode => "  if (present(ierror)) ierror = ierr_c\nend subroutine\n\n",
        Returns::Value(_) => "end function\n\n",
        Returns::Nothing => "end subroutine\n\n",
    });
    out
}

/// The explicit interface the `mpi` module gives the routine `name` (`MPI_Send`,
/// `PMPI_Send`, or `MPI_Send_f08` in `mpi_f08`) with the arguments of `f`: choice-like
/// arguments accept any type, kind and rank (as Open MPI's `use mpi` does with
/// gfortran), strings are `CHARACTER(*)`, callbacks are procedures, and `ierror` is an
/// `INTEGER`, required in `mpi` and optional in `mpi_f08`.
pub fn interface(name: &str, f: &Prototype, sig: &Signature, optional_ierror: bool) -> String {
    let params: Vec<(&CParam, &Kind)> = f
        .params
        .iter()
        .zip(&sig.params)
        .filter(|(_, k)| !matches!(k, Kind::Omitted { .. }))
        .collect();
    let mut names: Vec<String> = params.iter().map(|(p, _)| p.name.clone()).collect();
    if sig.returns == Returns::ErrorCode {
        names.push("ierror".into());
    }
    let kind = match sig.returns {
        Returns::Value(v) => format!("{} function", v.fortran_type()),
        _ => "subroutine".to_string(),
    };
    let mut out = format!("  {kind} {name}({})\n", continued(&names, "      "));
    for (p, k) in params {
        let n = &p.name;
        match k {
            Kind::StringIn | Kind::StringOut => {
                let _ = writeln!(out, "    character(len=*) :: {n}");
            }
            Kind::Strings { .. } => {
                let _ = writeln!(out, "    character(len=*) :: {n}(*)");
            }
            Kind::Procedure | Kind::Trampolined(_) => {
                let _ = writeln!(out, "    external :: {n}");
            }
            _ => {
                let _ = writeln!(
                    out,
                    "    !GCC$ ATTRIBUTES NO_ARG_CHECK :: {n}\n    type(*), dimension(*) :: {n}"
                );
            }
        }
    }
    match sig.returns {
        Returns::ErrorCode if optional_ierror => out.push_str("    integer, optional :: ierror\n"),
        Returns::ErrorCode => out.push_str("    integer :: ierror\n"),
        _ => {}
    }
    out.push_str(match sig.returns {
        Returns::Value(_) => "  end function\n",
        _ => "  end subroutine\n",
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::ValueType;
    use crate::header::parse_prototype;

    fn errors(params: Vec<Kind>) -> Signature {
        Signature {
            returns: Returns::ErrorCode,
            params,
        }
    }

    #[test]
    fn value_results_make_functions_without_ierror() {
        let f = parse_prototype("double MPI_Wtime(void);").unwrap();
        let sig = Signature {
            returns: Returns::Value(ValueType::Double),
            params: vec![],
        };
        let w = wrapper(&f, &sig, Entry::Profiling);
        assert!(
            w.starts_with("real(c_double) function crossmpi_pmpi_wtime() &"),
            "{w}"
        );
        assert!(w.contains("crossmpi_pmpi_wtime = c_pmpi_wtime()"), "{w}");
        assert!(!w.contains("ierror"), "{w}");
        let i = interface("MPI_Wtime_f08", &f, &sig, true);
        assert_eq!(
            i,
            "  double precision function MPI_Wtime_f08()\n  end function\n"
        );
        let f = parse_prototype("int MPI_Pcontrol(const int level, ...);").unwrap();
        let sig = Signature {
            returns: Returns::Nothing,
            params: vec![Kind::Value(Scalar::Int)],
        };
        let w = wrapper(&f, &sig, Entry::Mpi);
        assert!(
            w.contains("ierr_c = c_mpi_pcontrol(") && !w.contains("ierror"),
            "{w}"
        );
        assert!(!interface("MPI_Pcontrol", &f, &sig, false).contains("ierror"));
    }

    #[test]
    fn string_lengths_come_after_ierror() {
        let f = parse_prototype("int MPI_Comm_set_name(MPI_Comm comm, const char *comm_name);")
            .unwrap();
        let w = wrapper(&f, &errors(vec![Kind::Handle, Kind::StringIn]), Entry::Mpi);
        let head: String = w.lines().take(6).collect::<Vec<_>>().join(" ");
        let ierror = head.find("ierror").unwrap();
        assert!(head.find("a_comm_name_len").unwrap() > ierror, "{head}");
        assert!(w.contains("bind(C, name=\"mpi_comm_set_name_\")"));
        assert!(w.contains("int(a_comm, c_intptr_t)"));
    }

    #[test]
    fn output_handles_are_copied_back_unless_const() {
        let f = parse_prototype("int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm);").unwrap();
        let w = wrapper(
            &f,
            &errors(vec![Kind::Handle, Kind::HandlePtr { is_const: false }]),
            Entry::Profiling,
        );
        assert!(w.contains("a_newcomm = int(h_newcomm, c_int)"), "{w}");
        assert!(w.contains("name=\"pmpi_comm_dup_\"") && w.contains("name=\"PMPI_Comm_dup\""));
        let w = wrapper(
            &f,
            &errors(vec![Kind::Handle, Kind::HandlePtr { is_const: true }]),
            Entry::Mpi,
        );
        assert!(!w.contains("a_newcomm = int"), "{w}");
    }

    #[test]
    fn attribute_calls_go_to_the_fortran_entry_from_both_names() {
        let f = parse_prototype(
            "int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag);",
        )
        .unwrap();
        let sig = errors(vec![
            Kind::Handle,
            Kind::Value(Scalar::Int),
            Kind::AttrOut {
                wide: true,
                flag: "flag".into(),
            },
            Kind::Address,
        ]);
        for (entry, symbol) in [
            (Entry::Mpi, "mpi_comm_get_attr_"),
            (Entry::Profiling, "pmpi_comm_get_attr_"),
        ] {
            let w = wrapper(&f, &sig, entry);
            assert!(w.contains(&format!("bind(C, name=\"{symbol}\")")), "{w}");
            assert!(
                w.contains("bind(C, name=\"crossmpi_fortran_comm_get_attr\")"),
                "{w}"
            );
            assert!(
                w.contains("if (ierr_c == 0 .and. crossmpi_int_at(a_flag) /= 0) a_attribute_val = int(v_attribute_val, c_intptr_t)"),
                "{w}"
            );
        }
        let f =
            parse_prototype("int MPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval);").unwrap();
        let w = wrapper(
            &f,
            &errors(vec![Kind::Handle, Kind::Value(Scalar::Int)]),
            Entry::Profiling,
        );
        assert!(w.contains("bind(C, name=\"PMPI_Comm_delete_attr\")"), "{w}");
    }

    #[test]
    fn nul_counted_lengths_convert_and_guard_the_string() {
        let f = parse_prototype("int MPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len, char *pset_name);").unwrap();
        let sig = errors(vec![
            Kind::Handle,
            Kind::Handle,
            Kind::Value(Scalar::Int),
            Kind::StringLength {
                string: "pset_name".into(),
            },
            Kind::StringOut,
        ]);
        let w = wrapper(&f, &sig, Entry::Mpi);
        assert!(
            w.contains("l_pset_len = crossmpi_c_length(a_pset_len, a_pset_name_len)"),
            "{w}"
        );
        let copy = w
            .find("if (a_pset_len > 0) call crossmpi_string_out(s_pset_name, a_pset_name, a_pset_name_len)")
            .expect(&w);
        let length = w
            .find("if (ierr_c == 0) a_pset_len = l_pset_len - 1")
            .expect(&w);
        assert!(
            copy < length,
            "the string is copied before its length changes: {w}"
        );
    }
}
