//! The 128-byte `IMPI_Packet` header that precedes every packet between hosts.
//!
//! Field offsets follow natural alignment of the C struct (no padding is needed):
//! see docs/impi.md. Only DATA and DATASYNC carry data; LAM/MPI writes `pk_len = 128`
//! on control packets without sending any data, so `pk_len` is ignored on them.

use super::addr::HostAddr;
use super::{be_u32, be_u64, field};
use crate::error::{Error, Result};

/// Size of the packet header.
pub const HEADER_LEN: usize = 128;

mod offset {
    pub const TYPE: usize = 0;
    pub const LEN: usize = 4;
    pub const SRC: usize = 8;
    pub const DEST: usize = 32;
    pub const SRQID: usize = 56;
    pub const DRQID: usize = 64;
    pub const MSGLEN: usize = 72;
    pub const LSRANK: usize = 80;
    pub const TAG: usize = 84;
    pub const CID: usize = 88;
    pub const SEQNUM: usize = 96;
    pub const COUNT: usize = 104;
    pub const DTYPE: usize = 112;
    pub const RESERVED: usize = 120;
}

/// `IMPI_Proc`: a process's wire identity (24 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Proc {
    pub hostid: HostAddr,
    pub pid: i64,
}

impl Proc {
    pub const LEN: usize = 24;

    /// The identity LAM/MPI puts in both ends of a FINI packet.
    pub const FINI: Proc = Proc {
        hostid: HostAddr([0; 16]),
        pid: -1,
    };

    fn read(buf: &[u8], at: usize) -> Result<Proc> {
        Ok(Proc {
            hostid: HostAddr(field::<16>(buf, at)?),
            pid: be_u64(buf, at + 16)? as i64,
        })
    }

    fn write(&self, buf: &mut [u8], at: usize) {
        if let Some(dst) = buf.get_mut(at..at + Proc::LEN) {
            dst[..16].copy_from_slice(&self.hostid.0);
            dst[16..].copy_from_slice(&self.pid.to_be_bytes());
        }
    }
}

/// The eight packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketType {
    Data,
    DataSync,
    ProtoAck,
    SyncAck,
    Cancel,
    CancelYes,
    CancelNo,
    Fini,
}

impl PacketType {
    pub const ALL: [PacketType; 8] = [
        PacketType::Data,
        PacketType::DataSync,
        PacketType::ProtoAck,
        PacketType::SyncAck,
        PacketType::Cancel,
        PacketType::CancelYes,
        PacketType::CancelNo,
        PacketType::Fini,
    ];

    pub fn raw(self) -> u32 {
        PacketType::ALL.iter().position(|&t| t == self).unwrap_or(0) as u32
    }

    pub fn from_raw(raw: u32) -> Result<PacketType> {
        PacketType::ALL
            .get(raw as usize)
            .copied()
            .ok_or(Error::UnknownPacketType(raw))
    }

    /// True for the two types that carry user data after the header.
    pub fn carries_data(self) -> bool {
        matches!(self, PacketType::Data | PacketType::DataSync)
    }

    /// True for the types that count against the flow-control window (LAM/MPI counts
    /// everything except PROTOACK and FINI).
    pub fn counts_for_flow_control(self) -> bool {
        !matches!(self, PacketType::ProtoAck | PacketType::Fini)
    }
}

/// A view of a packet header over bytes; readable and, over mutable bytes, rewritable in
/// place (a relay rewrites `pk_src`/`pk_dest` this way).
#[derive(Debug, Clone, Copy)]
pub struct PacketHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> PacketHeader<T> {
    /// A view, or an error when the buffer is shorter than 128 bytes.
    pub fn new_checked(buffer: T) -> Result<PacketHeader<T>> {
        let got = buffer.as_ref().len();
        if got < HEADER_LEN {
            return Err(Error::Truncated {
                what: "IMPI packet header",
                need: HEADER_LEN,
                got,
            });
        }
        Ok(PacketHeader { buffer })
    }

    fn u32_at(&self, at: usize) -> u32 {
        be_u32(self.buffer.as_ref(), at).unwrap_or(0)
    }

    fn u64_at(&self, at: usize) -> u64 {
        be_u64(self.buffer.as_ref(), at).unwrap_or(0)
    }

