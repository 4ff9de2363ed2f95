// SPDX-License-Identifier: GPL-2.0

//! Descriptor layouts (TPD, RFD, RRD/RRS) and ring index math.
//!
//! The layouts are those of `struct atl1c_tpd_desc`, `struct atl1c_rx_free_desc` and
//! `struct atl1c_recv_ret_status` in the C driver's `atl1c.h`: little-endian in DMA memory.
//! Descriptors are packed to and parsed from byte arrays here, so the same code serves the
//! driver (coherent DMA memory) and the host tests. Everything read back from the device goes
//! through [`check_rrd`] before any index or length in it is used.
//!
//! This file uses only `core`.

use core::num::NonZeroU32;

use crate::regs::{Bit, Bits};

/// Size of a TPD in bytes.
pub(crate) const TPD_SIZE: usize = 16;
/// Size of an RFD in bytes.
pub(crate) const RFD_SIZE: usize = 8;
/// Size of an RRD in bytes.
pub(crate) const RRD_SIZE: usize = 16;

/// Smallest ring the driver sets up.
pub(crate) const MIN_RING: u16 = 64;
/// Largest TPD ring (`TPD_RING_SIZE` is 16 bits; the C driver caps at 1024).
pub(crate) const MAX_TPD_RING: u16 = 1024;
/// Largest RFD/RRD ring (`RFD_RING_SIZE` is 12 bits and indices in the RRD are 12 bits).
pub(crate) const MAX_RFD_RING: u16 = 1024;

/// Ethernet frame check sequence length, included in the RRD's packet size.
pub(crate) const ETH_FCS_LEN: u16 = 4;
/// Ethernet header length: the shortest frame worth passing up.
pub(crate) const ETH_HLEN: u16 = 14;

/// Fields of TPD word 1.
pub(crate) mod tpd {
    use super::{Bit, Bits};

    /// Checksum offload: L4 header offset, in 2-byte units (`TPD_L4HDR_OFFSET`); also the TCP
    /// header offset for LSO and the payload offset for custom checksum.
    pub(crate) const L4HDR_OFFSET: Bits = Bits::new(7, 0);
    /// Custom checksum enable.
    pub(crate) const CCSUM_EN: Bit = Bit::new(8);
    /// IPv4 header checksum.
    pub(crate) const IP_CSUM: Bit = Bit::new(9);
    /// TCP checksum.
    pub(crate) const TCP_CSUM: Bit = Bit::new(10);
    /// UDP checksum.
    pub(crate) const UDP_CSUM: Bit = Bit::new(11);
    /// TCP large send offload.
    pub(crate) const LSO_EN: Bit = Bit::new(12);
    /// LSO version: 0 = IPv4 only, 1 = IPv4/IPv6 (needs the extension TPD).
    pub(crate) const LSO_VER: Bit = Bit::new(13);
    /// VLAN tag is in the descriptor.
    pub(crate) const CON_VTAG: Bit = Bit::new(14);
    /// Insert the VLAN tag.
    pub(crate) const INS_VTAG: Bit = Bit::new(15);
    /// IPv4 packet (valid with LSO version 1).
    pub(crate) const IPV4_PACKET: Bit = Bit::new(16);
    /// 1 = Ethernet II, 0 = 802.3.
    pub(crate) const ETH_TYPE: Bit = Bit::new(17);
    /// Custom checksum: offset of the checksum field, in 2-byte units.
    pub(crate) const CCSUM_OFFSET: Bits = Bits::new(25, 18);
    /// Custom checksum: the frame has Ethernet padding.
    pub(crate) const CCSUM_EPAD: Bit = Bit::new(30);
    /// LSO: maximum segment size.
    pub(crate) const MSS: Bits = Bits::new(30, 18);
    /// Last descriptor of a frame.
    pub(crate) const EOP: Bit = Bit::new(31);
}

/// Fields of the RRD (`atl1c_recv_ret_status`).
pub(crate) mod rrs {
    use super::{Bit, Bits};

    /// Word 0: hardware checksum of the frame.
    pub(crate) const RX_CSUM: Bits = Bits::new(15, 0);
    /// Word 0: number of RFDs the frame occupies.
    pub(crate) const RX_RFD_CNT: Bits = Bits::new(19, 16);
    /// Word 0: index of the first RFD.
    pub(crate) const RX_RFD_INDEX: Bits = Bits::new(31, 20);

