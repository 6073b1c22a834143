//! Reads what the Fortran bindings need from crossmpi's `mpi.h`: the handle types, the
//! integer constants, and the function prototypes.
//!
//! mpi.h promises (in its opening comment) to write constants only as enum members with
//! explicit values, `#define NAME value`, `#define NAME ((Type)value)` or an alias of
//! another name, and every prototype on one line; this parser accepts exactly those forms
//! and ignores everything else.

/// How a constant is declared in Fortran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConstKind {
    /// A default `INTEGER`.
    Integer,
    /// An `INTEGER(KIND=8)` (values of type `MPI_Aint`, `MPI_Offset` or `MPI_Count`).
    Wide,
    /// A predefined handle of the named C type: an `INTEGER` in `mpif.h` and `mpi`, a
    /// `TYPE(MPI_Comm)`... in `mpi_f08`.
    Handle(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Constant {
    pub name: String,
    pub value: i64,
    pub kind: ConstKind,
}

/// One parameter of a C prototype, e.g. `const MPI_Datatype array_of_types[]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CParam {
    /// The base type without `const` and `*`: `int`, `void`, `MPI_Comm`, `char`...
    pub base: String,
    /// Number of `*`.
    pub stars: usize,
    /// Number of `[]` groups (`int ranges[][3]` has two).
    pub brackets: usize,
    pub is_const: bool,
    pub name: String,
}

impl CParam {
    /// Levels of indirection: stars plus brackets.
    pub fn indirection(&self) -> usize {
        self.stars + self.brackets
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prototype {
    pub returns: String,
    pub name: String,
    pub params: Vec<CParam>,
    pub variadic: bool,
}

#[derive(Debug, Default)]
pub struct Header {
    pub handle_types: Vec<String>,
    pub constants: Vec<Constant>,
    pub functions: Vec<Prototype>,
}

impl Header {
    pub fn is_handle(&self, ty: &str) -> bool {
        self.handle_types.iter().any(|h| h == ty)
    }

    pub fn parse(text: &str) -> Result<Header, String> {
        let mut header = Header::default();
        let mut in_enum = false;
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let lineno = index + 1;
            if let Some(rest) = line.strip_prefix("typedef struct MPI_ABI_") {
                // `typedef struct MPI_ABI_Comm *MPI_Comm;`
                if let Some(name) = rest.split('*').nth(1) {
                    header
                        .handle_types
                        .push(name.trim_end_matches(';').trim().to_string());
                }
            } else if line.starts_with("enum {") || line.starts_with("typedef enum") {
                in_enum = true;
            } else if in_enum && line.starts_with('}') {
                in_enum = false;
            } else if in_enum {
                if let Some((name, value)) = line.trim_end_matches(',').split_once('=') {
                    let value = parse_integer(value.trim())
                        .ok_or_else(|| format!("mpi.h:{lineno}: enum value '{line}'"))?;
                    header.push_constant(name.trim(), value, ConstKind::Integer);
                }
            } else if let Some(rest) = line.strip_prefix("#define ") {
                header.define(rest);
            } else if line.starts_with("int MPI_")
                || line.starts_with("double MPI_")
                || line.starts_with("MPI_")
            {
                if let Some(proto) = parse_prototype(line) {
                    header.functions.push(proto);
                }
            }
        }
        if header.handle_types.is_empty() || header.functions.is_empty() {
            return Err("mpi.h: found no handle types or no prototypes".into());
        }
        Ok(header)
    }

    fn push_constant(&mut self, name: &str, value: i64, kind: ConstKind) {
        // Handles and integers alike must fit a default INTEGER; wider values are only
        // representable as INTEGER(KIND=8).
        let kind = if i32::try_from(value).is_err() {
            ConstKind::Wide
        } else {
            kind
        };
        self.constants.push(Constant {
            name: name.to_string(),
            value,
            kind,
        });
    }

    /// One `#define` body (after the keyword); forms Fortran cannot use are ignored.
    fn define(&mut self, body: &str) {
        let mut parts = body.splitn(2, char::is_whitespace);
        let name = parts.next().unwrap_or("");
        let value = parts.next().unwrap_or("").trim();
        if !name.starts_with("MPI_") || name.ends_with("_H") {
            return;
        }
        if let Some(v) = parse_integer(value) {
            self.push_constant(name, v, ConstKind::Integer);
        } else if let Some(cast) = value.strip_prefix("((").and_then(|v| v.strip_suffix(')')) {
            // `((Type)value)`: pointer types are sentinels or callbacks, which Fortran
            // represents differently (see docs/fortran.md).
            let Some((ty, v)) = cast.split_once(')') else {
                return;
            };
            let Some(v) = parse_integer(v) else { return };
            if ty.contains('*') || ty.starts_with("MPI_T_") {
                return;
            }
            let kind = match ty {
                "MPI_Aint" | "MPI_Offset" | "MPI_Count" => ConstKind::Wide,
                _ if self.is_handle(ty) => ConstKind::Handle(ty.to_string()),
                _ => return,
            };
            self.push_constant(name, v, kind);
        } else if let Some(target) = self.constants.iter().find(|c| c.name == value).cloned() {
            self.push_constant(name, target.value, target.kind);
        }
    }
}

/// A C integer literal: decimal or hexadecimal, optionally negative or parenthesised.
pub fn parse_integer(text: &str) -> Option<i64> {
    let t = text.trim().trim_start_matches('(').trim_end_matches(')');
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    Some(if negative { -value } else { value })
}

/// `int MPI_Send(const void *buf, ..., MPI_Comm comm);`
pub fn parse_prototype(line: &str) -> Option<Prototype> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let (returns, name) = line[..open].trim().rsplit_once(' ')?;
    if !name.starts_with("MPI_") {
        return None;
    }
    let mut params = Vec::new();
    let mut variadic = false;
    let args = line[open + 1..close].trim();
    if args != "void" && !args.is_empty() {
        for arg in args.split(',') {
            let arg = arg.trim();
            if arg == "..." {
                variadic = true;
            } else {
                params.push(parse_param(arg)?);
            }
        }
    }
    Some(Prototype {
        returns: returns.trim().to_string(),
        name: name.to_string(),
        params,
        variadic,
    })
}