    pub fn pk_type(&self) -> u32 {
        self.u32_at(offset::TYPE)
    }
    pub fn pk_len(&self) -> u32 {
        self.u32_at(offset::LEN)
    }
    pub fn pk_src(&self) -> Proc {
        Proc::read(self.buffer.as_ref(), offset::SRC).unwrap_or_default()
    }
    pub fn pk_dest(&self) -> Proc {
        Proc::read(self.buffer.as_ref(), offset::DEST).unwrap_or_default()
    }
    pub fn pk_srqid(&self) -> u64 {
        self.u64_at(offset::SRQID)
    }
    pub fn pk_drqid(&self) -> u64 {
        self.u64_at(offset::DRQID)
    }
    pub fn pk_msglen(&self) -> u64 {
        self.u64_at(offset::MSGLEN)
    }
    pub fn pk_lsrank(&self) -> i32 {
        self.u32_at(offset::LSRANK) as i32
    }
    pub fn pk_tag(&self) -> i32 {
        self.u32_at(offset::TAG) as i32
    }
    pub fn pk_cid(&self) -> u64 {
        self.u64_at(offset::CID)
    }
    pub fn pk_seqnum(&self) -> u64 {
        self.u64_at(offset::SEQNUM)
    }
    pub fn pk_count(&self) -> i64 {
        self.u64_at(offset::COUNT) as i64
    }
    pub fn pk_dtype(&self) -> u64 {
        self.u64_at(offset::DTYPE)
    }
    pub fn pk_reserved(&self) -> u64 {
        self.u64_at(offset::RESERVED)
    }

    /// The number of data bytes that follow this header: `pk_len` for DATA and
    /// DATASYNC, 0 for every other type whatever its `pk_len` says; None for an unknown
    /// type (the stream cannot be followed past it).
    pub fn data_len(&self) -> Option<u32> {
        let ty = PacketType::from_raw(self.pk_type()).ok()?;
        Some(if ty.carries_data() { self.pk_len() } else { 0 })
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PacketHeader<T> {
    pub fn set_pk_src(&mut self, proc_: Proc) {
        proc_.write(self.buffer.as_mut(), offset::SRC);
    }
    pub fn set_pk_dest(&mut self, proc_: Proc) {
        proc_.write(self.buffer.as_mut(), offset::DEST);
    }
}

/// A validated packet header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketRepr {
    pub ty: PacketType,
    /// Data bytes after the header; 0 on control packets (see the module docs).
    pub data_len: u32,
    pub src: Proc,
    pub dest: Proc,
    pub srqid: u64,
    pub drqid: u64,
    pub msglen: u64,
    pub lsrank: i32,
    pub tag: i32,
    pub cid: u64,
    pub seqnum: u64,
    pub count: i64,
    pub dtype: u64,
    pub reserved: u64,
}

impl PacketRepr {
    /// A control packet (no data) of type `ty` with every other field zero.
    pub fn control(ty: PacketType, src: Proc, dest: Proc) -> PacketRepr {
        PacketRepr {
            ty,
            data_len: 0,
            src,
            dest,
            srqid: 0,
            drqid: 0,
            msglen: 0,
            lsrank: 0,
            tag: 0,
            cid: 0,
            seqnum: 0,
            count: 0,
            dtype: 0,
            reserved: 0,
        }
    }

    /// Parses and validates a header. `max_data` bounds `pk_len` on data packets (the
    /// negotiated maximum data length, or a memory bound); a data packet must not claim
    /// more data than its message length.
    pub fn parse<T: AsRef<[u8]>>(view: &PacketHeader<T>, max_data: u32) -> Result<PacketRepr> {
        let ty = PacketType::from_raw(view.pk_type())?;
        let data_len = if ty.carries_data() { view.pk_len() } else { 0 };
        if data_len > max_data {
            return Err(Error::TooLong {
                what: "IMPI packet header pk_len",
                len: data_len.into(),
                max: max_data.into(),
            });
        }
        if u64::from(data_len) > view.pk_msglen() {
            return Err(Error::Invalid {
                what: "IMPI packet header pk_len",
                reason: format!(
                    "{data_len} data bytes exceed the message length pk_msglen {}",
                    view.pk_msglen()
                ),
            });
        }
        Ok(PacketRepr {
            ty,
            data_len,
            src: view.pk_src(),
            dest: view.pk_dest(),
            srqid: view.pk_srqid(),
            drqid: view.pk_drqid(),
            msglen: view.pk_msglen(),
            lsrank: view.pk_lsrank(),
            tag: view.pk_tag(),
            cid: view.pk_cid(),
            seqnum: view.pk_seqnum(),
            count: view.pk_count(),
            dtype: view.pk_dtype(),
            reserved: view.pk_reserved(),
        })
    }

