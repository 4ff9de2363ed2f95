// SPDX-License-Identifier: GPL-2.0

//! Frame-level work the card does in hardware: Ethernet FCS, checksum insertion (the TPD's
//! custom checksum), TCP segmentation (LSO v1/v2), VLAN tag insertion/stripping, and rx
//! checksum verification (the Mikrotik NIC's RRD word 3 bit 19).

/// Ethernet header length.
pub const ETH_HLEN: usize = 14;
const ETH_P_IP: u16 = 0x0800;
const ETH_P_IPV6: u16 = 0x86dd;
const ETH_P_8021Q: u16 = 0x8100;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;

/// CRC-32 (IEEE 802.3) of `data`: the FCS the MAC appends. Table-driven (and carry-less
/// multiply where the CPU has it): the bitwise loop cost ~8 us per 1500-byte frame, more than
/// the rest of the model's rx path, and capped what a benchmark could show.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// One's-complement sum of `data` (16-bit big-endian words), folded, added to `init`.
pub fn csum_add(init: u32, data: &[u8]) -> u32 {
    let mut sum = u64::from(init);
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u64::from(u16::from_be_bytes([c[0], c[1]]));
    }
    if let [last] = chunks.remainder() {
        sum += u64::from(*last) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u32
}

/// Final checksum value for a sum.
pub fn csum_fold(sum: u32) -> u16 {
    let mut s = sum;
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn put16(b: &mut [u8], at: usize, v: u16) -> Option<()> {
    b.get_mut(at..at + 2)?.copy_from_slice(&v.to_be_bytes());
    Some(())
}

/// The TPD's custom checksum: sum from `start` to the end of the frame (the stack pre-filled
/// the pseudo-header sum into the checksum field) and store it at `offset`.
pub fn insert_csum(frame: &mut [u8], start: usize, offset: usize) -> Option<()> {
    if start >= frame.len() || offset + 2 > frame.len() {
        return None;
    }
    let sum = csum_add(0, &frame[start..]);
    let mut v = csum_fold(sum);
    if v == 0 && is_udp_csum(frame, offset) {
        v = 0xffff;
    }
    put16(frame, offset, v)
}

fn is_udp_csum(frame: &[u8], offset: usize) -> bool {
    // A UDP checksum of 0 means "none": hardware sends 0xffff instead. The UDP checksum field
    // sits 6 bytes into the UDP header; look at the IP protocol to tell.
    match l3(frame) {
        Some((ETH_P_IP, ip)) => frame.get(ip + 9) == Some(&IPPROTO_UDP) && offset >= ip + 20,
        Some((ETH_P_IPV6, ip)) => frame.get(ip + 6) == Some(&IPPROTO_UDP) && offset >= ip + 40,
        _ => false,
    }
}

/// Ethertype and offset of the L3 header (one VLAN tag is skipped).
pub fn l3(frame: &[u8]) -> Option<(u16, usize)> {
    let t = be16(frame, 12)?;
    if t == ETH_P_8021Q {
        Some((be16(frame, 16)?, ETH_HLEN + 4))
    } else {
        Some((t, ETH_HLEN))
    }
}

/// Inserts an 802.1Q tag (TCI `tci`) after the MAC addresses.
pub fn insert_vlan(frame: &[u8], tci: u16) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame.len() + 4);
    out.extend_from_slice(&frame[..12.min(frame.len())]);
    out.extend_from_slice(&ETH_P_8021Q.to_be_bytes());
    out.extend_from_slice(&tci.to_be_bytes());
    if frame.len() > 12 {
        out.extend_from_slice(&frame[12..]);
    }
    out
}

/// Strips an 802.1Q tag, returning its TCI.
pub fn strip_vlan(frame: &mut Vec<u8>) -> Option<u16> {
    if be16(frame, 12)? != ETH_P_8021Q || frame.len() < ETH_HLEN + 4 {
        return None;
    }
    let tci = be16(frame, 14)?;
    frame.drain(12..16);
    Some(tci)
}