    /// Word 3: frame length including FCS.
    pub(crate) const PKT_SIZE: Bits = Bits::new(13, 0);
    /// Word 3: bad L4 checksum.
    pub(crate) const ERR_L4_CSUM: Bit = Bit::new(14);
    /// Word 3: bad IP checksum.
    pub(crate) const ERR_IP_CSUM: Bit = Bit::new(15);
    /// Word 3: VLAN tag stripped into `vlan_tag`.
    pub(crate) const VLAN_INS: Bit = Bit::new(16);
    /// Word 3: protocol id (1 = IPv4 only, 6 = IPv6 only, ...).
    pub(crate) const PROT_ID: Bits = Bits::new(19, 17);
    /// Word 3, Mikrotik NIC: TCP or UDP with a good checksum (`RRS_MT_PROT_ID_TCPUDP`).
    pub(crate) const MT_PROT_ID_TCPUDP: Bit = Bit::new(19);
    /// Word 3: some receive error (summary).
    pub(crate) const RX_ERR_SUM: Bit = Bit::new(20);
    /// Word 3: CRC error.
    pub(crate) const RX_ERR_CRC: Bit = Bit::new(21);
    /// Word 3: frame alignment error.
    pub(crate) const RX_ERR_FAE: Bit = Bit::new(22);
    /// Word 3: truncated.
    pub(crate) const RX_ERR_TRUNC: Bit = Bit::new(23);
    /// Word 3: runt.
    pub(crate) const RX_ERR_RUNC: Bit = Bit::new(24);
    /// Word 3: ICMP error.
    pub(crate) const RX_ERR_ICMP: Bit = Bit::new(25);
    /// Word 3: broadcast.
    pub(crate) const PACKET_BCAST: Bit = Bit::new(26);
    /// Word 3: multicast.
    pub(crate) const PACKET_MCAST: Bit = Bit::new(27);
    /// Word 3: 1 = 802.3, 0 = Ethernet II.
    pub(crate) const PACKET_TYPE: Bit = Bit::new(28);
    /// Word 3: rx FIFO full.
    pub(crate) const FIFO_FULL: Bit = Bit::new(29);
    /// Word 3: 802.3 length error.
    pub(crate) const LEN_ERR_802_3: Bit = Bit::new(30);
    /// Word 3: the device has written this RRD.
    pub(crate) const RXD_UPDATED: Bit = Bit::new(31);
}

/// Transmit packet descriptor (`struct atl1c_tpd_desc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tpd {
    /// Buffer length in bytes.
    pub(crate) buffer_len: u16,
    /// VLAN tag, in the device's byte order (`AT_VLAN_TO_TAG`).
    pub(crate) vlan_tag: u16,
    /// Flags and offsets, see [`tpd`].
    pub(crate) word1: u32,
    /// DMA address of the buffer.
    pub(crate) buffer_addr: u64,
}

impl Tpd {
    /// The descriptor as the device reads it.
    pub(crate) fn to_bytes(self) -> [u8; TPD_SIZE] {
        let mut b = [0u8; TPD_SIZE];
        b[0..2].copy_from_slice(&self.buffer_len.to_le_bytes());
        b[2..4].copy_from_slice(&self.vlan_tag.to_le_bytes());
        b[4..8].copy_from_slice(&self.word1.to_le_bytes());
        b[8..16].copy_from_slice(&self.buffer_addr.to_le_bytes());
        b
    }

    /// Parses a descriptor from DMA memory.
    pub(crate) fn from_bytes(b: &[u8; TPD_SIZE]) -> Self {
        Self {
            buffer_len: u16::from_le_bytes([b[0], b[1]]),
            vlan_tag: u16::from_le_bytes([b[2], b[3]]),
            word1: le32(b, 4),
            buffer_addr: le64(b, 8),
        }
    }

    /// Whether a word-1 bit is set.
    pub(crate) fn bit(&self, f: Bit) -> bool {
        self.word1 & f.mask() != 0
    }

    /// A word-1 field.
    pub(crate) fn field(&self, f: Bits) -> u32 {
        f.get(self.word1)
    }

    /// Sets or clears a word-1 bit.
    pub(crate) fn set_bit(&mut self, f: Bit, on: bool) {
        self.word1 = if on {
            self.word1 | f.mask()
        } else {
            self.word1 & !f.mask()
        };
    }

