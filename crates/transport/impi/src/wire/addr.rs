//! The 16-byte host and process addresses of `IMPI_H_IPV6` and `IMPI_P_IPV6`.
//!
//! An IPv4 address can appear in two forms: IPv4-compatible (`::a.b.c.d`, bytes 0..12
//! zero), which LAM/MPI writes, and IPv4-mapped (`::ffff:a.b.c.d`), which MetaMPICH
//! writes. Both decode to the same IPv4 address; crossmpi encodes the LAM form.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A 16-byte IMPI address, kept as the bytes seen on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HostAddr(pub [u8; 16]);

impl HostAddr {
    /// The wire form of an IP address: IPv4 in the IPv4-compatible form LAM/MPI used.
    pub fn from_ip(ip: IpAddr) -> HostAddr {
        match ip {
            IpAddr::V4(v4) => {
                let mut b = [0u8; 16];
                b[12..].copy_from_slice(&v4.octets());
                HostAddr(b)
            }
            IpAddr::V6(v6) => HostAddr(v6.octets()),
        }
    }

    /// The IPv4 address in either IPv4 form, or None for a real IPv6 address.
    /// `::` and `::1` are the IPv6 unspecified and loopback addresses, not IPv4.
    pub fn ipv4(&self) -> Option<Ipv4Addr> {
        let b = &self.0;
        let v4 = Ipv4Addr::new(b[12], b[13], b[14], b[15]);
        let compatible = b[..12].iter().all(|&x| x == 0) && u32::from(v4) > 1;
        let mapped = b[..10].iter().all(|&x| x == 0) && b[10] == 0xff && b[11] == 0xff;
        (compatible || mapped).then_some(v4)
    }

    /// The address to connect to.
    pub fn to_ip(&self) -> IpAddr {
        match self.ipv4() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(Ipv6Addr::from(self.0)),
        }
    }

    /// True when both denote the same address, whichever IPv4 form each uses.
    pub fn same_address(&self, other: &HostAddr) -> bool {
        self.to_ip() == other.to_ip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_encodes_compatible_and_decodes_both_forms() {
        let ip: IpAddr = "10.1.2.3".parse().unwrap();
        let a = HostAddr::from_ip(ip);
        assert_eq!(a.0, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 1, 2, 3]);
        let mut mapped = [0u8; 16];
        mapped[10] = 0xff;
        mapped[11] = 0xff;
        mapped[12..].copy_from_slice(&[10, 1, 2, 3]);
        let m = HostAddr(mapped);
        assert_eq!(m.to_ip(), ip);
        assert!(a.same_address(&m));
        assert_ne!(a, m);
    }

    #[test]
    fn ipv6_loopback_and_real_v6_stay_v6() {
        let lo: IpAddr = "::1".parse().unwrap();
        assert_eq!(HostAddr::from_ip(lo).to_ip(), lo);
        let v6: IpAddr = "2001:db8::7".parse().unwrap();
        assert_eq!(HostAddr::from_ip(v6).ipv4(), None);
        assert_eq!(HostAddr::from_ip(v6).to_ip(), v6);
    }
}