/// Whether the frame is TCP or UDP over IPv4/IPv6 with a correct L4 checksum (and, for
/// IPv4, a correct header checksum): what the Mikrotik NIC reports in RRD word 3 bit 19.
pub fn l4_csum_ok(frame: &[u8]) -> bool {
    let Some((ethertype, ip)) = l3(frame) else {
        return false;
    };
    let (proto, l4, l4_len, pseudo) = match ethertype {
        ETH_P_IP => {
            let Some(&vihl) = frame.get(ip) else {
                return false;
            };
            let ihl = usize::from(vihl & 0xf) * 4;
            let Some(total) = be16(frame, ip + 2) else {
                return false;
            };
            let total = usize::from(total);
            if vihl >> 4 != 4 || ihl < 20 || ip + total > frame.len() || total < ihl {
                return false;
            }
            if csum_fold(csum_add(0, &frame[ip..ip + ihl])) != 0 {
                return false;
            }
            // Fragments carry no verifiable L4 checksum.
            let Some(frag) = be16(frame, ip + 6) else {
                return false;
            };
            if frag & 0x3fff != 0 {
                return false;
            }
            let proto = frame[ip + 9];
            let l4_len = total - ihl;
            let mut p = csum_add(0, &frame[ip + 12..ip + 20]);
            p = csum_add(p, &[0, proto]);
            p = csum_add(p, &(l4_len as u16).to_be_bytes());
            (proto, ip + ihl, l4_len, p)
        }
        ETH_P_IPV6 => {
            let Some(plen) = be16(frame, ip + 4) else {
                return false;
            };
            let plen = usize::from(plen);
            if ip + 40 + plen > frame.len() {
                return false;
            }
            let proto = frame[ip + 6];
            let mut p = csum_add(0, &frame[ip + 8..ip + 40]);
            p = csum_add(p, &(plen as u32).to_be_bytes());
            p = csum_add(p, &[0, 0, 0, proto]);
            (proto, ip + 40, plen, p)
        }
        _ => return false,
    };
    match proto {
        IPPROTO_TCP if l4_len >= 20 => {}
        IPPROTO_UDP if l4_len >= 8 => {
            if ethertype == ETH_P_IP && be16(frame, l4 + 6) == Some(0) {
                return false;
            }
        }
        _ => return false,
    }
    csum_fold(csum_add(pseudo, &frame[l4..l4 + l4_len])) == 0
}

/// TCP segmentation as the card's large-send offload does it.
///
/// `frame` is the whole super-frame as the TPDs describe it; `tcp` the offset of the TCP header
/// (TPD word 1 bits 7:0), `mss` the segment payload size. IPv4 total length, identification and
/// header checksum, the IPv6 payload length, TCP sequence numbers, flags and checksums are
/// rewritten per segment. Returns `None` for a frame the card could not parse.
pub fn tso(frame: &[u8], tcp: usize, mss: usize) -> Option<Vec<Vec<u8>>> {
    let (ethertype, ip) = l3(frame)?;
    let doff = usize::from(frame.get(tcp + 12)? >> 4) * 4;
    let hdr = tcp + doff;
    let ip_min = match ethertype {
        ETH_P_IP => 20,
        ETH_P_IPV6 => 40,
        _ => return None,
    };
    if mss == 0 || doff < 20 || hdr > frame.len() || tcp < ip + ip_min {
        return None;
    }
    let payload = &frame[hdr..];
    let seq0 = u32::from_be_bytes(frame.get(tcp + 4..tcp + 8)?.try_into().ok()?);
    let flags0 = frame[tcp + 13];
    let id0 = be16(frame, ip + 4)?;
    let nseg = payload.len().div_ceil(mss).max(1);
    let mut out = Vec::with_capacity(nseg);
    for (i, chunk) in payload.chunks(mss).enumerate().chain(
        // A header-only frame still goes out once.
        (payload.is_empty()).then_some((0, &payload[..0])),
    ) {
        let last = i + 1 == nseg;
        let mut seg = Vec::with_capacity(hdr + chunk.len());
        seg.extend_from_slice(&frame[..hdr]);
        seg.extend_from_slice(chunk);
        let l4_len = seg.len() - tcp;
        let seg_len = seg.len();
        match ethertype {
            ETH_P_IP => {
                let ihl = usize::from(seg[ip] & 0xf) * 4;
                if ihl < 20 || ip + ihl > tcp {
                    return None;
                }
                put16(&mut seg, ip + 2, (seg_len - ip) as u16)?;
                put16(&mut seg, ip + 4, id0.wrapping_add(i as u16))?;
                put16(&mut seg, ip + 10, 0)?;
                let c = csum_fold(csum_add(0, seg.get(ip..ip + ihl)?));
                put16(&mut seg, ip + 10, c)?;
            }
            ETH_P_IPV6 => {
                put16(&mut seg, ip + 4, (seg_len - ip - 40) as u16)?;
            }
            _ => return None,
        }
        let seq = seq0.wrapping_add((i * mss) as u32);
        seg[tcp + 4..tcp + 8].copy_from_slice(&seq.to_be_bytes());
        let mut flags = flags0;
        if !last {
            flags &= !(0x01 | 0x08); // FIN, PSH only on the last segment
        }
        if i > 0 {
            flags &= !0x80; // CWR only on the first
        }
        seg[tcp + 13] = flags;
        put16(&mut seg, tcp + 16, 0)?;
        let pseudo = match ethertype {
            ETH_P_IP => {
                let p = csum_add(0, &seg[ip + 12..ip + 20]);
                let p = csum_add(p, &[0, IPPROTO_TCP]);
                csum_add(p, &(l4_len as u16).to_be_bytes())
            }
            _ => {
                let p = csum_add(0, &seg[ip + 8..ip + 40]);
                let p = csum_add(p, &(l4_len as u32).to_be_bytes());
                csum_add(p, &[0, 0, 0, IPPROTO_TCP])
            }
        };
        let c = csum_fold(csum_add(pseudo, &seg[tcp..]));
        put16(&mut seg, tcp + 16, c)?;
        out.push(seg);
        if last {
            break;
        }
    }
    Some(out)
}