    /// Sets a word-1 field; values wider than the field are an error.
    pub(crate) fn set_field(&mut self, f: Bits, value: u32) -> Result<(), DescError> {
        if value > f.max() {
            return Err(DescError::FieldOverflow);
        }
        self.word1 = f.set(self.word1, value);
        Ok(())
    }
}

/// Errors building a descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DescError {
    /// A value does not fit its descriptor field.
    FieldOverflow,
    /// The checksum start is odd: the TPD holds it in 2-byte units.
    OddChecksumStart,
}

/// What the stack asks of one frame's transmission (from the skb).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TxOffload {
    /// TCP segment size for TSO; 0 without TSO.
    pub(crate) gso_size: u32,
    /// TSO over IPv6 (LSO v2, with an extension TPD).
    pub(crate) gso_v6: bool,
    /// Offset of the TCP header.
    pub(crate) transport_offset: u32,
    /// `CHECKSUM_PARTIAL`: the device inserts the L4 checksum.
    pub(crate) csum_partial: bool,
    /// Where the checksummed data starts.
    pub(crate) csum_start: u32,
    /// Offset of the checksum field from `csum_start`.
    pub(crate) csum_offset: u32,
    /// VLAN tag to insert.
    pub(crate) vlan: Option<u16>,
    /// Offset of the network header (not 14: the frame is not plain Ethernet II).
    pub(crate) network_offset: u32,
}

/// The word-1 template every TPD of a frame carries (`atl1c_tso_csum` and the VLAN and
/// Ethernet-type parts of `atl1c_xmit_frame`); the last TPD adds EOP.
pub(crate) fn tx_template(o: &TxOffload) -> Result<Tpd, DescError> {
    let mut t = Tpd::default();
    if o.gso_size != 0 {
        t.set_bit(tpd::LSO_EN, true);
        if o.gso_v6 {
            t.set_bit(tpd::LSO_VER, true);
        } else {
            t.set_bit(tpd::IPV4_PACKET, true);
        }
        t.set_field(tpd::L4HDR_OFFSET, o.transport_offset)?;
        t.set_field(tpd::MSS, o.gso_size)?;
    } else if o.csum_partial {
        if o.csum_start & 1 != 0 {
            return Err(DescError::OddChecksumStart);
        }
        t.set_bit(tpd::CCSUM_EN, true);
        t.set_field(tpd::L4HDR_OFFSET, o.csum_start / 2)?;
        t.set_field(tpd::CCSUM_OFFSET, (o.csum_start + o.csum_offset) / 2)?;
    }
    if let Some(tci) = o.vlan {
        t.set_bit(tpd::INS_VTAG, true);
        // AT_VLAN_TO_TAG: the tag is stored byte-swapped.
        t.vlan_tag = tci.swap_bytes();
    }
    if o.network_offset != u32::from(ETH_HLEN) {
        t.set_bit(tpd::ETH_TYPE, true);
    }
    Ok(t)
}

/// The largest TSO segment size a TPD can carry (its 13-bit MSS field).
pub(crate) const TSO_MSS_MAX: u32 = tpd::MSS.max();

/// The LSO v2 extension TPD that precedes an IPv6 TSO frame: flags and the total length.
pub(crate) fn lso_ext(total_len: u32) -> Tpd {
    let mut t = Tpd::default();
    t.set_bit(tpd::LSO_EN, true);
    t.set_bit(tpd::LSO_VER, true);
    // `atl1c_tpd_ext_desc.pkt_len` sits where a TPD has the low address word.
    t.buffer_addr = u64::from(total_len);
    t
}

/// TPDs one frame takes (`atl1c_cal_tpd_req`): one per fragment and for the head, one more
/// when TSO splits the headers off the head, one more for the IPv6 extension TPD.
pub(crate) fn tpds_needed(nr_frags: u32, o: &TxOffload, header_split: bool) -> u32 {
    let tso = o.gso_size != 0;
    nr_frags + 1 + u32::from(tso && header_split) + u32::from(tso && o.gso_v6)
}

/// Whether the card can take a receive buffer at bus address `addr`. One that ends in
/// `0x...fc0` "will be very likely to cause DMA RFD overflow" (the C driver's comment in
/// `atl1c_alloc_rx_buffer`, which allocates 64 spare bytes and moves such a buffer 64 bytes
/// on); atl1c_rs gives the card another buffer instead.
pub(crate) const fn rx_buffer_usable(addr: u64) -> bool {
    addr & 0xfff != 0xfc0
}

