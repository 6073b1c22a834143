//! An open file: the OS file, the view, the individual and shared file pointers, atomic
//! mode and the processes that opened it. Offsets given to and returned by these
//! functions are in etypes of the current view, as in the MPI calls; data moves between
//! `UserBuf`s and the file through the data representation and the view.

use crate::amode::{self, Amode};
use crate::collective::{self, agree, Config};
use crate::datarep::Datarep;
use crate::error::{FileClass, IoError, IoResult};
use crate::os::{self, Disk};
use crate::shared::SharedPointer;
use crate::team::{CommTeam, Team};
use crate::view::{Extent, View};
use crossmpi_core::comm::CommId;
use crossmpi_core::comm_ops;
use crossmpi_core::datatype::Datatype;
use crossmpi_core::error::ErrorClass;
use crossmpi_core::userbuf::UserBuf;
use std::fs::{File as OsFile, OpenOptions};
use std::path::PathBuf;

/// `MPI_SEEK_*` of the MPI-5.0 ABI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whence {
    Set,
    Cur,
    End,
}

impl Whence {
    pub fn parse(function: &str, v: i32) -> IoResult<Whence> {
        match v {
            403 => Ok(Whence::Set),
            401 => Ok(Whence::Cur),
            402 => Ok(Whence::End),
            _ => Err(IoError::core(
                ErrorClass::Arg,
                function,
                "whence",
                v,
                "not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END",
            )),
        }
    }
}

/// Which file pointer or offset an access uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum At {
    /// An explicit offset in etypes.
    Offset(u64),
    Individual,
    Shared,
}

/// The split collective begun on a file, until its `_end` call.
struct Split {
    function: &'static str,
    bytes: u64,
}

pub struct File {
    os: OsFile,
    pub path: PathBuf,
    pub amode: Amode,
    team: Box<dyn Team>,
    /// The private communicator the team runs on (freed at close), if any.
    comm: Option<CommId>,
    view: View,
    /// The individual file pointer, in etypes.
    position: u64,
    shared: SharedPointer,
    atomic: bool,
    split: Option<Split>,
    cfg: Config,
}

fn os_error(function: &str, what: &str, path: &std::path::Path, e: std::io::Error) -> IoError {
    IoError::os(function, what, &path.display().to_string(), &e)
}

impl File {
    /// `MPI_File_open` on a duplicate of the intracommunicator `comm` (so file
    /// collectives never interleave with the application's).
    pub fn open(function: &'static str, comm: CommId, path: &str, amode: i32) -> IoResult<File> {
        let dup = comm_ops::dup(function, comm)?;
        let team = match CommTeam::new(function, dup) {
            Ok(t) => t,
            Err(e) => {
                let _ = comm_ops::free(function, dup);
                return Err(e);
            }
        };
        File::open_with(function, Box::new(team), Some(dup), path, amode).inspect_err(|_| {
            let _ = comm_ops::free(function, dup);
        })
    }

