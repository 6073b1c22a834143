//! File views: the data stream of a process (what its reads and writes see, counted in
//! etypes) mapped onto file bytes by the filetype's runs, tiled from the displacement
//! (`tile k` starts at `disp + k * extent`).

use crate::datarep::Datarep;
use crate::error::{IoError, IoResult};
use crate::flatten;
use crossmpi_core::datatype::{Basic, Datatype};
use crossmpi_core::error::ErrorClass;

/// A file extent: (file offset, length).
pub type Extent = (u64, u64);

#[derive(Clone, Debug)]
pub struct View {
    pub disp: u64,
    pub etype: Datatype,
    pub filetype: Datatype,
    pub datarep: Datarep,
    /// Bytes of one etype in the file.
    etype_size: u64,
    /// Runs of one tile relative to the tile's start, increasing and disjoint.
    runs: Vec<Extent>,
    /// Stream offset of each run, and last the bytes of one tile.
    starts: Vec<u64>,
    extent: u64,
}

impl View {
    /// The view every file starts with: bytes, from offset 0, native.
    pub fn bytes() -> View {
        let byte = Datatype::basic(Basic::Byte);
        View {
            disp: 0,
            etype: byte.clone(),
            filetype: byte,
            datarep: Datarep::Native,
            etype_size: 1,
            runs: vec![(0, 1)],
            starts: vec![0, 1],
            extent: 1,
        }
    }

    /// `MPI_File_set_view`'s checks: the filetype holds whole etypes, its typemap is
    /// non-negative and increasing (the standard's rule for filetypes), and a tile ends
    /// before the next begins. The etype and filetype place file bytes in their file
    /// forms (`Datarep::file_type`: the representation's sizes of the basic types).
    pub fn new(
        function: &str,
        disp: u64,
        etype: Datatype,
        filetype: Datatype,
        datarep: Datarep,
    ) -> IoResult<View> {
        let bad = |arg: &str, t: &Datatype, why: String| {
            IoError::core(ErrorClass::Type, function, arg, format!("{t:?}"), why)
        };
        let file_etype = datarep.file_type(function, &etype)?;
        let file_filetype = datarep.file_type(function, &filetype)?;
        let etype_size = file_etype.size();
        if etype_size == 0 {
            return Err(bad("etype", &etype, "an etype must hold data".into()));
        }
        if file_filetype.size() == 0 || !file_filetype.size().is_multiple_of(etype_size) {
            return Err(bad(
                "filetype",
                &filetype,
                format!(
                    "its size must be a positive multiple of the etype's {etype_size} bytes in the file"
                ),
            ));
        }
        let raw = flatten::runs(function, &file_filetype)?;
        let mut runs = Vec::with_capacity(raw.len());
        let mut end = i64::MIN;
        for &(d, len) in &raw {
            if d < end || (disp as i128 + d as i128) < 0 {
                return Err(bad(
                    "filetype",
                    &filetype,
                    format!(
                        "displacements must be non-negative and increasing (a piece at {d} follows one ending at {end})"
                    ),
                ));
            }
            end = d + len as i64;
            runs.push((d as u64, len));
        }
        let extent = file_filetype.extent();
        let first = raw.first().map_or(0, |r| r.0);
        if extent <= 0 || end - first > extent {
            return Err(bad(
                "filetype",
                &filetype,
                format!(
                    "its data (bytes {first} to {end}) must fit its extent {extent} so that tiles do not overlap"
                ),
            ));
        }
        let mut starts = Vec::with_capacity(runs.len() + 1);
        let mut total = 0;
        for r in &runs {
            starts.push(total);
            total += r.1;
        }
        starts.push(total);
        Ok(View {
            disp,
            etype,
            filetype,
            datarep,
            etype_size,
            runs,
            starts,
            extent: extent as u64,
        })
    }

    /// Bytes of one etype in the file.
    pub fn etype_size(&self) -> u64 {
        self.etype_size
    }

    fn tile_size(&self) -> u64 {
        self.starts[self.starts.len() - 1]
    }

    /// Whether the view is one dense run of file bytes from `disp`.
    fn dense(&self) -> bool {
        self.runs.len() == 1 && self.runs[0] == (0, self.extent)
    }