/// Receive free descriptor (`struct atl1c_rx_free_desc`): the address of an empty buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rfd {
    /// DMA address of the buffer.
    pub(crate) buffer_addr: u64,
}

impl Rfd {
    /// The descriptor as the device reads it.
    pub(crate) fn to_bytes(self) -> [u8; RFD_SIZE] {
        self.buffer_addr.to_le_bytes()
    }

    /// Parses a descriptor from DMA memory.
    pub(crate) fn from_bytes(b: &[u8; RFD_SIZE]) -> Self {
        Self {
            buffer_addr: u64::from_le_bytes(*b),
        }
    }
}

/// Receive return descriptor (`struct atl1c_recv_ret_status`), written by the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Rrd {
    /// Checksum, RFD count and RFD index, see [`rrs`].
    pub(crate) word0: u32,
    /// RSS hash.
    pub(crate) rss_hash: u32,
    /// Stripped VLAN tag, in the device's byte order.
    pub(crate) vlan_tag: u16,
    /// Header-split and hash flags.
    pub(crate) flag: u16,
    /// Length, errors and the updated bit, see [`rrs`].
    pub(crate) word3: u32,
}

/// The byte of an RRD (as the card writes it, little endian) that holds the updated bit:
/// word 3, bit 31.
pub(crate) const RRD_UPDATED_BYTE: usize = 15;

/// Whether [`RRD_UPDATED_BYTE`] of an RRD says the card has written it.
pub(crate) const fn rrd_updated(byte: u8) -> bool {
    // CAST: the top byte of word 3.
    (byte as u32) << 24 & rrs::RXD_UPDATED.mask() != 0
}

impl Rrd {
    /// The descriptor as the device writes it.
    pub(crate) fn to_bytes(self) -> [u8; RRD_SIZE] {
        let mut b = [0u8; RRD_SIZE];
        b[0..4].copy_from_slice(&self.word0.to_le_bytes());
        b[4..8].copy_from_slice(&self.rss_hash.to_le_bytes());
        b[8..10].copy_from_slice(&self.vlan_tag.to_le_bytes());
        b[10..12].copy_from_slice(&self.flag.to_le_bytes());
        b[12..16].copy_from_slice(&self.word3.to_le_bytes());
        b
    }

    /// Parses a descriptor from DMA memory.
    pub(crate) fn from_bytes(b: &[u8; RRD_SIZE]) -> Self {
        Self {
            word0: le32(b, 0),
            rss_hash: le32(b, 4),
            vlan_tag: u16::from_le_bytes([b[8], b[9]]),
            flag: u16::from_le_bytes([b[10], b[11]]),
            word3: le32(b, 12),
        }
    }

    /// Whether the device has written this descriptor (`RRS_RXD_IS_VALID`).
    pub(crate) fn is_updated(&self) -> bool {
        self.word3 & rrs::RXD_UPDATED.mask() != 0
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    u64::from(le32(b, at)) | (u64::from(le32(b, at + 4)) << 32)
}

/// Why a received descriptor was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RxError {
    /// The device flagged the frame as bad (`RRS_RX_ERR_SUM` or `RRS_802_3_LEN_ERR`).
    FrameError,
    /// The RRD names an RFD index outside the ring.
    IndexOutOfRange,
    /// The RRD names an RFD other than the next one the device should have used.
    IndexOutOfOrder,
    /// The RRD claims zero RFDs or more than the buffers allow (frames span one RFD here).
    BadRfdCount,
    /// The length is shorter than an Ethernet header plus FCS.
    TooShort,
    /// The length exceeds the rx buffer.
    TooLong,
}

/// A received frame whose RRD passed every check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RxFrame {
    /// Index of the RFD holding the frame.
    pub(crate) rfd_index: u16,
    /// Frame length without FCS: what to pass up.
    pub(crate) len: u16,
    /// Mikrotik NIC only: the device verified a TCP/UDP checksum.
    pub(crate) l4_csum_ok: bool,
    /// A VLAN tag was stripped into the RRD.
    pub(crate) vlan: Option<u16>,
}