    /// `MPI_File_open` for the processes of `team`. Rank 0 creates the file (so EXCL
    /// means once per job) before the others open it; all fail if any fails.
    pub fn open_with(
        function: &'static str,
        team: Box<dyn Team>,
        comm: Option<CommId>,
        path: &str,
        amode: i32,
    ) -> IoResult<File> {
        let all = team.allgather(function, &amode.to_le_bytes())?;
        if all.chunks_exact(4).any(|c| c != amode.to_le_bytes()) {
            return Err(IoError::file(
                FileClass::NotSame,
                function,
                "amode",
                amode,
                "the processes passed different access modes",
            ));
        }
        let mode = Amode::parse(function, amode)?;
        let path = PathBuf::from(path.strip_prefix("ufs:").unwrap_or(path));
        let open = |first: bool| {
            let mut o = OpenOptions::new();
            o.read(mode.readable()).write(mode.writable());
            if first && mode.has(amode::CREATE) {
                if mode.has(amode::EXCL) {
                    o.create_new(true);
                } else {
                    o.create(true);
                }
            }
            o.open(&path)
                .map_err(|e| os_error(function, "open", &path, e))
        };
        let first = if team.rank() == 0 {
            Some(open(true))
        } else {
            None
        };
        // Rank 0's outcome (its error class) first, so the others neither create the
        // file nor race it, and fail alike when it failed.
        let class0 = match &first {
            Some(Err(e)) => e.class.code(),
            _ => 0,
        };
        let mut flag = class0.to_le_bytes();
        team.bcast(function, 0, &mut flag)?;
        let mine = match (first, i32::from_le_bytes(flag)) {
            (Some(r), _) => r,
            (None, 0) => open(false),
            (None, c) => Err(IoError::file(
                FileClass::from_code(c).unwrap_or(FileClass::Io),
                function,
                "filename",
                path.display(),
                "rank 0 of the communicator could not open it",
            )),
        };
        let os = match mine {
            Ok(f) => {
                agree(function, team.as_ref(), Ok(()))?;
                f
            }
            Err(e) => {
                let _ = agree(function, team.as_ref(), Err(e.clone()));
                return Err(e);
            }
        };
        // Rank 0 names the shared pointer's file and gives its start.
        let mut meta = vec![0u8; 8 + 4096];
        if team.rank() == 0 {
            let size = if mode.has(amode::APPEND) {
                os.metadata().map(|m| m.len()).unwrap_or(0)
            } else {
                0
            };
            let name = SharedPointer::name_for(&path);
            let name = name.to_string_lossy();
            let n = name.len().min(4094);
            meta[..8].copy_from_slice(&size.to_le_bytes());
            meta[8..10].copy_from_slice(&(n as u16).to_le_bytes());
            meta[10..10 + n].copy_from_slice(&name.as_bytes()[..n]);
        }
        team.bcast(function, 0, &mut meta)?;
        let initial = u64::from_le_bytes(meta[..8].try_into().unwrap_or([0; 8]));
        let n = u16::from_le_bytes([meta[8], meta[9]]) as usize;
        let shared_path = PathBuf::from(String::from_utf8_lossy(&meta[10..10 + n]).into_owned());
        Ok(File {
            os,
            path,
            amode: mode,
            team,
            comm,
            view: View::bytes(),
            position: initial,
            shared: SharedPointer::new(shared_path, initial),
            atomic: false,
            split: None,
            cfg: Config::from_env(),
        })
    }

    /// `MPI_File_close`: collective; the last step removes the shared pointer's file and,
    /// with MPI_MODE_DELETE_ON_CLOSE, the file.
    pub fn close(mut self, function: &'static str) -> IoResult<()> {
        let r = self.team.barrier(function);
        if self.team.rank() == 0 {
            self.shared.remove();
            if self.amode.has(amode::DELETE_ON_CLOSE) {
                let _ = std::fs::remove_file(&self.path);
            }
        }
        let r = r.and_then(|_| self.team.barrier(function));
        if let Some(c) = self.comm.take() {
            comm_ops::free(function, c)?;
        }
        r
    }

    /// `MPI_File_delete`.
    pub fn delete(function: &str, path: &str) -> IoResult<()> {
        let path = path.strip_prefix("ufs:").unwrap_or(path);
        std::fs::remove_file(path).map_err(|e| IoError::os(function, "unlink", path, &e))
    }

    /// The communicator the file's collectives run on (for `MPI_File_get_group`).
    pub fn comm(&self) -> Option<CommId> {
        self.comm
    }

    pub fn team(&self) -> &dyn Team {
        self.team.as_ref()
    }

    pub fn view(&self) -> &View {
        &self.view
    }

    pub fn atomic(&self) -> bool {
        self.atomic
    }

    /// `MPI_File_set_atomicity` (collective).
    pub fn set_atomicity(&mut self, function: &'static str, flag: bool) -> IoResult<()> {
        self.same(function, "flag", flag as u64)?;
        self.atomic = flag;
        Ok(())
    }

    /// Checks that every process passed the same `value` for `arg` of a collective call.
    fn same(&self, function: &'static str, arg: &str, value: u64) -> IoResult<()> {
        let all = self.team.allgather(function, &value.to_le_bytes())?;
        if all.chunks_exact(8).any(|c| c != value.to_le_bytes()) {
            return Err(IoError::file(
                FileClass::NotSame,
                function,
                arg,
                value,
                "the processes passed different values",
            ));
        }
        Ok(())
    }