    /// The header bytes; control packets carry `pk_len = 128` as LAM/MPI sends them.
    pub fn emit(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        let pk_len = if self.ty.carries_data() {
            self.data_len
        } else {
            HEADER_LEN as u32
        };
        let mut put = |at: usize, bytes: &[u8]| b[at..at + bytes.len()].copy_from_slice(bytes);
        put(offset::TYPE, &self.ty.raw().to_be_bytes());
        put(offset::LEN, &pk_len.to_be_bytes());
        put(offset::SRQID, &self.srqid.to_be_bytes());
        put(offset::DRQID, &self.drqid.to_be_bytes());
        put(offset::MSGLEN, &self.msglen.to_be_bytes());
        put(offset::LSRANK, &self.lsrank.to_be_bytes());
        put(offset::TAG, &self.tag.to_be_bytes());
        put(offset::CID, &self.cid.to_be_bytes());
        put(offset::SEQNUM, &self.seqnum.to_be_bytes());
        put(offset::COUNT, &self.count.to_be_bytes());
        put(offset::DTYPE, &self.dtype.to_be_bytes());
        put(offset::RESERVED, &self.reserved.to_be_bytes());
        self.src.write(&mut b, offset::SRC);
        self.dest.write(&mut b, offset::DEST);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_(last: u8, pid: i64) -> Proc {
        let mut id = [0u8; 16];
        id[12..].copy_from_slice(&[10, 0, 0, last]);
        Proc {
            hostid: HostAddr(id),
            pid,
        }
    }

    fn sample() -> PacketRepr {
        PacketRepr {
            ty: PacketType::DataSync,
            data_len: 1000,
            src: proc_(1, 4242),
            dest: proc_(2, -7),
            srqid: 0x1111_2222_3333_4444,
            drqid: 5,
            msglen: 1 << 20,
            lsrank: 3,
            tag: -9,
            cid: 1,
            seqnum: 77,
            count: 250,
            dtype: 0xdead_beef,
            reserved: 0,
        }
    }

    #[test]
    fn every_field_at_its_offset() {
        let b = sample().emit();
        assert_eq!(&b[0..4], &1u32.to_be_bytes());
        assert_eq!(&b[4..8], &1000u32.to_be_bytes());
        assert_eq!(&b[8 + 12..8 + 16], &[10, 0, 0, 1]);
        assert_eq!(&b[24..32], &4242u64.to_be_bytes());
        assert_eq!(&b[32 + 12..32 + 16], &[10, 0, 0, 2]);
        assert_eq!(&b[48..56], &(-7i64).to_be_bytes());
        assert_eq!(&b[56..64], &0x1111_2222_3333_4444u64.to_be_bytes());
        assert_eq!(&b[64..72], &5u64.to_be_bytes());
        assert_eq!(&b[72..80], &(1u64 << 20).to_be_bytes());
        assert_eq!(&b[80..84], &3i32.to_be_bytes());
        assert_eq!(&b[84..88], &(-9i32).to_be_bytes());
        assert_eq!(&b[88..96], &1u64.to_be_bytes());
        assert_eq!(&b[96..104], &77u64.to_be_bytes());
        assert_eq!(&b[104..112], &250i64.to_be_bytes());
        assert_eq!(&b[112..120], &0xdead_beefu64.to_be_bytes());
        let view = PacketHeader::new_checked(&b[..]).unwrap();
        assert_eq!(PacketRepr::parse(&view, 4096).unwrap(), sample());
    }

    #[test]
    fn control_packets_ignore_pk_len() {
        let mut r = PacketRepr::control(PacketType::SyncAck, proc_(2, 1), proc_(1, 2));
        r.srqid = 9;
        let mut b = r.emit();
        assert_eq!(
            &b[4..8],
            &128u32.to_be_bytes(),
            "LAM's pk_len on control packets"
        );
        let view = PacketHeader::new_checked(&b[..]).unwrap();
        assert_eq!(view.data_len(), Some(0));
        assert_eq!(PacketRepr::parse(&view, 16).unwrap(), r);
        b[4..8].copy_from_slice(&0u32.to_be_bytes());
        let view = PacketHeader::new_checked(&b[..]).unwrap();
        assert_eq!(PacketRepr::parse(&view, 16).unwrap(), r);
    }

    #[test]
    fn rejections() {
        let b = sample().emit();
        assert!(matches!(
            PacketHeader::new_checked(&b[..127]),
            Err(Error::Truncated { need: 128, .. })
        ));
        let view = PacketHeader::new_checked(&b[..]).unwrap();
        assert!(matches!(
            PacketRepr::parse(&view, 999),
            Err(Error::TooLong { len: 1000, .. })
        ));
        let mut bad = b;
        bad[3] = 8;
        let view = PacketHeader::new_checked(&bad[..]).unwrap();
        assert_eq!(view.data_len(), None);
        assert_eq!(
            PacketRepr::parse(&view, 4096),
            Err(Error::UnknownPacketType(8))
        );
        let mut r = sample();
        r.msglen = 10;
        let b = r.emit();
        let e = PacketRepr::parse(&PacketHeader::new_checked(&b[..]).unwrap(), 4096);
        assert!(matches!(e, Err(Error::Invalid { .. })));
    }

    #[test]
    fn rewrite_src_and_dest_in_place() {
        let mut b = sample().emit();
        let mut view = PacketHeader::new_checked(&mut b[..]).unwrap();
        view.set_pk_src(proc_(9, 1));
        view.set_pk_dest(proc_(8, 2));
        let r = PacketRepr::parse(&view, 4096).unwrap();
        assert_eq!(r.src, proc_(9, 1));
        assert_eq!(r.dest, proc_(8, 2));
        let mut want = sample();
        want.src = r.src;
        want.dest = r.dest;
        assert_eq!(r, want, "no other field changed");
    }
}