/// Validates an updated RRD against the RFD ring before anything in it is used.
///
/// `rfd_count` is the RFD ring size, `expected` the RFD index the device must have consumed
/// next (RFDs are used in ring order), `buf_len` the size of each rx buffer and `mt` whether
/// the Mikrotik checksum bit is meaningful. On error nothing in the RRD may be used: the caller
/// drops the frame, counts it and recycles the RFD at `expected`.
pub(crate) fn check_rrd(
    rrd: &Rrd,
    rfd_count: u16,
    expected: u16,
    buf_len: u16,
    mt: bool,
) -> Result<RxFrame, RxError> {
    let rfd_num = rrs::RX_RFD_CNT.get(rrd.word0);
    if rfd_num != 1 {
        return Err(RxError::BadRfdCount);
    }
    let index = rrs::RX_RFD_INDEX.get(rrd.word0);
    if index >= u32::from(rfd_count) {
        return Err(RxError::IndexOutOfRange);
    }
    if index != u32::from(expected) {
        return Err(RxError::IndexOutOfOrder);
    }
    if rrd.word3 & (rrs::RX_ERR_SUM.mask() | rrs::LEN_ERR_802_3.mask()) != 0 {
        return Err(RxError::FrameError);
    }
    let size = rrs::PKT_SIZE.get(rrd.word3);
    if size < u32::from(ETH_HLEN + ETH_FCS_LEN) {
        return Err(RxError::TooShort);
    }
    if size > u32::from(buf_len) {
        return Err(RxError::TooLong);
    }
    let vlan = if rrd.word3 & rrs::VLAN_INS.mask() != 0 {
        Some(rrd.vlan_tag)
    } else {
        None
    };
    // CAST: `index` < `rfd_count` (a `u16`) and `size` <= `buf_len` (a `u16`), checked above.
    Ok(RxFrame {
        rfd_index: index as u16,
        len: size as u16 - ETH_FCS_LEN,
        l4_csum_ok: mt && rrd.word3 & rrs::MT_PROT_ID_TCPUDP.mask() != 0,
        vlan,
    })
}

/// Index arithmetic of a descriptor ring of `count` entries (`next_to_use`, `next_to_clean`).
///
/// # Invariants
///
/// `count` is at least 2. Results are always below `count`; arguments are expected to be too
/// (indices the driver keeps), and [`RingIndex::contains`] checks one that is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RingIndex {
    count: NonZeroU32,
}

impl RingIndex {
    /// A ring of `count` descriptors; `None` unless 2 <= `count`.
    pub(crate) fn new(count: u16) -> Option<Self> {
        if count < 2 {
            return None;
        }
        // INVARIANT: `count` >= 2, checked above.
        NonZeroU32::new(u32::from(count)).map(|count| Self { count })
    }

    /// Number of descriptors.
    pub(crate) fn count(self) -> u16 {
        // CAST: built from a `u16` in `new`.
        self.count.get() as u16
    }

    /// Whether `i` is a valid index into the ring.
    pub(crate) fn contains(self, i: u16) -> bool {
        u32::from(i) < self.count.get()
    }

    /// Reduces a sum of indices modulo `count`; the divisor is non-zero by type, so there is no
    /// division-by-zero path.
    fn wrap(self, v: u32) -> u16 {
        // CAST: the remainder is below `count`, a `u16`.
        (v % self.count) as u16
    }

    /// The index after `i`, wrapping at `count` (a compare, not a division: the hot path
    /// steps one index per descriptor).
    pub(crate) fn next(self, i: u16) -> u16 {
        let n = u32::from(i) + 1;
        if n < self.count.get() {
            // CAST: below `count`, a `u16`.
            n as u16
        } else {
            // `i` was the last index (or, from a caller that broke the contract, beyond it).
            0
        }
    }

    /// The index `n` after `i`, wrapping at `count`.
    pub(crate) fn advance(self, i: u16, n: u16) -> u16 {
        // Computed in u32 so that no sum of two `u16`s overflows.
        self.wrap(u32::from(i) + u32::from(n))
    }

    /// Descriptors in flight from `next_to_clean` up to (not including) `next_to_use`.
    pub(crate) fn used(self, next_to_use: u16, next_to_clean: u16) -> u16 {
        self.wrap(
            u32::from(next_to_use) + self.count.get() - u32::from(self.wrap(next_to_clean.into())),
        )
    }

    /// Descriptors the producer can still fill (`atl1c_tpd_avail`): one slot always stays
    /// empty so that a full ring differs from an empty one.
    pub(crate) fn free(self, next_to_use: u16, next_to_clean: u16) -> u16 {
        self.count() - 1 - self.used(next_to_use, next_to_clean)
    }

