//! Build script of the ABI crate.
//!
//! 1. The library is installed as `libmpi_abi.so.1` (MPI 5.0 standard ABI, major version 1):
//!    record that soname so programs linked against it load the ABI-compatible file.
//! 2. `include/mpi.h` is the single source of truth for the ABI's values: this script reads
//!    it and writes `$OUT_DIR/abi_consts.rs` (every constant, as Rust constants) and
//!    `$OUT_DIR/abi_functions.rs` (every declared `MPI_` function name). Every line of the
//!    header must be understood; a line that is not stops the build with its line number,
//!    so no constant can be silently left out of the Rust side.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;
use std::{env, fs, path::Path};

const HEADER: &str = "include/mpi.h";

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmpi_abi.so.1");
    println!("cargo:rerun-if-changed={HEADER}");
    println!("cargo:rerun-if-changed=build.rs");

    let manifest_dir =
        env::var("CARGO_MANIFEST_DIR").expect("build.rs: cargo did not set CARGO_MANIFEST_DIR");
    let text = fs::read_to_string(Path::new(&manifest_dir).join(HEADER))
        .unwrap_or_else(|err| panic!("build.rs: cannot read {HEADER}: {err}"));
    let header = match parse_header(&text) {
        Ok(header) => header,
        Err(err) => panic!(
            "build.rs: {HEADER}:{}: {}\n    line: `{}`",
            err.line, err.reason, err.text
        ),
    };
    let out_dir = env::var("OUT_DIR").expect("build.rs: cargo did not set OUT_DIR");
    let out_dir = Path::new(&out_dir);
    write_file(&out_dir.join("abi_consts.rs"), &render_consts(&header));
    write_file(
        &out_dir.join("abi_functions.rs"),
        &render_functions(&header),
    );
}

fn write_file(path: &Path, contents: &str) {
    fs::write(path, contents)
        .unwrap_or_else(|err| panic!("build.rs: cannot write {}: {err}", path.display()));
}

/// The Rust type and value of one header constant.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    /// A handle or pointer constant, `((Type)0x...)`: its address as a `usize`.
    Address(u64),
    /// An integer: an enum member, `#define NAME 5`, or `((IntegerType)-1)`.
    Integer(i64),
    /// A string macro such as `CROSSMPI_VERSION`.
    Text(String),
    /// `#define NAME OTHER`: the same value and type as an earlier constant.
    Alias(String),
}

#[derive(Default)]
struct Header {
    /// Constants in header order.
    constants: Vec<(String, Value)>,
    /// Names of the functions declared with the `MPI_` prefix.
    functions: BTreeSet<String>,
    /// Names of the functions declared with the `PMPI_` prefix, without the leading `P`.
    profiling: BTreeSet<String>,
}

impl Header {
    /// Rust type of a constant, following an alias to the constant it names.
    fn rust_type(&self, value: &Value) -> &'static str {
        match value {
            Value::Address(_) => "usize",
            Value::Integer(n) if i32::try_from(*n).is_ok() => "i32",
            Value::Integer(_) => "i64",
            Value::Text(_) => "&str",
            Value::Alias(target) => self
                .constants
                .iter()
                .find(|(name, _)| name == target)
                .map(|(_, value)| self.rust_type(value))
                .expect("the parser only accepts aliases of constants defined above"),
        }
    }
}

#[derive(Debug)]
struct ParseError {
    line: usize,
    reason: String,
    text: String,
}

/// Where the parser is between lines.
#[derive(PartialEq)]
enum State {
    TopLevel,
    BlockComment,
    EnumBody,
    StructBody,
}

/// Line-by-line reader of the header. It knows the header's vocabulary: comments,
/// include guards, C++ guards, typedefs, enums, the `MPI_Status` struct, constant
/// macros and one-line prototypes.
#[derive(Default)]
struct Parser {
    header: Header,
    /// Index of each constant in `header.constants`, to reject duplicates and resolve aliases.
    known: HashMap<String, usize>,
    /// Opaque handle typedefs (`typedef struct X *NAME;`): their casts are addresses.
    handle_types: BTreeSet<String>,
    /// Integer typedefs (`typedef int64_t MPI_Offset;`): their casts are integers.
    integer_types: BTreeSet<String>,
    /// Function typedefs (callbacks), which later typedefs may rename.
    function_types: BTreeSet<String>,
    /// The macro named by the last `#ifndef`, which the next `#define` may define bare.
    guard: Option<String>,
}