fn parse_param(arg: &str) -> Option<CParam> {
    let brackets = arg.matches('[').count();
    let decl = arg.split('[').next()?.trim();
    let stars = decl.matches('*').count();
    let words: Vec<&str> = decl
        .split(|c: char| c.is_whitespace() || c == '*')
        .filter(|w| !w.is_empty())
        .collect();
    let (name, types) = words.split_last()?;
    let is_const = types.contains(&"const");
    let base = types
        .iter()
        .filter(|w| **w != "const")
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    if base.is_empty() {
        return None;
    }
    Some(CParam {
        base,
        stars,
        brackets,
        is_const,
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_keep_constness_stars_and_brackets() {
        let p = parse_param("const MPI_Datatype array_of_types[]").unwrap();
        assert_eq!(
            (p.base.as_str(), p.stars, p.brackets, p.is_const),
            ("MPI_Datatype", 0, 1, true)
        );
        let p = parse_param("int ranges[][3]").unwrap();
        assert_eq!((p.name.as_str(), p.brackets), ("ranges", 2));
        let p = parse_param("char ***argv").unwrap();
        assert_eq!((p.base.as_str(), p.stars), ("char", 3));
    }

    #[test]
    fn prototypes_with_void_and_varargs() {
        let p = parse_prototype("double MPI_Wtime(void);").unwrap();
        assert!(p.params.is_empty() && p.returns == "double");
        let p = parse_prototype("int MPI_Pcontrol(const int level, ...);").unwrap();
        assert!(p.variadic && p.params.len() == 1);
        assert!(parse_prototype("int PMPI_Send(void);").is_none());
    }

    #[test]
    fn constants_of_every_accepted_form() {
        let h = Header::parse(
            "typedef struct MPI_ABI_Comm *MPI_Comm;\n\
             enum {\n    MPI_ANY_TAG = -2,\n    MPI_UNDEFINED = -32766\n};\n\
             #define MPI_COMM_WORLD ((MPI_Comm)0x101)\n\
             #define MPI_IN_PLACE ((void *)0x1)\n\
             #define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-1)\n\
             #define MPI_MAX_INFO_KEY 256\n\
             #define MPI_WORLD_ALIAS MPI_COMM_WORLD\n\
             int MPI_Barrier(MPI_Comm comm);\n",
        )
        .unwrap();
        let get = |n: &str| h.constants.iter().find(|c| c.name == n).cloned();
        assert_eq!(get("MPI_ANY_TAG").unwrap().value, -2);
        assert_eq!(get("MPI_COMM_WORLD").unwrap().value, 0x101);
        assert_eq!(
            get("MPI_COMM_WORLD").unwrap().kind,
            ConstKind::Handle("MPI_Comm".into())
        );
        assert_eq!(get("MPI_WORLD_ALIAS").unwrap().value, 0x101);
        assert!(get("MPI_IN_PLACE").is_none());
        assert_eq!(
            get("MPI_DISPLACEMENT_CURRENT").unwrap().kind,
            ConstKind::Wide
        );
        assert_eq!(get("MPI_MAX_INFO_KEY").unwrap().value, 256);
        assert_eq!(h.functions[0].name, "MPI_Barrier");
    }
}