    /// Whether `i` lies in `[next_to_clean, next_to_use]`, the only values a consumer index read
    /// from the device may take; anything else must not be trusted.
    pub(crate) fn valid_consumer(self, i: u16, next_to_use: u16, next_to_clean: u16) -> bool {
        self.contains(i) && self.used(i, next_to_clean) <= self.used(next_to_use, next_to_clean)
    }
}

#[cfg(any(test, CONFIG_KUNIT))]
#[cfg_attr(not(test), kernel::prelude::kunit_tests(atl1c_rs_ring))]
mod tests {
    use super::*;

    fn rrd(index: u32, cnt: u32, size: u32, extra3: u32) -> Rrd {
        Rrd {
            word0: (index << 20) | (cnt << 16) | 0xbeef,
            rss_hash: 0,
            vlan_tag: 0,
            flag: 0,
            word3: rrs::RXD_UPDATED.mask() | size | extra3,
        }
    }

    #[test]
    fn rx_buffers_at_fc0_are_refused() {
        assert!(!rx_buffer_usable(0x1234_5fc0));
        assert!(!rx_buffer_usable(0xfc0));
        assert!(rx_buffer_usable(0x1234_5fc2));
        assert!(rx_buffer_usable(0x1234_5040));
        assert!(rx_buffer_usable(0x1234_4fc0 + 0x40));
    }

    #[test]
    fn tpd_layout() {
        let t = Tpd {
            buffer_len: 0x05ea,
            vlan_tag: 0x1234,
            word1: 0x8000_0000,
            buffer_addr: 0x0000_0001_dead_b000,
        };
        let b = t.to_bytes();
        assert_eq!(
            b,
            [
                0xea, 0x05, 0x34, 0x12, 0x00, 0x00, 0x00, 0x80, 0x00, 0xb0, 0xad, 0xde, 0x01, 0x00,
                0x00, 0x00
            ]
        );
        assert_eq!(Tpd::from_bytes(&b), t);
    }

    #[test]
    fn tpd_fields() {
        let mut t = Tpd::default();
        t.set_bit(tpd::LSO_EN, true);
        t.set_bit(tpd::EOP, true);
        assert_eq!(t.set_field(tpd::MSS, 1448), Ok(()));
        assert_eq!(t.set_field(tpd::L4HDR_OFFSET, 34 / 2), Ok(()));
        assert_eq!(t.word1, (1 << 31) | (1448 << 18) | (1 << 12) | 17);
        assert_eq!(t.field(tpd::MSS), 1448);
        assert!(t.bit(tpd::LSO_EN));
        assert_eq!(t.set_field(tpd::MSS, 0x2000), Err(DescError::FieldOverflow));
        assert_eq!(t.field(tpd::MSS), 1448);
        assert_eq!(TSO_MSS_MAX, 0x1fff);
        assert_eq!(t.set_field(tpd::MSS, TSO_MSS_MAX), Ok(()));
        t.set_bit(tpd::LSO_EN, false);
        assert!(!t.bit(tpd::LSO_EN));
        assert!(t.bit(tpd::EOP));
    }

    #[test]
    fn rfd_rrd_layout() {
        let f = Rfd {
            buffer_addr: 0x1234_5678,
        };
        assert_eq!(f.to_bytes(), [0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0]);
        assert_eq!(Rfd::from_bytes(&f.to_bytes()), f);
        let r = Rrd {
            word0: 0x0031_beef,
            rss_hash: 0x0102_0304,
            vlan_tag: 0x0506,
            flag: 0x0708,
            word3: 0x8008_05ee,
        };
        let b = r.to_bytes();
        assert_eq!(&b[12..16], &[0xee, 0x05, 0x08, 0x80]);
        assert_eq!(Rrd::from_bytes(&b), r);
        assert!(r.is_updated());
        assert!(!Rrd::default().is_updated());
        // The byte the driver polls holds the same bit, and only it decides.
        for d in [r, Rrd::default()] {
            assert_eq!(rrd_updated(d.to_bytes()[RRD_UPDATED_BYTE]), d.is_updated());
        }
        let not_updated = Rrd {
            word3: !rrs::RXD_UPDATED.mask(),
            ..Rrd::default()
        };
        assert!(!rrd_updated(not_updated.to_bytes()[RRD_UPDATED_BYTE]));
    }