fn parse_header(text: &str) -> Result<Header, ParseError> {
    let mut parser = Parser::default();
    let mut state = State::TopLevel;
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let fail = |reason: String| ParseError {
            line: index + 1,
            reason,
            text: raw.to_string(),
        };
        state = match state {
            State::BlockComment if line.contains("*/") => State::TopLevel,
            State::BlockComment => State::BlockComment,
            State::EnumBody => parser.enum_line(line).map_err(fail)?,
            State::StructBody => parser.struct_line(line).map_err(fail)?,
            State::TopLevel => parser.top_line(line).map_err(fail)?,
        };
    }
    if state != State::TopLevel {
        return Err(ParseError {
            line: text.lines().count(),
            reason: "the header ends inside a comment, enum or struct".into(),
            text: String::new(),
        });
    }
    let header = parser.header;
    if let Some(name) = header
        .functions
        .symmetric_difference(&header.profiling)
        .next()
    {
        return Err(ParseError {
            line: 0,
            reason: format!("{name} and P{name} are not both declared"),
            text: String::new(),
        });
    }
    Ok(header)
}

impl Parser {
    fn top_line(&mut self, line: &str) -> Result<State, String> {
        if line.is_empty() {
            return Ok(State::TopLevel);
        }
        if line.starts_with("/*") {
            return Ok(if line.ends_with("*/") {
                State::TopLevel
            } else if line.contains("*/") {
                return Err("code after a comment on the same line".into());
            } else {
                State::BlockComment
            });
        }
        if let Some(name) = line.strip_prefix("#ifndef ") {
            self.guard = Some(name.trim().to_string());
            return Ok(State::TopLevel);
        }
        if line.starts_with("#ifdef ")
            || line.starts_with("#endif")
            || line.starts_with("#include <")
            || line == "extern \"C\" {"
            || line == "}"
        {
            return Ok(State::TopLevel);
        }
        if let Some(rest) = line.strip_prefix("#define ") {
            self.define(rest)?;
            return Ok(State::TopLevel);
        }
        if line == "enum {" || (line.starts_with("typedef enum ") && line.ends_with('{')) {
            return Ok(State::EnumBody);
        }
        if line == "typedef struct {" {
            return Ok(State::StructBody);
        }
        if let Some(rest) = line.strip_prefix("typedef ") {
            self.typedef(rest)?;
            return Ok(State::TopLevel);
        }
        if let Some(name) = prototype_name(line) {
            let (set, unprefixed) = match name.strip_prefix('P') {
                Some(rest) if rest.starts_with("MPI_") => (&mut self.header.profiling, rest),
                _ => (&mut self.header.functions, name),
            };
            if !unprefixed.starts_with("MPI_") {
                return Err(format!(
                    "function {name} has neither the MPI_ nor the PMPI_ prefix"
                ));
            }
            if !set.insert(unprefixed.to_string()) {
                return Err(format!("function {name} is declared twice"));
            }
            return Ok(State::TopLevel);
        }
        Err(
            "line not understood (not a comment, guard, typedef, enum, constant or prototype)"
                .into(),
        )
    }

    /// `NAME VALUE [/* comment */]`, or a function-like macro (skipped: it is not a constant).
    fn define(&mut self, rest: &str) -> Result<(), String> {
        let rest = strip_trailing_comment(rest)?;
        let name_end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let (name, value) = rest.split_at(name_end);
        if name.is_empty() {
            return Err("#define without a name".into());
        }
        if value.starts_with('(') {
            return Ok(()); // function-like macro
        }
        let value = value.trim();
        if value.is_empty() {
            return if self.guard.as_deref() == Some(name) {
                Ok(())
            } else {
                Err(format!(
                    "macro {name} has no value and is not the include guard"
                ))
            };
        }
        let parsed = self.macro_value(name, value)?;
        self.add_constant(name, parsed)
    }

