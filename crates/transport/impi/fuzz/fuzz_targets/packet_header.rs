//! The 128-byte packet header: the view never panics, a parsed header re-emits to bytes
//! that parse the same, in-place rewriting of pk_src/pk_dest touches nothing else, and
//! the rendezvous receiver accepts or rejects the header without panicking.
#![no_main]

use crossmpi_impi::rendezvous::{classify, LongRecv};
use crossmpi_impi::wire::packet::{PacketHeader, PacketRepr, Proc};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(view) = PacketHeader::new_checked(data) else {
        return;
    };
    let _ = view.data_len();
    let max = u32::from_be_bytes(data[124..128].try_into().unwrap_or([0; 4]));
    let Ok(repr) = PacketRepr::parse(&view, max) else {
        return;
    };
    let bytes = repr.emit();
    let again = PacketRepr::parse(&PacketHeader::new_checked(&bytes[..]).unwrap(), max);
    assert_eq!(again, Ok(repr));
    let mut copy = data[..128].to_vec();
    let mut rw = PacketHeader::new_checked(&mut copy[..]).unwrap();
    rw.set_pk_src(Proc::FINI);
    rw.set_pk_dest(repr.src);
    let moved = PacketRepr::parse(&rw, max).unwrap();
    assert_eq!(moved.src, Proc::FINI);
    assert_eq!(moved.dest, repr.src);
    assert_eq!(
        (moved.ty, moved.srqid, moved.cid, moved.tag),
        (repr.ty, repr.srqid, repr.cid, repr.tag)
    );
    if classify(&repr).is_ok() {
        if let Ok(mut rx) = LongRecv::on_first(&repr) {
            let ack = rx.matched(1);
            assert_eq!(ack.srqid, repr.srqid);
        }
    }
});