    #[test]
    fn rrd_good_frame() {
        let r = rrd(5, 1, 1518, rrs::MT_PROT_ID_TCPUDP.mask());
        let f = check_rrd(&r, 256, 5, 1536, true);
        assert_eq!(
            f,
            Ok(RxFrame {
                rfd_index: 5,
                len: 1514,
                l4_csum_ok: true,
                vlan: None
            })
        );
        // The checksum bit means nothing on AR8151.
        assert_eq!(
            check_rrd(&r, 256, 5, 1536, false).map(|f| f.l4_csum_ok),
            Ok(false)
        );
    }

    #[test]
    fn rrd_malformed() {
        // Index beyond the ring: never used to index buffers.
        assert_eq!(
            check_rrd(&rrd(300, 1, 60, 0), 256, 44, 1536, false),
            Err(RxError::IndexOutOfRange)
        );
        assert_eq!(
            check_rrd(&rrd(4095, 1, 60, 0), 256, 44, 1536, false),
            Err(RxError::IndexOutOfRange)
        );
        // In range, but not the RFD the device had to use next.
        assert_eq!(
            check_rrd(&rrd(45, 1, 60, 0), 256, 44, 1536, false),
            Err(RxError::IndexOutOfOrder)
        );
        // Zero or several RFDs.
        assert_eq!(
            check_rrd(&rrd(44, 0, 60, 0), 256, 44, 1536, false),
            Err(RxError::BadRfdCount)
        );
        assert_eq!(
            check_rrd(&rrd(44, 15, 60, 0), 256, 44, 1536, false),
            Err(RxError::BadRfdCount)
        );
        // Lengths: shorter than header + FCS, longer than the buffer.
        assert_eq!(
            check_rrd(&rrd(44, 1, 17, 0), 256, 44, 1536, false),
            Err(RxError::TooShort)
        );
        assert_eq!(
            check_rrd(&rrd(44, 1, 1537, 0), 256, 44, 1536, false),
            Err(RxError::TooLong)
        );
        assert_eq!(
            check_rrd(&rrd(44, 1, 0x3fff, 0), 256, 44, 9600, false),
            Err(RxError::TooLong)
        );
        // Device-flagged errors.
        assert_eq!(
            check_rrd(
                &rrd(44, 1, 60, rrs::RX_ERR_SUM.mask()),
                256,
                44,
                1536,
                false
            ),
            Err(RxError::FrameError)
        );
        assert_eq!(
            check_rrd(
                &rrd(44, 1, 60, rrs::LEN_ERR_802_3.mask()),
                256,
                44,
                1536,
                false
            ),
            Err(RxError::FrameError)
        );
        // Edge: exactly header + FCS, exactly the buffer.
        assert_eq!(
            check_rrd(&rrd(44, 1, 18, 0), 256, 44, 1536, false).map(|f| f.len),
            Ok(14)
        );
        assert_eq!(
            check_rrd(&rrd(255, 1, 1536, 0), 256, 255, 1536, false).map(|f| f.len),
            Ok(1532)
        );
    }

    #[test]
    fn rrd_vlan() {
        let mut r = rrd(0, 1, 64, rrs::VLAN_INS.mask());
        r.vlan_tag = 0x0a00;
        assert_eq!(
            check_rrd(&r, 64, 0, 1536, false).map(|f| f.vlan),
            Ok(Some(0x0a00))
        );
    }

    #[test]
    fn tx_template_tso_v4() {
        let o = TxOffload {
            gso_size: 1448,
            transport_offset: 34,
            network_offset: 14,
            ..TxOffload::default()
        };
        let t = tx_template(&o);
        assert!(t.is_ok());
        let Ok(t) = t else { return };
        assert!(t.bit(tpd::LSO_EN) && t.bit(tpd::IPV4_PACKET));
        assert!(!t.bit(tpd::LSO_VER) && !t.bit(tpd::CCSUM_EN) && !t.bit(tpd::EOP));
        assert_eq!(t.field(tpd::MSS), 1448);
        assert_eq!(t.field(tpd::L4HDR_OFFSET), 34);
        assert_eq!(tpds_needed(2, &o, true), 4);
    }