    fn macro_value(&self, name: &str, value: &str) -> Result<Value, String> {
        if let Some(number) = parse_integer(value) {
            return Ok(Value::Integer(number));
        }
        if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
            let inner = &value[1..value.len() - 1];
            if inner.contains(['"', '\\']) {
                return Err(format!("string macro {name} has quotes or escapes inside"));
            }
            return Ok(Value::Text(inner.to_string()));
        }
        if let Some(cast) = value.strip_prefix("((").and_then(|v| v.strip_suffix(')')) {
            let (type_name, literal) = cast
                .split_once(')')
                .ok_or_else(|| format!("macro {name}: cast without a closing parenthesis"))?;
            let type_name = type_name.trim();
            let number = parse_integer(literal.trim())
                .ok_or_else(|| format!("macro {name}: cast of `{literal}`, not an integer"))?;
            let is_address = type_name.ends_with('*') || self.handle_types.contains(type_name);
            if is_address {
                return u64::try_from(number)
                    .map(Value::Address)
                    .map_err(|_| format!("macro {name}: negative address {number}"));
            }
            if self.integer_types.contains(type_name) {
                return Ok(Value::Integer(number));
            }
            return Err(format!(
                "macro {name}: cast to `{type_name}`, which is neither a pointer, a handle \
                 nor an integer typedef declared above"
            ));
        }
        if is_identifier(value) {
            return if self.known.contains_key(value) {
                Ok(Value::Alias(value.to_string()))
            } else {
                Err(format!(
                    "macro {name} aliases `{value}`, which is not defined above"
                ))
            };
        }
        Err(format!("macro {name}: value `{value}` has no known form"))
    }

    fn typedef(&mut self, rest: &str) -> Result<(), String> {
        let body = rest
            .strip_suffix(';')
            .ok_or("typedef does not end with `;` on its line")?;
        // Opaque handle: `struct TAG *NAME`.
        if let Some(handle) = body.strip_prefix("struct ") {
            let (_, name) = handle
                .split_once('*')
                .ok_or("struct typedef that is not a pointer to an incomplete struct")?;
            return insert_new(&mut self.handle_types, name.trim());
        }
        // Callback: `RET (NAME)(ARGS)`.
        if let Some(open) = body.find('(') {
            let after = &body[open + 1..];
            let close = after.find(')').ok_or("callback typedef without `)`")?;
            let name = after[..close].trim();
            if !is_identifier(name) || !after[close + 1..].trim_start().starts_with('(') {
                return Err("typedef with parentheses that is not `RET (NAME)(ARGS)`".into());
            }
            return insert_new(&mut self.function_types, name);
        }
        // Renaming: `OLD NAME`, where OLD is an integer type or a callback type.
        let (old, new) = body.rsplit_once(' ').ok_or("typedef without a new name")?;
        let (old, new) = (old.trim(), new.trim());
        if self.function_types.contains(old) {
            return insert_new(&mut self.function_types, new);
        }
        if matches!(old, "int" | "intptr_t" | "int32_t" | "int64_t") {
            return insert_new(&mut self.integer_types, new);
        }
        Err(format!(
            "typedef of `{old}`, which is not a known integer or callback type"
        ))
    }

    /// `NAME = VALUE,` with an explicit value, a comment, or the closing brace.
    fn enum_line(&mut self, line: &str) -> Result<State, String> {
        if line.is_empty() || (line.starts_with("/*") && line.ends_with("*/")) {
            return Ok(State::EnumBody);
        }
        if line.starts_with('}') {
            return Ok(State::TopLevel);
        }
        let member = strip_trailing_comment(line)?;
        let member = member.strip_suffix(',').unwrap_or(member);
        let (name, value) = member
            .split_once('=')
            .ok_or("enum member without an explicit value")?;
        let (name, value) = (name.trim(), value.trim());
        if !is_identifier(name) {
            return Err(format!("enum member name `{name}` is not an identifier"));
        }
        let number = parse_integer(value)
            .ok_or(format!("enum member {name}: `{value}` is not an integer"))?;
        self.add_constant(name, Value::Integer(number))?;
        Ok(State::EnumBody)
    }

    /// The fields of `MPI_Status`: `int NAME;` or `int NAME[N];`, then `} NAME;`.
    fn struct_line(&mut self, line: &str) -> Result<State, String> {
        if line.starts_with('}') {
            return Ok(State::TopLevel);
        }
        let field = line
            .strip_prefix("int ")
            .and_then(|f| f.strip_suffix(';'))
            .ok_or("struct field that is not `int NAME;` or `int NAME[N];`")?;
        let name = field.split('[').next().unwrap_or(field);
        if is_identifier(name) {
            Ok(State::StructBody)
        } else {
            Err(format!("struct field name `{name}` is not an identifier"))
        }
    }

    fn add_constant(&mut self, name: &str, value: Value) -> Result<(), String> {
        if self.known.contains_key(name) {
            return Err(format!("constant {name} is defined twice"));
        }
        self.known
            .insert(name.to_string(), self.header.constants.len());
        self.header.constants.push((name.to_string(), value));
        Ok(())
    }
}

