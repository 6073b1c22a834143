//! Data representations: `native` (and its alias `internal`: the memory bytes as they
//! are), `external32` (big-endian, the standard's fixed sizes, through the datatype
//! engine) and the ones an application registers (`MPI_Register_datarep`: its own sizes
//! per basic type and its own conversion functions). Conversion happens between the
//! user buffer and a contiguous stream; the stream is what views place in the file.

use crate::error::{type_error, FileClass, IoError, IoResult};
use crossmpi_core::datatype::{Basic, Datatype};
use crossmpi_core::error::ErrorClass;
use crossmpi_core::userbuf::UserBuf;
use std::borrow::Cow;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex};

/// The functions of a user-defined representation. The ABI layer implements them by
/// calling the application's functions; this crate decides when and on what.
pub trait Conversions: Send + Sync {
    /// Bytes one element of `b` takes in the file (`dtype_file_extent_fn`).
    fn file_extent(&self, function: &str, b: Basic) -> IoResult<u64>;
    /// Whether writes convert (a write conversion function was given); otherwise the
    /// file holds native bytes.
    fn writes(&self) -> bool;
    /// Whether reads convert (a read conversion function was given).
    fn reads(&self) -> bool;
    /// The most data items one conversion call may take (its `count` argument's range).
    fn max_items(&self) -> u64;
    /// `write_conversion_fn`: data items `position..position + count` of `buf` (its
    /// datatype tiled) into `file`.
    fn write(
        &self,
        function: &str,
        buf: &UserBuf,
        count: u64,
        file: &mut [u8],
        position: u64,
    ) -> IoResult<()>;
    /// `read_conversion_fn`: `count` data items from `file` into `buf` from item
    /// `position`.
    fn read(
        &self,
        function: &str,
        buf: &UserBuf,
        count: u64,
        file: &[u8],
        position: u64,
    ) -> IoResult<()>;
}

/// A registered representation: its name and functions.
pub struct UserRep {
    name: String,
    conv: Box<dyn Conversions>,
}

impl UserRep {
    /// Calls `step(position, count, file bytes)` over the data items of `elements`
    /// elements of `dtype`, whole elements per call and at most `max_items` items each
    /// (several calls with the position advancing, as the standard allows), where one
    /// element takes `file_size` bytes in the file.
    fn in_calls(
        &self,
        function: &str,
        dtype: &Datatype,
        elements: u64,
        file_size: u64,
        mut step: impl FnMut(u64, u64, Range<usize>) -> IoResult<()>,
    ) -> IoResult<()> {
        let items: u64 = dtype.basic_runs().iter().map(|r| r.1).sum();
        if items == 0 || elements == 0 {
            return Ok(());
        }
        let max = self.conv.max_items();
        if items > max {
            return Err(IoError::core(
                ErrorClass::Count,
                function,
                "datatype",
                format!("{dtype:?}"),
                format!("one element holds {items} data items, more than a conversion function's count can name ({max})"),
            ));
        }
        let per_call = max / items;
        let mut done = 0;
        while done < elements {
            let k = per_call.min(elements - done);
            let bytes = (done * file_size) as usize..((done + k) * file_size) as usize;
            step(done * items, k * items, bytes)?;
            done += k;
        }
        Ok(())
    }
}

#[derive(Clone)]
pub enum Datarep {
    Native,
    Internal,
    External32,
    User(Arc<UserRep>),
}

impl fmt::Debug for Datarep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The representations registered in this process (`MPI_Register_datarep`); they last
/// until the process ends, as the standard says.
static REGISTERED: Mutex<Vec<Arc<UserRep>>> = Mutex::new(Vec::new());

fn registered() -> std::sync::MutexGuard<'static, Vec<Arc<UserRep>>> {
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

impl Datarep {
    fn predefined(name: &str) -> Option<Datarep> {
        match name {
            "native" => Some(Datarep::Native),
            "internal" => Some(Datarep::Internal),
            "external32" => Some(Datarep::External32),
            _ => None,
        }
    }

    pub fn parse(function: &str, name: &str) -> IoResult<Datarep> {
        if let Some(d) = Datarep::predefined(name) {
            return Ok(d);
        }
        let found = registered().iter().find(|r| r.name == name).cloned();
        found.map(Datarep::User).ok_or_else(|| {
            IoError::file(
                FileClass::UnsupportedDatarep,
                function,
                "datarep",
                format!("\"{name}\""),
                "neither native, internal, external32 nor a name given to MPI_Register_datarep",
            )
        })
    }

