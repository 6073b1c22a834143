//! Data representations: `native` (and its alias `internal`: the memory bytes as they
//! are) and `external32` (big-endian, the standard's fixed sizes, through the datatype
//! engine). Conversion happens between the user buffer and a contiguous stream; the
//! stream is what views place in the file.

use crate::error::{type_error, FileClass, IoError, IoResult};
use crossmpi_core::datatype::Datatype;
use crossmpi_core::userbuf::UserBuf;
use std::borrow::Cow;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Datarep {
    Native,
    Internal,
    External32,
}

impl Datarep {
    pub fn parse(function: &str, name: &str) -> IoResult<Datarep> {
        match name {
            "native" => Ok(Datarep::Native),
            "internal" => Ok(Datarep::Internal),
            "external32" => Ok(Datarep::External32),
            _ => Err(IoError::file(
                FileClass::UnsupportedDatarep,
                function,
                "datarep",
                format!("\"{name}\""),
                "crossmpi knows native, internal and external32",
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
        }
    }

    fn external(self) -> bool {
        self == Datarep::External32
    }

    /// Views place file bytes by the filetype's typemap as built in memory, so in
    /// external32 the etype and filetype must have the same size in both forms.
    pub fn check_view_type(self, function: &str, arg: &str, t: &Datatype) -> IoResult<()> {
        if self.external() && t.external32_size(1) != t.size() {
            return Err(IoError::file(
                FileClass::UnsupportedDatarep,
                function,
                arg,
                format!("{t:?}"),
                format!(
                    "its external32 size {} differs from its native size {}; build views of types of equal sizes (int, float, double, byte)",
                    t.external32_size(1),
                    t.size()
                ),
            ));
        }
        Ok(())
    }

    /// Bytes `buf` occupies in the file.
    pub fn file_bytes(self, buf: &UserBuf) -> u64 {
        if self.external() {
            buf.dtype.external32_size(buf.count)
        } else {
            buf.bytes()
        }
    }

    /// The file bytes of `buf`: its own memory when it is dense and native.
    pub fn encode<'a>(self, function: &str, buf: &'a UserBuf) -> IoResult<Cow<'a, [u8]>> {
        let len = buf.bytes() as usize;
        if self.external() {
            let mut out = vec![0u8; self.file_bytes(buf) as usize];
            let (mem, origin) = buf.read();
            buf.dtype
                .pack_external32(mem, origin, buf.count, &mut out)
                .map_err(|e| type_error(function, e))?;
            return Ok(Cow::Owned(out));
        }
        if let Some(dense) = buf.dense(0, len) {
            return Ok(Cow::Borrowed(dense));
        }
        let mut out = vec![0u8; len];
        buf.pack_into(0, &mut out);
        Ok(Cow::Owned(out))
    }

    /// Stores the first `have` file bytes of `data` into `buf`; returns the native bytes
    /// stored (whole basic elements in external32).
    pub fn decode(self, data: &[u8], have: usize, buf: &UserBuf) -> u64 {
        let data = &data[..have];
        if self.external() {
            let (mem, origin) = buf.write();
            return buf
                .dtype
                .unpack_external32_prefix(data, mem, origin, buf.count);
        }
        buf.unpack_from(0, data);
        have as u64
    }
}
