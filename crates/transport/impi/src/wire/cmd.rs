//! The 8-byte `IMPI_Cmd { Int4 cmd; Int4 len; }` that starts every startup message except
//! the bare authentication reply and key.

use super::be_u32;
use crate::error::{Error, Result};

/// Length of the command header.
pub const CMD_HEADER_LEN: usize = 8;

/// The five startup commands; the numbers are their ASCII names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Command {
    Auth,
    Impi,
    Coll,
    Done,
    Fini,
}

impl Command {
    pub const ALL: [Command; 5] = [
        Command::Auth,
        Command::Impi,
        Command::Coll,
        Command::Done,
        Command::Fini,
    ];

    /// The command word on the wire.
    pub fn raw(self) -> u32 {
        u32::from_be_bytes(*self.name())
    }

    /// The four ASCII letters of the command.
    pub fn name(self) -> &'static [u8; 4] {
        match self {
            Command::Auth => b"AUTH",
            Command::Impi => b"IMPI",
            Command::Coll => b"COLL",
            Command::Done => b"DONE",
            Command::Fini => b"FINI",
        }
    }

    pub fn from_raw(raw: u32) -> Result<Command> {
        Command::ALL
            .into_iter()
            .find(|c| c.raw() == raw)
            .ok_or(Error::UnknownCommand(raw))
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.name()))
    }
}

/// A view of a command header over bytes.
#[derive(Debug, Clone, Copy)]
pub struct CmdHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CmdHeader<T> {
    /// A view, or an error when the buffer is shorter than a header.
    pub fn new_checked(buffer: T) -> Result<CmdHeader<T>> {
        let got = buffer.as_ref().len();
        if got < CMD_HEADER_LEN {
            return Err(Error::Truncated {
                what: "IMPI command header",
                need: CMD_HEADER_LEN,
                got,
            });
        }
        Ok(CmdHeader { buffer })
    }

    pub fn cmd(&self) -> u32 {
        be_u32(self.buffer.as_ref(), 0).unwrap_or(0)
    }

    /// The payload length as sent (an `IMPI_Int4`, so possibly negative).
    pub fn payload_len(&self) -> i32 {
        be_u32(self.buffer.as_ref(), 4).unwrap_or(0) as i32
    }
}

/// A validated command header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdRepr {
    pub cmd: Command,
    pub len: u32,
}

impl CmdRepr {
    /// Validates the command word and the length against `max_len`.
    pub fn parse<T: AsRef<[u8]>>(view: &CmdHeader<T>, max_len: u32) -> Result<CmdRepr> {
        let cmd = Command::from_raw(view.cmd())?;
        let len = view.payload_len();
        if len < 0 {
            return Err(Error::OutOfRange {
                what: "IMPI command header len",
                value: len.into(),
                allowed: format!("0..={max_len}"),
            });
        }
        let len = len as u32;
        if len > max_len {
            return Err(Error::TooLong {
                what: "IMPI command header len",
                len: len.into(),
                max: max_len.into(),
            });
        }
        Ok(CmdRepr { cmd, len })
    }

    pub fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.cmd.raw().to_be_bytes());
        out.extend_from_slice(&self.len.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_words_are_the_ascii_names() {
        assert_eq!(Command::Auth.raw(), 0x4155_5448);
        assert_eq!(Command::Impi.raw(), 0x494D_5049);
        assert_eq!(Command::Coll.raw(), 0x434F_4C4C);
        assert_eq!(Command::Done.raw(), 0x444F_4E45);
        assert_eq!(Command::Fini.raw(), 0x4649_4E49);
    }

    #[test]
    fn header_roundtrip_and_rejections() {
        let mut b = Vec::new();
        CmdRepr {
            cmd: Command::Coll,
            len: 20,
        }
        .emit(&mut b);
        let v = CmdHeader::new_checked(&b[..]).unwrap();
        assert_eq!(
            CmdRepr::parse(&v, 100).unwrap(),
            CmdRepr {
                cmd: Command::Coll,
                len: 20
            }
        );
        assert!(matches!(
            CmdRepr::parse(&v, 19),
            Err(Error::TooLong { len: 20, .. })
        ));
        assert!(matches!(
            CmdHeader::new_checked(&b[..7]),
            Err(Error::Truncated {
                need: 8,
                got: 7,
                ..
            })
        ));
        let bad = [b'X', b'Y', b'Z', b'W', 0, 0, 0, 0];
        let e = CmdRepr::parse(&CmdHeader::new_checked(&bad[..]).unwrap(), 8).unwrap_err();
        assert_eq!(e, Error::UnknownCommand(0x5859_5A57));
        assert!(e.to_string().contains("'XYZW'"));
        let neg = [b'D', b'O', b'N', b'E', 0xff, 0xff, 0xff, 0xff];
        let e = CmdRepr::parse(&CmdHeader::new_checked(&neg[..]).unwrap(), 8).unwrap_err();
        assert!(matches!(e, Error::OutOfRange { value: -1, .. }));
    }
}