    /// `MPI_Register_datarep`: a name taken (predefined or registered before) is
    /// `MPI_ERR_DUP_DATAREP`.
    pub fn register(function: &str, name: &str, conv: Box<dyn Conversions>) -> IoResult<()> {
        let mut all = registered();
        if Datarep::predefined(name).is_some() || all.iter().any(|r| r.name == name) {
            return Err(IoError::file(
                FileClass::DupDatarep,
                function,
                "datarep",
                format!("\"{name}\""),
                "the name is taken",
            ));
        }
        all.push(Arc::new(UserRep {
            name: name.to_string(),
            conv,
        }));
        Ok(())
    }

    pub fn name(&self) -> &str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
            Datarep::User(u) => &u.name,
        }
    }

    /// Whether the file holds the memory bytes as they are.
    pub fn is_native(&self) -> bool {
        matches!(self, Datarep::Native | Datarep::Internal)
    }

    /// Bytes one element of `b` takes in the file.
    fn basic_size(&self, function: &str, b: Basic) -> IoResult<u64> {
        match self {
            Datarep::Native | Datarep::Internal => Ok(b.size()),
            Datarep::External32 => Ok(b.external32_size()),
            Datarep::User(u) => u.conv.file_extent(function, b),
        }
    }

    /// Bytes one element of `t` takes in the file.
    pub fn type_size(&self, function: &str, t: &Datatype) -> IoResult<u64> {
        if self.is_native() {
            return Ok(t.size());
        }
        let mut total = 0u64;
        for (b, n) in t.basic_runs() {
            total = total.saturating_add(self.basic_size(function, b)?.saturating_mul(n));
        }
        Ok(total)
    }

    /// `t` as laid out in the file: each basic type replaced by as many bytes as it
    /// takes in the file, the constructors applied again (the displacements they take in
    /// elements scale, those in bytes stay). A view's etype and filetype place file bytes
    /// through this form.
    pub fn file_type(&self, function: &str, t: &Datatype) -> IoResult<Datatype> {
        if self.is_native() {
            return Ok(t.clone());
        }
        let mut forms: Vec<(Basic, u64)> = Vec::new();
        for (b, _) in t.basic_runs() {
            if !forms.iter().any(|f| f.0 == b) {
                forms.push((b, self.basic_size(function, b)?));
            }
        }
        if forms.iter().all(|&(b, n)| n == b.size()) {
            return Ok(t.clone());
        }
        let byte = Datatype::basic(Basic::Byte);
        let swap = |b: Basic| {
            let n = forms.iter().find(|f| f.0 == b).map_or(b.size(), |f| f.1);
            Datatype::contiguous(n, &byte).unwrap_or_else(|_| Datatype::basic(b))
        };
        t.with_basics(&swap).map_err(|e| type_error(function, e))
    }

    /// `MPI_File_get_type_extent`: the extent of the type's file form.
    pub fn type_extent(&self, function: &str, t: &Datatype) -> IoResult<i64> {
        Ok(self.file_type(function, t)?.extent())
    }

    /// Bytes `buf` occupies in the file.
    pub fn file_bytes(&self, function: &str, buf: &UserBuf) -> IoResult<u64> {
        Ok(self
            .type_size(function, &buf.dtype)?
            .saturating_mul(buf.count))
    }

    /// A user representation without a conversion function for one direction stores
    /// native bytes, which must then have the file's sizes.
    fn check_native_in_file(&self, function: &str, buf: &UserBuf, way: &str) -> IoResult<()> {
        if self.file_bytes(function, buf)? != buf.bytes() {
            return Err(IoError::file(
                FileClass::UnsupportedDatarep,
                function,
                "datatype",
                format!("{:?}", buf.dtype),
                format!(
                    "representation {} has no {way} conversion function (native bytes) but its file sizes differ from native",
                    self.name()
                ),
            ));
        }
        Ok(())
    }

    /// The file bytes of `buf`: its own memory when it is dense and native.
    pub fn encode<'a>(&self, function: &str, buf: &'a UserBuf) -> IoResult<Cow<'a, [u8]>> {
        match self {
            Datarep::External32 => {
                let mut out = vec![0u8; self.file_bytes(function, buf)? as usize];
                let (mem, origin) = buf.read();
                buf.dtype
                    .pack_external32(mem, origin, buf.count, &mut out)
                    .map_err(|e| type_error(function, e))?;
                return Ok(Cow::Owned(out));
            }
            Datarep::User(u) if u.conv.writes() => {
                let size = self.type_size(function, &buf.dtype)?;
                let mut out = vec![0u8; (size * buf.count) as usize];
                u.in_calls(function, &buf.dtype, buf.count, size, |at, n, bytes| {
                    u.conv.write(function, buf, n, &mut out[bytes], at)
                })?;
                return Ok(Cow::Owned(out));
            }
            Datarep::User(_) => self.check_native_in_file(function, buf, "write")?,
            Datarep::Native | Datarep::Internal => {}
        }
        let len = buf.bytes() as usize;
        if let Some(dense) = buf.dense(0, len) {
            return Ok(Cow::Borrowed(dense));
        }
        let mut out = vec![0u8; len];
        buf.pack_into(0, &mut out);
        Ok(Cow::Owned(out))
    }

    /// Stores the first `have` file bytes of `data` into `buf`; returns the native bytes
    /// stored (whole basic elements in external32, whole elements of the datatype in a
    /// user representation, whose functions convert whole elements).
    pub fn decode(&self, function: &str, data: &[u8], have: usize, buf: &UserBuf) -> IoResult<u64> {
        let data = &data[..have];
        match self {
            Datarep::External32 => {
                let (mem, origin) = buf.write();
                return Ok(buf
                    .dtype
                    .unpack_external32_prefix(data, mem, origin, buf.count));
            }
            Datarep::User(u) if u.conv.reads() => {
                let size = self.type_size(function, &buf.dtype)?;
                let whole = (have as u64).checked_div(size).unwrap_or(0);
                u.in_calls(function, &buf.dtype, whole, size, |at, n, bytes| {
                    u.conv.read(function, buf, n, &data[bytes], at)
                })?;
                return Ok(whole * buf.dtype.size());
            }
            Datarep::User(_) => self.check_native_in_file(function, buf, "read")?,
            Datarep::Native | Datarep::Internal => {}
        }
        buf.unpack_from(0, data);
        Ok(have as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ints as 8-byte big-endian; `max_items` small enough to force several calls.
    struct Widen {
        max: u64,
        calls: Arc<Mutex<Vec<(u64, u64)>>>,
        fail_with: Option<i32>,
        /// Whether it has conversion functions (else MPI_CONVERSION_FN_NULL).
        converts: bool,
    }

    impl Conversions for Widen {
        fn file_extent(&self, _: &str, b: Basic) -> IoResult<u64> {
            Ok(if b == Basic::Int { 8 } else { b.size() })
        }
        fn writes(&self) -> bool {
            self.converts
        }
        fn reads(&self) -> bool {
            self.converts
        }
        fn max_items(&self) -> u64 {
            self.max
        }
        fn write(&self, f: &str, buf: &UserBuf, n: u64, file: &mut [u8], at: u64) -> IoResult<()> {
            if let Some(code) = self.fail_with {
                return Err(IoError::user_code(
                    crate::Class::Core(ErrorClass::Other),
                    f,
                    "write_conversion_fn",
                    code,
                ));
            }
            self.calls.lock().unwrap().push((at, n));
            let mut native = vec![0u8; 4 * n as usize];
            buf.pack_into(4 * at, &mut native);
            for (i, v) in native.chunks_exact(4).enumerate() {
                let v = i32::from_ne_bytes(v.try_into().unwrap()) as i64;
                file[8 * i..8 * i + 8].copy_from_slice(&v.to_be_bytes());
            }
            Ok(())
        }
        fn read(&self, _: &str, buf: &UserBuf, n: u64, file: &[u8], at: u64) -> IoResult<()> {
            self.calls.lock().unwrap().push((at, n));
            let native: Vec<u8> = file
                .chunks_exact(8)
                .flat_map(|c| (i64::from_be_bytes(c.try_into().unwrap()) as i32).to_ne_bytes())
                .collect();
            buf.unpack_from(4 * at, &native);
            Ok(())
        }
    }

    type Calls = Arc<Mutex<Vec<(u64, u64)>>>;

    /// The representation and the (position, count) of each conversion call.
    fn widen(max: u64, fail_with: Option<i32>, converts: bool) -> (Datarep, Calls) {
        let calls = Calls::default();
        let conv = Widen {
            max,
            calls: calls.clone(),
            fail_with,
            converts,
        };
        let u = UserRep {
            name: "widen".into(),
            conv: Box::new(conv),
        };
        (Datarep::User(Arc::new(u)), calls)
    }

    #[test]
    fn user_conversions_run_in_whole_elements_with_advancing_positions() {
        let pair = Datatype::contiguous(2, &Datatype::basic(Basic::Int)).unwrap();
        let (rep, calls) = widen(3, None, true);
        assert_eq!(rep.type_size("t", &pair).unwrap(), 16);
        let mut ints: Vec<i32> = vec![1, -2, 3, -4, 5, -6];
        let buf = UserBuf::new(ints.as_mut_ptr() as usize, 3, pair.clone());
        let file = rep.encode("t", &buf).unwrap().into_owned();
        assert_eq!(file.len(), 48);
        // At most 3 items per call: one element (2 ints) each, the position advancing.
        assert_eq!(
            std::mem::take(&mut *calls.lock().unwrap()),
            [(0, 2), (2, 2), (4, 2)]
        );
        assert_eq!(&file[8..16], &(-2i64).to_be_bytes());
        assert_eq!(&file[40..48], &(-6i64).to_be_bytes());
        let mut back = vec![0i32; 6];
        let out = UserBuf::new(back.as_mut_ptr() as usize, 3, pair);
        // 40 bytes present: two whole elements of 16 file bytes.
        assert_eq!(rep.decode("t", &file, 40, &out).unwrap(), 16);
        assert_eq!(back, vec![1, -2, 3, -4, 0, 0]);
        assert_eq!(*calls.lock().unwrap(), [(0, 2), (2, 2)]);
    }

    #[test]
    fn conversion_errors_file_forms_and_null_functions() {
        let int = Datatype::basic(Basic::Int);
        let (rep, _) = widen(100, Some(4242), true);
        let mut v = [7i32];
        let buf = UserBuf::new(v.as_mut_ptr() as usize, 1, int.clone());
        let e = rep.encode("MPI_File_write", &buf).unwrap_err();
        assert_eq!(e.code, Some(4242));
        assert!(e.message.contains("MPI_File_write") && e.message.contains("write_conversion_fn"));
        // File forms: element strides scale with the file's int size.
        let v = Datatype::vector(2, 1, 3, &int).unwrap();
        let f = rep.file_type("t", &v).unwrap();
        assert_eq!((f.size(), f.extent()), (16, 32));
        assert_eq!(rep.type_extent("t", &v).unwrap(), 32);
        let byte = Datatype::basic(Basic::Byte);
        // Without conversion functions the file holds native bytes, which ints (8 bytes
        // in this representation's files) cannot be.
        let (plain, calls) = widen(100, None, false);
        let e = plain.encode("MPI_File_write", &buf).unwrap_err();
        assert_eq!(e.class, crate::Class::File(FileClass::UnsupportedDatarep));
        let mut bytes = [1u8, 2];
        let raw = UserBuf::new(bytes.as_mut_ptr() as usize, 2, byte);
        assert_eq!(&*plain.encode("t", &raw).unwrap(), &[1, 2]);
        assert!(calls.lock().unwrap().is_empty());
    }

    #[test]
    fn names_are_registered_once() {
        let (_, calls) = widen(1, None, true);
        let conv = || {
            Box::new(Widen {
                max: 1,
                calls: calls.clone(),
                fail_with: None,
                converts: true,
            })
        };
        assert!(Datarep::register("t", "unit-test-rep", conv()).is_ok());
        let e = Datarep::register("t", "unit-test-rep", conv()).unwrap_err();
        assert_eq!(e.class, crate::Class::File(FileClass::DupDatarep));
        let e = Datarep::register("t", "external32", conv()).unwrap_err();
        assert_eq!(e.class, crate::Class::File(FileClass::DupDatarep));
        assert_eq!(
            Datarep::parse("t", "unit-test-rep").unwrap().name(),
            "unit-test-rep"
        );
        assert!(Datarep::parse("t", "unit-test-other").is_err());
    }
}