    /// `MPI_File_set_view` (collective): resets both file pointers to 0.
    pub fn set_view(
        &mut self,
        function: &'static str,
        disp: Option<u64>,
        etype: Datatype,
        filetype: Datatype,
        datarep: &str,
    ) -> IoResult<()> {
        let disp = match disp {
            Some(d) => d,
            None if self.amode.has(amode::SEQUENTIAL) => {
                let at = self.shared.update(function, |p| p)?;
                self.view.file_offset(at * self.view.etype_size())
            }
            None => {
                return Err(IoError::core(
                    ErrorClass::Arg,
                    function,
                    "disp",
                    "MPI_DISPLACEMENT_CURRENT",
                    "allowed only for files opened with MPI_MODE_SEQUENTIAL",
                ))
            }
        };
        let datarep = Datarep::parse(function, datarep)?;
        let view = View::new(function, disp, etype, filetype, datarep);
        agree(
            function,
            self.team.as_ref(),
            view.as_ref().map(|_| ()).map_err(|e| e.clone()),
        )?;
        self.view = view?;
        self.position = 0;
        self.reset_shared(function, 0)
    }

    /// Sets the shared pointer on behalf of all (collective calls).
    fn reset_shared(&mut self, function: &'static str, to: u64) -> IoResult<()> {
        self.team.barrier(function)?;
        let r = if self.team.rank() == 0 {
            self.shared.update(function, |_| to).map(|_| ())
        } else {
            Ok(())
        };
        agree(function, self.team.as_ref(), r)
    }

    fn check_access(&self, function: &str, write: bool, at: At) -> IoResult<()> {
        if write && !self.amode.writable() {
            return Err(IoError::file(
                FileClass::ReadOnly,
                function,
                "fh",
                self.path.display(),
                "the file was opened with MPI_MODE_RDONLY",
            ));
        }
        if !write && !self.amode.readable() {
            return Err(IoError::file(
                FileClass::Access,
                function,
                "fh",
                self.path.display(),
                "the file was opened with MPI_MODE_WRONLY",
            ));
        }
        if at != At::Shared && self.amode.has(amode::SEQUENTIAL) {
            return Err(IoError::file(
                FileClass::UnsupportedOperation,
                function,
                "fh",
                self.path.display(),
                "a file opened with MPI_MODE_SEQUENTIAL has only the shared file pointer",
            ));
        }
        Ok(())
    }

    /// Etypes in `bytes` file bytes, which must be whole etypes.
    fn etypes(&self, function: &str, bytes: u64) -> IoResult<u64> {
        let e = self.view.etype_size();
        if !bytes.is_multiple_of(e) {
            return Err(IoError::core(
                ErrorClass::Type,
                function,
                "datatype",
                format!("{bytes} bytes"),
                format!("the data must be whole etypes of {e} bytes"),
            ));
        }
        Ok(bytes / e)
    }

    /// The etype offset an independent access starts at, advancing the pointer it uses.
    fn claim(&mut self, function: &str, at: At, etypes: u64) -> IoResult<u64> {
        Ok(match at {
            At::Offset(o) => o,
            At::Individual => {
                let p = self.position;
                self.position += etypes;
                p
            }
            At::Shared => self.shared.update(function, |p| p + etypes)?,
        })
    }

