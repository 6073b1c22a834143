//! COLL labels: their numbers, what one client contributes under each, and the order
//! LAM/MPI sends them in.

use crate::error::{Error, Result};

/// Every label a client submits (numbers from LAM/MPI's `impi-defs.h`, equal to the draft).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    CVersion,
    CNhosts,
    CNprocs,
    CDatalen,
    CTagub,
    CCollXsize,
    CCollMaxlinear,
    HIpv6,
    HPort,
    HNprocs,
    HAckmark,
    HHiwater,
    PIpv6,
    PPid,
}

/// How many elements one client contributes under a label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// Exactly one element.
    One,
    /// One or more elements (the version list).
    AtLeastOne,
    /// One element per host of the client (C_NHOSTS).
    PerHost,
    /// One element per process of the client (C_NPROCS).
    PerProc,
}

impl Label {
    /// Every label, in the order LAM/MPI submits them (one at a time, awaiting each
    /// reply). C_NHOSTS precedes the H_ labels and C_NPROCS the P_ labels, because a
    /// client splits those replies with them.
    pub const LAM_ORDER: [Label; 14] = [
        Label::CVersion,
        Label::CNhosts,
        Label::CNprocs,
        Label::CDatalen,
        Label::CTagub,
        Label::CCollXsize,
        Label::CCollMaxlinear,
        Label::HIpv6,
        Label::HPort,
        Label::HNprocs,
        Label::HAckmark,
        Label::HHiwater,
        Label::PIpv6,
        Label::PPid,
    ];

    pub fn raw(self) -> u32 {
        match self {
            Label::CVersion => 0x1000,
            Label::CNhosts => 0x1100,
            Label::CNprocs => 0x1200,
            Label::CDatalen => 0x1300,
            Label::CTagub => 0x1400,
            Label::CCollXsize => 0x1500,
            Label::CCollMaxlinear => 0x1600,
            Label::HIpv6 => 0x2000,
            Label::HPort => 0x2100,
            Label::HNprocs => 0x2200,
            Label::HAckmark => 0x2300,
            Label::HHiwater => 0x2400,
            Label::PIpv6 => 0x3000,
            Label::PPid => 0x3100,
        }
    }

    /// The label of a raw number; `IMPI_NO_LABEL` (0) and unknown numbers are errors.
    pub fn from_raw(raw: u32) -> Result<Label> {
        Label::LAM_ORDER
            .into_iter()
            .find(|l| l.raw() == raw)
            .ok_or(Error::UnknownLabel(raw))
    }

    /// The name used in the IMPI documents.
    pub fn name(self) -> &'static str {
        match self {
            Label::CVersion => "IMPI_C_VERSION",
            Label::CNhosts => "IMPI_C_NHOSTS",
            Label::CNprocs => "IMPI_C_NPROCS",
            Label::CDatalen => "IMPI_C_DATALEN",
            Label::CTagub => "IMPI_C_TAGUB",
            Label::CCollXsize => "IMPI_C_COLL_XSIZE",
            Label::CCollMaxlinear => "IMPI_C_COLL_MAXLINEAR",
            Label::HIpv6 => "IMPI_H_IPV6",
            Label::HPort => "IMPI_H_PORT",
            Label::HNprocs => "IMPI_H_NPROCS",
            Label::HAckmark => "IMPI_H_ACKMARK",
            Label::HHiwater => "IMPI_H_HIWATER",
            Label::PIpv6 => "IMPI_P_IPV6",
            Label::PPid => "IMPI_P_PID",
        }
    }

    pub fn extent(self) -> Extent {
        match self {
            Label::CVersion => Extent::AtLeastOne,
            Label::CNhosts
            | Label::CNprocs
            | Label::CDatalen
            | Label::CTagub
            | Label::CCollXsize
            | Label::CCollMaxlinear => Extent::One,
            Label::HIpv6 | Label::HPort | Label::HNprocs | Label::HAckmark | Label::HHiwater => {
                Extent::PerHost
            }
            Label::PIpv6 | Label::PPid => Extent::PerProc,
        }
    }

    /// The accepted element sizes in bytes, the encoded one first. P_PID is 8 bytes in
    /// LAM/MPI and MetaMPICH but 4 in the draft: both decode.
    pub fn element_sizes(self) -> &'static [usize] {
        match self {
            Label::CVersion => &[8],
            Label::HIpv6 | Label::PIpv6 => &[16],
            Label::PPid => &[8, 4],
            _ => &[4],
        }
    }

    /// Checks the length of one client's contribution. `count` is the client's number of
    /// hosts (PerHost) or procs (PerProc) when known; without it only divisibility is
    /// checked. Returns the element size used.
    pub fn check_contribution(self, len: usize, count: Option<u32>) -> Result<usize> {
        let sizes = self.element_sizes();
        let fits = |size: usize| match (self.extent(), count) {
            (Extent::One, _) => len == size,
            (Extent::AtLeastOne, _) => len >= size && len.is_multiple_of(size),
            (_, Some(n)) => n > 0 && Some(len) == (n as usize).checked_mul(size),
            (_, None) => len >= size && len.is_multiple_of(size),
        };
        sizes
            .iter()
            .copied()
            .find(|&s| fits(s))
            .ok_or_else(|| Error::BadLength {
                what: self.name(),
                len: len as u64,
                expected: self.describe_len(count),
            })
    }

    fn describe_len(self, count: Option<u32>) -> String {
        let sizes: Vec<String> = self.element_sizes().iter().map(|s| s.to_string()).collect();
        let sizes = sizes.join(" or ");
        match (self.extent(), count) {
            (Extent::One, _) => format!("{sizes} bytes"),
            (Extent::AtLeastOne, _) => format!("a non-zero multiple of {sizes} bytes"),
            (Extent::PerHost, Some(n)) => format!("{n} hosts x {sizes} bytes"),
            (Extent::PerProc, Some(n)) => format!("{n} procs x {sizes} bytes"),
            (_, None) => format!("a non-zero multiple of {sizes} bytes"),
        }
    }
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (0x{:04x})", self.name(), self.raw())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_numbers_roundtrip_and_unknown_rejected() {
        for l in Label::LAM_ORDER {
            assert_eq!(Label::from_raw(l.raw()).unwrap(), l);
        }
        assert_eq!(Label::from_raw(0), Err(Error::UnknownLabel(0)));
        assert_eq!(Label::from_raw(0x1700), Err(Error::UnknownLabel(0x1700)));
        assert_eq!(Label::CNhosts.raw(), 0x1100);
        assert_eq!(Label::PPid.raw(), 0x3100);
    }

    #[test]
    fn contribution_lengths() {
        assert_eq!(Label::CNhosts.check_contribution(4, None), Ok(4));
        assert!(Label::CNhosts.check_contribution(8, None).is_err());
        assert_eq!(Label::CVersion.check_contribution(16, None), Ok(8));
        assert!(Label::CVersion.check_contribution(0, None).is_err());
        assert_eq!(Label::HIpv6.check_contribution(48, Some(3)), Ok(16));
        let e = Label::HIpv6.check_contribution(32, Some(3)).unwrap_err();
        assert!(e.to_string().contains("3 hosts x 16 bytes"), "{e}");
        assert_eq!(Label::PPid.check_contribution(16, Some(2)), Ok(8));
        assert_eq!(Label::PPid.check_contribution(8, Some(2)), Ok(4));
        assert!(Label::PPid.check_contribution(12, Some(2)).is_err());
        assert!(Label::HPort.check_contribution(0, Some(0)).is_err());
    }
}