/// A Wake-on-LAN magic packet for `mac`, as `ether-wake` sends it: broadcast, EtherType
/// 0x0842, six bytes of 0xff and `mac` sixteen times.
pub fn magic_packet(mac: &[u8; 6]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 0xfe]);
    f.extend_from_slice(&0x0842u16.to_be_bytes());
    f.extend_from_slice(&[0xff; 6]);
    for _ in 0..16 {
        f.extend_from_slice(mac);
    }
    f
}

/// Whether `frame` carries a magic packet for `mac`: anywhere after the Ethernet header, six
/// bytes of 0xff followed by `mac` sixteen times (the card does not look at the EtherType: a
/// UDP-borne magic packet wakes it too).
pub fn is_magic_packet(frame: &[u8], mac: &[u8; 6]) -> bool {
    let body = frame.get(ETH_HLEN..).unwrap_or(&[]);
    (0..body.len()).any(|i| {
        let Some(w) = body.get(i..i + 6 + 16 * 6) else {
            return false;
        };
        w[..6] == [0xff; 6] && w[6..].chunks(6).all(|c| c == mac)
    })
}

/// A flow hash over addresses and ports, for spreading rx frames over queues.
pub fn flow_hash(frame: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut mix = |b: &[u8]| {
        for &x in b {
            h = (h ^ u32::from(x)).wrapping_mul(0x0100_0193);
        }
    };
    match l3(frame) {
        Some((ETH_P_IP, ip)) if frame.len() >= ip + 20 => {
            mix(&frame[ip + 12..ip + 20]);
            let ihl = usize::from(frame[ip] & 0xf) * 4;
            if matches!(frame[ip + 9], IPPROTO_TCP | IPPROTO_UDP) {
                if let Some(p) = frame.get(ip + ihl..ip + ihl + 4) {
                    mix(p);
                }
            }
        }
        Some((ETH_P_IPV6, ip)) if frame.len() >= ip + 40 => {
            mix(&frame[ip + 8..ip + 40]);
            if matches!(frame[ip + 6], IPPROTO_TCP | IPPROTO_UDP) {
                if let Some(p) = frame.get(ip + 40..ip + 44) {
                    mix(p);
                }
            }
        }
        _ => mix(frame.get(..12).unwrap_or(frame)),
    }
    h
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// An IPv4/TCP frame with a correct checksum.
    pub(crate) fn tcp4(payload: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 54];
        f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[14] = 0x45;
        let total = (40 + payload.len()) as u16;
        f[16..18].copy_from_slice(&total.to_be_bytes());
        f[18..20].copy_from_slice(&0x1234u16.to_be_bytes());
        f[22] = 64;
        f[23] = 6;
        f[26..30].copy_from_slice(&[192, 0, 2, 1]);
        f[30..34].copy_from_slice(&[192, 0, 2, 2]);
        f[34..36].copy_from_slice(&5201u16.to_be_bytes());
        f[36..38].copy_from_slice(&40000u16.to_be_bytes());
        f[38..42].copy_from_slice(&1000u32.to_be_bytes());
        f[46] = 0x50;
        f[47] = 0x18; // PSH ACK
        f.extend_from_slice(payload);
        let c = csum_fold(csum_add(0, &f[14..34]));
        f[24..26].copy_from_slice(&c.to_be_bytes());
        let mut p = csum_add(0, &f[26..34]);
        p = csum_add(p, &[0, 6]);
        p = csum_add(p, &((20 + payload.len()) as u16).to_be_bytes());
        let c = csum_fold(csum_add(p, &f[34..]));
        f[50..52].copy_from_slice(&c.to_be_bytes());
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::tests_support::tcp4;

    #[test]
    fn crc32_matches_the_bitwise_definition() {
        fn bitwise(data: &[u8]) -> u32 {
            let mut crc = !0u32;
            for &b in data {
                crc ^= u32::from(b);
                for _ in 0..8 {
                    let mask = (crc & 1).wrapping_neg();
                    crc = (crc >> 1) ^ (0xedb8_8320 & mask);
                }
            }
            !crc
        }
        let data: Vec<u8> = (0..9000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [0, 1, 7, 60, 64, 1514, 9000] {
            assert_eq!(crc32(&data[..len]), bitwise(&data[..len]), "length {len}");
        }
    }

    #[test]
    fn crc32_known_value() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
    }

    #[test]
    fn good_and_bad_l4_checksum() {
        let mut f = tcp4(b"hello world");
        assert!(l4_csum_ok(&f));
        let n = f.len();
        f[n - 1] ^= 1;
        assert!(!l4_csum_ok(&f));
        assert!(!l4_csum_ok(&[0u8; 20]));
    }

    #[test]
    fn insert_csum_matches_full_checksum() {
        let good = tcp4(b"some payload!");
        let mut f = good.clone();
        // What the stack hands over with CHECKSUM_PARTIAL: the pseudo-header sum, not folded
        // to its complement.
        let mut p = csum_add(0, &f[26..34]);
        p = csum_add(p, &[0, 6]);
        p = csum_add(p, &((f.len() - 34) as u16).to_be_bytes());
        let partial = !csum_fold(p);
        f[50..52].copy_from_slice(&partial.to_be_bytes());
        assert_eq!(insert_csum(&mut f, 34, 50), Some(()));
        assert_eq!(f, good);
        assert_eq!(insert_csum(&mut f, 1000, 50), None);
    }

    #[test]
    fn tso_segments_are_valid_tcp() {
        let payload: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
        let f = tcp4(&payload);
        let segs = tso(&f, 34, 1448).expect("parsable");
        assert_eq!(segs.len(), 3);
        let mut got = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            assert!(l4_csum_ok(s), "segment {i} checksum");
            let seq = u32::from_be_bytes(s[38..42].try_into().expect("4 bytes"));
            assert_eq!(seq, 1000 + (i as u32) * 1448);
            assert_eq!(s[47] & 0x08 != 0, i == 2, "PSH only on the last");
            got.extend_from_slice(&s[54..]);
        }
        assert_eq!(got, payload);
        assert_eq!(segs[0].len(), 54 + 1448);
        assert_eq!(segs[2].len(), 54 + 3000 - 2 * 1448);
    }

    #[test]
    fn vlan_round_trip() {
        let f = tcp4(b"x");
        let mut t = insert_vlan(&f, 0x0064);
        assert_eq!(l3(&t), Some((0x0800, 18)));
        assert_eq!(strip_vlan(&mut t), Some(0x0064));
        assert_eq!(t, f);
    }
}