    fn disk(&self) -> Disk<'_> {
        Disk {
            file: &self.os,
            atomic: self.atomic,
        }
    }

    /// The file bytes and etypes `buf` occupies, and where the access starts
    /// (`collective`: every process of the file calls it alike).
    fn place(
        &mut self,
        function: &'static str,
        at: At,
        buf: &UserBuf,
        collective: bool,
    ) -> IoResult<(Vec<Extent>, u64)> {
        let len = self.view.datarep.file_bytes(function, buf)?;
        let n = self.etypes(function, len)?;
        let start = if collective {
            self.collective_start(function, at, n)?
        } else {
            self.claim(function, at, n)?
        };
        Ok((self.view.extents(start * self.view.etype_size(), len), n))
    }

    /// A write, independent or collective (`_all`, `_at_all`, `_ordered`); returns the
    /// bytes of `buf` written.
    pub fn write(
        &mut self,
        function: &'static str,
        at: At,
        buf: &UserBuf,
        collective: bool,
    ) -> IoResult<u64> {
        self.check_access(function, true, at)?;
        let data = self.view.datarep.encode(function, buf);
        if collective && !self.view.datarep.is_native() {
            // A conversion that fails on one process must not leave the others waiting
            // in the exchange.
            let converted = data.as_ref().map(|_| ()).map_err(|e| e.clone());
            agree(function, self.team.as_ref(), converted)?;
        }
        let data = data?;
        let (extents, _) = self.place(function, at, buf, collective)?;
        if collective {
            collective::write(
                function,
                self.team.as_ref(),
                self.disk(),
                &self.cfg,
                &extents,
                &data,
            )?;
        } else {
            collective::write_extents(function, self.disk(), &extents, &data)?;
        }
        Ok(buf.bytes())
    }

    /// A read, independent or collective; returns the bytes of `buf` filled (less at the
    /// end of the file).
    pub fn read(
        &mut self,
        function: &'static str,
        at: At,
        buf: &UserBuf,
        collective: bool,
    ) -> IoResult<u64> {
        self.check_access(function, false, at)?;
        let rep = self.view.datarep.clone();
        let (extents, n) = self.place(function, at, buf, collective)?;
        let have = present(&extents, self.size(function)?);
        let len = rep.file_bytes(function, buf)? as usize;
        let direct = !collective && rep.is_native() && extents.len() == 1;
        // `len` counts file bytes, which only native data has as many of as memory.
        let dense = if direct { buf.dense_mut(0, len) } else { None };
        let got = match dense {
            Some(dst) => {
                collective::read_extents(function, self.disk(), &extents, dst)?;
                have
            }
            None => {
                let mut data = vec![0u8; len];
                if collective {
                    let team = self.team.as_ref();
                    collective::read(function, team, self.disk(), &self.cfg, &extents, &mut data)?;
                } else {
                    collective::read_extents(function, self.disk(), &extents, &mut data)?;
                }
                rep.decode(function, &data, have as usize, buf)?
            }
        };
        // An individual pointer advances by what was read, not by what was asked.
        if at == At::Individual {
            self.position -= n - have / self.view.etype_size();
        }
        Ok(got)
    }

    /// Where each process's part of a collective access starts. For `_ordered` calls
    /// the parts follow each other in rank order from the shared pointer, which rank 0
    /// advances by the total.
    fn collective_start(&mut self, function: &'static str, at: At, etypes: u64) -> IoResult<u64> {
        if at != At::Shared {
            return self.claim(function, at, etypes);
        }
        let all = self.team.allgather(function, &etypes.to_le_bytes())?;
        let counts: Vec<u64> = all
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let total: u64 = counts.iter().sum();
        let mut base = [0u8; 8];
        if self.team.rank() == 0 {
            // A failure here reaches everyone as an impossible base, then an error.
            let b = self
                .shared
                .update(function, |p| p + total)
                .unwrap_or(u64::MAX);
            base = b.to_le_bytes();
        }
        self.team.bcast(function, 0, &mut base)?;
        let base = u64::from_le_bytes(base);
        if base == u64::MAX {
            return Err(IoError::file(
                FileClass::Io,
                function,
                "fh",
                self.shared.path().display(),
                "rank 0 could not advance the shared file pointer",
            ));
        }
        Ok(base + counts[..self.team.rank()].iter().sum::<u64>())
    }

    /// The `_begin` of a split collective: runs the access, keeps its count for `_end`.
    pub fn begin_split(&mut self, function: &'static str, bytes: u64) -> IoResult<()> {
        if let Some(s) = &self.split {
            return Err(IoError::core(
                ErrorClass::Other,
                function,
                "fh",
                self.path.display(),
                format!(
                    "{} is still active on this file (one split collective at a time)",
                    s.function
                ),
            ));
        }
        self.split = Some(Split { function, bytes });
        Ok(())
    }

    /// Whether a split collective may begin (checked before its access runs).
    pub fn split_idle(&self, function: &str) -> IoResult<()> {
        match &self.split {
            Some(s) => Err(IoError::core(
                ErrorClass::Other,
                function,
                "fh",
                self.path.display(),
                format!(
                    "{} is still active on this file (one split collective at a time)",
                    s.function
                ),
            )),
            None => Ok(()),
        }
    }

    /// The `_end` of a split collective begun by `begin` (a `_begin` function name).
    pub fn end_split(&mut self, function: &str, begin: &str) -> IoResult<u64> {
        match self.split.take() {
            // The large-count `_begin_c` pairs with the same `_end`.
            Some(s) if s.function.trim_end_matches("_c") == begin => Ok(s.bytes),
            other => {
                let active = other.as_ref().map_or("none", |s| s.function);
                self.split = other;
                Err(IoError::core(
                    ErrorClass::Other,
                    function,
                    "fh",
                    self.path.display(),
                    format!("no {begin} is active (active split collective: {active})"),
                ))
            }
        }
    }

    /// `MPI_File_seek`.
    pub fn seek(&mut self, function: &str, offset: i64, whence: Whence) -> IoResult<()> {
        let base = match whence {
            Whence::Set => 0,
            Whence::Cur => self.position as i64,
            Whence::End => self.end_etypes(function)? as i64,
        };
        self.position = non_negative(function, base.saturating_add(offset))?;
        Ok(())
    }

    /// `MPI_File_seek_shared` (collective).
    pub fn seek_shared(
        &mut self,
        function: &'static str,
        offset: i64,
        whence: Whence,
    ) -> IoResult<()> {
        self.same(function, "offset", offset as u64)?;
        let base = match whence {
            Whence::Set => 0,
            Whence::Cur => self.shared.update(function, |p| p)? as i64,
            Whence::End => self.end_etypes(function)? as i64,
        };
        let to = non_negative(function, base.saturating_add(offset))?;
        self.reset_shared(function, to)
    }

    /// The end of the file in etypes of the view.
    fn end_etypes(&self, function: &str) -> IoResult<u64> {
        Ok(self.view.stream_before(self.size(function)?) / self.view.etype_size())
    }

    pub fn position(&self) -> u64 {
        self.position
    }

    pub fn position_shared(&mut self, function: &str) -> IoResult<u64> {
        self.shared.update(function, |p| p)
    }

    /// `MPI_File_get_byte_offset`.
    pub fn byte_offset(&self, offset: u64) -> u64 {
        self.view.file_offset(offset * self.view.etype_size())
    }

    pub fn size(&self, function: &str) -> IoResult<u64> {
        self.os
            .metadata()
            .map(|m| m.len())
            .map_err(|e| os_error(function, "fstat", &self.path, e))
    }

    /// `MPI_File_set_size` / `MPI_File_preallocate` (collective): rank 0 acts.
    pub fn resize(&mut self, function: &'static str, size: u64, preallocate: bool) -> IoResult<()> {
        self.same(function, "size", size)?;
        if !self.amode.writable() {
            return Err(IoError::file(
                FileClass::ReadOnly,
                function,
                "fh",
                self.path.display(),
                "the file was opened with MPI_MODE_RDONLY",
            ));
        }
        let r = if self.team.rank() == 0 {
            let done = if preallocate {
                os::preallocate(&self.os, size)
            } else {
                self.os.set_len(size)
            };
            done.map_err(|e| os_error(function, "resizing", &self.path, e))
        } else {
            Ok(())
        };
        agree(function, self.team.as_ref(), r)
    }

    /// `MPI_File_sync` (collective): every process flushes its writes to storage.
    pub fn sync(&mut self, function: &'static str) -> IoResult<()> {
        let r = if self.amode.writable() {
            self.os
                .sync_all()
                .map_err(|e| os_error(function, "fsync", &self.path, e))
        } else {
            Ok(())
        };
        agree(function, self.team.as_ref(), r)
    }
}

/// Bytes of the stream whose file extents lie before `size` (the data a read finds).
fn present(extents: &[Extent], size: u64) -> u64 {
    let mut have = 0;
    for &(off, len) in extents {
        if off + len <= size {
            have += len;
        } else {
            have += size.saturating_sub(off);
            break;
        }
    }
    have
}

fn non_negative(function: &str, v: i64) -> IoResult<u64> {
    u64::try_from(v).map_err(|_| {
        IoError::core(
            ErrorClass::Arg,
            function,
            "offset",
            v,
            "the resulting position would be before the start of the view",
        )
    })
}