fn insert_new(set: &mut BTreeSet<String>, name: &str) -> Result<(), String> {
    if !is_identifier(name) {
        return Err(format!("typedef name `{name}` is not an identifier"));
    }
    if !set.insert(name.to_string()) {
        return Err(format!("type {name} is declared twice"));
    }
    Ok(())
}

/// The function name of a one-line prototype `RET NAME(ARGS);`, where RET is one word.
fn prototype_name(line: &str) -> Option<&str> {
    let body = line.strip_suffix(");")?;
    let (head, _) = body.split_once('(')?;
    let (return_type, name) = head.split_once(' ')?;
    (is_identifier(return_type) && is_identifier(name)).then_some(name)
}

/// Removes one trailing `/* ... */` comment, if present.
fn strip_trailing_comment(text: &str) -> Result<&str, String> {
    match text.find("/*") {
        None => Ok(text.trim_end()),
        Some(start) if text.ends_with("*/") => Ok(text[..start].trim_end()),
        Some(_) => Err("a comment that does not end its line".into()),
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Decimal or `0x` hexadecimal, optionally negative.
fn parse_integer(text: &str) -> Option<i64> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let magnitude = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) if !hex.is_empty() => i64::from_str_radix(hex, 16).ok()?,
        Some(_) => return None,
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse().ok()?
        }
        None => return None,
    };
    Some(if negative { -magnitude } else { magnitude })
}

fn render_consts(header: &Header) -> String {
    let mut out = format!("// Generated by build.rs from {HEADER}; do not edit.\n");
    for (name, value) in &header.constants {
        let rust_type = header.rust_type(value);
        let rendered = match value {
            Value::Address(address) => format!("{address:#x}"),
            Value::Integer(number) => number.to_string(),
            Value::Text(text) => format!("{text:?}"),
            Value::Alias(target) => target.clone(),
        };
        writeln!(out, "pub const {name}: {rust_type} = {rendered};").expect("writing to a String");
    }
    // Handle constants by name, so tables keyed by the standard's names (datatypes
    // named by the datatype engine, for instance) can find their handle values.
    out.push_str("/// Every handle and pointer constant: its C name and value.\npub const HANDLE_CONSTANTS: &[(&str, usize)] = &[\n");
    for (name, value) in &header.constants {
        if header.rust_type(value) == "usize" {
            writeln!(out, "    ({name:?}, {name}),").expect("writing to a String");
        }
    }
    out.push_str("];\n");
    out
}

fn render_functions(header: &Header) -> String {
    let mut out = format!(
        "// Generated by build.rs from {HEADER}; do not edit.\n\
         /// Every function `mpi.h` declares with the `MPI_` prefix, sorted; each has a `PMPI_` twin.\n\
         pub const DECLARED_FUNCTIONS: &[&str] = &[\n"
    );
    for name in &header.functions {
        writeln!(out, "    {name:?},").expect("writing to a String");
    }
    out.push_str("];\n");
    out
}