    #[test]
    fn tx_template_tso_v6_uses_the_extension_tpd() {
        let o = TxOffload {
            gso_size: 1428,
            gso_v6: true,
            transport_offset: 54,
            network_offset: 14,
            ..TxOffload::default()
        };
        let t = tx_template(&o);
        assert!(t.is_ok());
        let Ok(t) = t else { return };
        assert!(t.bit(tpd::LSO_EN) && t.bit(tpd::LSO_VER) && !t.bit(tpd::IPV4_PACKET));
        let e = lso_ext(64000);
        assert!(e.bit(tpd::LSO_EN) && e.bit(tpd::LSO_VER));
        assert_eq!(e.buffer_addr, 64000);
        assert_eq!(e.buffer_len, 0);
        assert_eq!(tpds_needed(0, &o, true), 3);
        assert_eq!(tpds_needed(0, &o, false), 2);
    }

    #[test]
    fn tx_template_checksum_and_vlan() {
        let o = TxOffload {
            csum_partial: true,
            csum_start: 34,
            csum_offset: 16,
            vlan: Some(0x0123),
            network_offset: 14,
            ..TxOffload::default()
        };
        let t = tx_template(&o);
        assert!(t.is_ok());
        let Ok(t) = t else { return };
        assert!(t.bit(tpd::CCSUM_EN) && !t.bit(tpd::LSO_EN));
        assert_eq!(t.field(tpd::L4HDR_OFFSET), 17);
        assert_eq!(t.field(tpd::CCSUM_OFFSET), 25);
        assert!(t.bit(tpd::INS_VTAG));
        assert_eq!(t.vlan_tag, 0x2301);
        assert!(!t.bit(tpd::ETH_TYPE));
        assert_eq!(tpds_needed(3, &o, false), 4);
    }

    #[test]
    fn tx_template_rejects_what_the_tpd_cannot_hold() {
        let odd = TxOffload {
            csum_partial: true,
            csum_start: 35,
            csum_offset: 6,
            network_offset: 14,
            ..TxOffload::default()
        };
        assert_eq!(tx_template(&odd), Err(DescError::OddChecksumStart));
        let big_mss = TxOffload {
            gso_size: 0x2000,
            transport_offset: 34,
            network_offset: 14,
            ..TxOffload::default()
        };
        assert_eq!(tx_template(&big_mss), Err(DescError::FieldOverflow));
        let far = TxOffload {
            csum_partial: true,
            csum_start: 600,
            csum_offset: 6,
            network_offset: 14,
            ..TxOffload::default()
        };
        assert_eq!(tx_template(&far), Err(DescError::FieldOverflow));
        let vlan_hdr = TxOffload {
            network_offset: 18,
            ..TxOffload::default()
        };
        assert_eq!(
            tx_template(&vlan_hdr).map(|t| t.bit(tpd::ETH_TYPE)),
            Ok(true)
        );
    }

    #[test]
    fn ring_index_math() {
        assert!(RingIndex::new(0).is_none());
        assert!(RingIndex::new(1).is_none());
        let r = RingIndex::new(256);
        assert!(r.is_some());
        let Some(r) = r else { return };
        assert_eq!(r.next(0), 1);
        assert_eq!(r.next(255), 0);
        assert_eq!(r.advance(250, 10), 4);
        assert_eq!(r.used(0, 0), 0);
        assert_eq!(r.free(0, 0), 255);
        assert_eq!(r.used(10, 250), 16);
        assert_eq!(r.free(10, 250), 239);
        assert_eq!(r.free(249, 250), 0);
        assert!(r.valid_consumer(250, 10, 250));
        assert!(r.valid_consumer(5, 10, 250));
        assert!(r.valid_consumer(10, 10, 250));
        assert!(!r.valid_consumer(11, 10, 250));
        assert!(!r.valid_consumer(249, 10, 250));
        assert!(!r.valid_consumer(256, 10, 250));
        let big = RingIndex::new(u16::MAX);
        assert!(big.is_some());
        let Some(big) = big else { return };
        assert_eq!(big.advance(u16::MAX - 1, u16::MAX), u16::MAX - 1);
        assert_eq!(big.advance(u16::MAX - 1, u16::MAX - 1), u16::MAX - 2);
        assert_eq!(big.next(u16::MAX - 1), 0);
        // Out of range (a broken caller): still an index.
        assert_eq!(big.next(u16::MAX), 0);
        for i in 0..256 {
            assert_eq!(r.next(i), r.advance(i, 1));
        }
    }
}
