// SPDX-License-Identifier: GPL-2.0

//! Property tests for ring index math and descriptor packing.

use crate::regs::Bits;
use crate::ring::{check_rrd, rrs, RingIndex, Rrd, RxError, Tpd, ETH_FCS_LEN, ETH_HLEN};
use proptest::prelude::*;

fn ring_and_span() -> impl Strategy<Value = (u16, u16, u16)> {
    (2u16..=u16::MAX).prop_flat_map(|count| (Just(count), 0..count, 0..count))
}

proptest! {
    #[test]
    fn used_plus_free_is_count_minus_one((count, ntu, ntc) in ring_and_span()) {
        let r = RingIndex::new(count).expect("count >= 2 by construction");
        prop_assert_eq!(u32::from(r.used(ntu, ntc)) + u32::from(r.free(ntu, ntc)), u32::from(count) - 1);
    }

    #[test]
    fn producing_n_uses_n((count, ntu, ntc) in ring_and_span(), n in 0u16..=u16::MAX) {
        let r = RingIndex::new(count).expect("count >= 2 by construction");
        let n = n % (r.free(ntu, ntc) + 1);
        let ntu2 = r.advance(ntu, n);
        prop_assert!(r.contains(ntu2));
        prop_assert_eq!(r.used(ntu2, ntc), r.used(ntu, ntc) + n);
    }

    #[test]
    fn next_matches_naive_wrap((count, i, _x) in ring_and_span()) {
        let r = RingIndex::new(count).expect("count >= 2 by construction");
        let naive = if i + 1 == count { 0 } else { i + 1 };
        prop_assert_eq!(r.next(i), naive);
    }

    #[test]
    fn consumer_check_accepts_exactly_the_span((count, ntu, ntc) in ring_and_span(), i in 0u16..=u16::MAX) {
        let r = RingIndex::new(count).expect("count >= 2 by construction");
        // Walk from ntc to ntu: those are the only acceptable consumer indices.
        let mut ok = false;
        let mut j = ntc;
        loop {
            if j == i { ok = true; }
            if j == ntu { break; }
            j = r.next(j);
        }
        prop_assert_eq!(r.valid_consumer(i, ntu, ntc), ok);
    }

    #[test]
    fn tpd_round_trips(len: u16, tag: u16, w1: u32, addr: u64) {
        let t = Tpd { buffer_len: len, vlan_tag: tag, word1: w1, buffer_addr: addr };
        prop_assert_eq!(Tpd::from_bytes(&t.to_bytes()), t);
    }

    #[test]
    fn rrd_round_trips(w0: u32, h: u32, tag: u16, flag: u16, w3: u32) {
        let r = Rrd { word0: w0, rss_hash: h, vlan_tag: tag, flag, word3: w3 };
        prop_assert_eq!(Rrd::from_bytes(&r.to_bytes()), r);
    }

    #[test]
    fn bits_set_get(hi in 0u32..32, lo_off in 0u32..32, raw: u32, v: u32) {
        let lo = lo_off.min(hi);
        let f = Bits::new(hi, lo);
        let set = f.set(raw, v);
        prop_assert_eq!(f.get(set), v & f.max());
        prop_assert_eq!(set & !f.mask(), raw & !f.mask());
    }

    /// Whatever the device writes, an accepted RRD never names an RFD outside the ring or a
    /// length beyond the buffer.
    #[test]
    fn accepted_rrds_are_in_bounds(w0: u32, w3: u32, count in 2u16..=1024, exp_off: u16, buf in 64u16..=16384) {
        let expected = exp_off % count;
        let r = Rrd { word0: w0, rss_hash: 0, vlan_tag: 0, flag: 0, word3: w3 | rrs::RXD_UPDATED.mask() };
        match check_rrd(&r, count, expected, buf, true) {
            Ok(f) => {
                prop_assert!(f.rfd_index < count);
                prop_assert_eq!(f.rfd_index, expected);
                prop_assert!(f.len + ETH_FCS_LEN <= buf);
            }
            // The verdict is the first rule the RRD breaks, in the order a reader of the C
            // driver would check them; an RRD that breaks none must have been accepted.
            Err(e) => {
                let index = rrs::RX_RFD_INDEX.get(w0);
                let size = rrs::PKT_SIZE.get(w3);
                let want = if rrs::RX_RFD_CNT.get(w0) != 1 {
                    RxError::BadRfdCount
                } else if index >= u32::from(count) {
                    RxError::IndexOutOfRange
                } else if index != u32::from(expected) {
                    RxError::IndexOutOfOrder
                } else if w3 & (rrs::RX_ERR_SUM.mask() | rrs::LEN_ERR_802_3.mask()) != 0 {
                    RxError::FrameError
                } else if size < u32::from(ETH_HLEN + ETH_FCS_LEN) {
                    RxError::TooShort
                } else if size > u32::from(buf) {
                    RxError::TooLong
                } else {
                    return Err(TestCaseError::fail(format!("a valid RRD was rejected: {e:?}")));
                };
                prop_assert_eq!(e, want);
            }
        }
    }
}