    /// The file byte holding stream byte `pos` (`MPI_File_get_byte_offset` at etype
    /// boundaries).
    pub fn file_offset(&self, pos: u64) -> u64 {
        if self.dense() {
            return self.disp + pos;
        }
        let (k, within) = (pos / self.tile_size(), pos % self.tile_size());
        let i = self.starts.partition_point(|&s| s <= within) - 1;
        self.disp + k * self.extent + self.runs[i].0 + (within - self.starts[i])
    }

    /// Stream bytes that lie in the file before byte `size` (where `MPI_SEEK_END` and an
    /// appending pointer start).
    pub fn stream_before(&self, size: u64) -> u64 {
        if size <= self.disp {
            return 0;
        }
        let rel = size - self.disp;
        if self.dense() {
            return rel;
        }
        let (k, within) = (rel / self.extent, rel % self.extent);
        let partial: u64 = self
            .runs
            .iter()
            .map(|&(d, l)| within.saturating_sub(d).min(l))
            .sum();
        k * self.tile_size() + partial
    }

    /// The file extents of stream bytes `[start, start + len)`, in stream order (which
    /// is file order), adjacent extents merged.
    pub fn extents(&self, start: u64, len: u64) -> Vec<Extent> {
        let mut out: Vec<Extent> = Vec::new();
        if len == 0 {
            return out;
        }
        if self.dense() {
            out.push((self.disp + start, len));
            return out;
        }
        let tile = self.tile_size();
        let (mut k, within) = (start / tile, start % tile);
        let mut i = self.starts.partition_point(|&s| s <= within) - 1;
        let mut skip = within - self.starts[i];
        let mut left = len;
        while left > 0 {
            let (d, l) = self.runs[i];
            let take = (l - skip).min(left);
            let at = self.disp + k * self.extent + d + skip;
            match out.last_mut() {
                Some(last) if last.0 + last.1 == at => last.1 += take,
                _ => out.push((at, take)),
            }
            left -= take;
            skip = 0;
            i += 1;
            if i == self.runs.len() {
                i = 0;
                k += 1;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int() -> Datatype {
        Datatype::basic(Basic::Int)
    }

    #[test]
    fn a_vector_view_tiles_from_the_displacement() {
        // Two ints of every five, from byte 100.
        let ft = Datatype::vector(1, 2, 5, &int()).unwrap();
        let ft = Datatype::resized(&ft, 0, 20).unwrap();
        let v = View::new("t", 100, int(), ft, Datarep::Native).unwrap();
        assert_eq!(v.extents(0, 8), vec![(100, 8)]);
        assert_eq!(v.extents(4, 12), vec![(104, 4), (120, 8)]);
        assert_eq!(v.file_offset(8), 120);
        assert_eq!(v.stream_before(100), 0);
        assert_eq!(v.stream_before(106), 6);
        assert_eq!(v.stream_before(125), 13);
    }

    #[test]
    fn dense_views_map_straight() {
        let v = View::bytes();
        assert_eq!(v.extents(10, 1 << 30), vec![(10, 1 << 30)]);
        let v = View::new("t", 7, int(), int(), Datarep::Native).unwrap();
        assert_eq!(v.extents(4, 8), vec![(11, 8)]);
    }

    #[test]
    fn external32_views_place_bytes_by_file_sizes() {
        // Every other long: 4-byte longs 8 bytes apart in the file, tiles every 12.
        let long = Datatype::basic(Basic::Long);
        let ft = Datatype::vector(2, 1, 2, &long).unwrap();
        let v = View::new("t", 100, long, ft, Datarep::External32).unwrap();
        assert_eq!(v.etype_size(), 4);
        assert_eq!(v.extents(0, 16), vec![(100, 4), (108, 8), (120, 4)]);
        assert_eq!(v.file_offset(12), 120);
    }

    #[test]
    fn bad_filetypes_are_refused() {
        let two = Datatype::contiguous(3, &Datatype::basic(Basic::Short)).unwrap();
        let e = View::new("MPI_File_set_view", 0, int(), two, Datarep::Native).unwrap_err();
        assert!(e.message.contains("MPI_File_set_view") && e.message.contains("filetype"));
        let back = Datatype::hindexed(&[1, 1], &[8, 0], &int()).unwrap();
        assert!(View::new("t", 0, int(), back, Datarep::Native).is_err());
    }
}
