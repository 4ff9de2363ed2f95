// SPDX-License-Identifier: GPL-2.0

//! Register map of the atl1c family and the Mikrotik 10/25G NIC (BAR0).
//!
//! Names follow the C driver's `atl1c_hw.h` without the `REG_` prefix, so `MASTER_CTRL::SOFT_RST`
//! here is `MASTER_CTRL_SOFT_RST` there. Each register is a newtype over its 32-bit value; fields
//! are [`Bit`] or [`Bits`] constants on it, read and written through [`Register`]'s methods.
//!
//! This file uses only `core`: it is compiled unchanged into the module and into host tests.

/// A single-bit field of a 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bit(u32);

impl Bit {
    /// The field at bit `n`.
    pub(crate) const fn new(n: u32) -> Self {
        assert!(n < 32);
        Self(n)
    }

    /// The field's mask in the register.
    pub(crate) const fn mask(self) -> u32 {
        1 << self.0
    }
}

/// A multi-bit field `hi:lo` of a 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bits {
    lo: u32,
    width: u32,
}

impl Bits {
    /// The field covering bits `hi` down to `lo`, both included.
    pub(crate) const fn new(hi: u32, lo: u32) -> Self {
        assert!(hi < 32 && lo <= hi);
        Self {
            lo,
            width: hi - lo + 1,
        }
    }

    /// The largest value the field holds.
    pub(crate) const fn max(self) -> u32 {
        u32::MAX >> (32 - self.width)
    }

    /// The field's mask in the register.
    pub(crate) const fn mask(self) -> u32 {
        self.max() << self.lo
    }

    /// Extracts the field from a raw register value.
    pub(crate) const fn get(self, raw: u32) -> u32 {
        (raw >> self.lo) & self.max()
    }

    /// Replaces the field in `raw` with `value`, truncated to the field's width.
    pub(crate) const fn set(self, raw: u32, value: u32) -> u32 {
        (raw & !self.mask()) | ((value & self.max()) << self.lo)
    }
}

/// A 32-bit device register at a fixed BAR0 offset.
pub(crate) trait Register: Copy {
    /// Offset in BAR0.
    const OFFSET: usize;

    /// Wraps a raw value read from the device.
    fn from_raw(raw: u32) -> Self;

    /// The raw value to write to the device.
    fn raw(self) -> u32;

    /// Reads a single-bit field.
    fn bit(self, f: Bit) -> bool {
        self.raw() & f.mask() != 0
    }

    /// Returns the value with a single-bit field set to `on`.
    #[must_use]
    fn with_bit(self, f: Bit, on: bool) -> Self {
        let raw = self.raw() & !f.mask();
        Self::from_raw(if on { raw | f.mask() } else { raw })
    }

    /// Reads a multi-bit field.
    fn field(self, f: Bits) -> u32 {
        f.get(self.raw())
    }

    /// Returns the value with a multi-bit field replaced (truncated to the field's width).
    #[must_use]
    fn with_field(self, f: Bits, value: u32) -> Self {
        Self::from_raw(f.set(self.raw(), value))
    }
}

macro_rules! register {
    ($(
        $(#[$doc:meta])*
        $name:ident @ $off:literal {
            $( $(#[$fdoc:meta])* $field:ident: $kind:ident = $hi:literal $(: $lo:literal)?; )*
        }
    )*) => {$(
        $(#[$doc])*
        // Register names keep the C spelling (`MASTER_CTRL`) so the two drivers can be grepped
        // side by side; the kernel's own `register!` makes the same choice.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub(crate) struct $name(pub u32);

        impl Register for $name {
            const OFFSET: usize = $off;

            fn from_raw(raw: u32) -> Self {
                Self(raw)
            }

            fn raw(self) -> u32 {
                self.0
            }
        }

        impl $name {
            $( $(#[$fdoc])* pub(crate) const $field: $kind = register!(@field $kind $hi $(: $lo)?); )*
        }
    )*};
    (@field Bit $n:literal) => { Bit::new($n) };
    (@field Bits $hi:literal : $lo:literal) => { Bits::new($hi, $lo) };
}

register! {
    /// TWSI (EEPROM loader) control.
    TWSI_CTRL @ 0x218 {
        /// Bus frequency: 0 = 100 kHz ... 3 = 400 kHz.
        FREQ: Bits = 25:24;
        /// A loader EEPROM is present.
        LD_EXIST: Bit = 23;
        /// Hardware load in progress.
        HW_LDSTAT: Bit = 12;
        /// Start a software load; clears itself when done.
        SW_LDSTART: Bit = 11;
        /// Load offset.
        LD_OFFSET: Bits = 7:0;
    }

    /// PCIe device miscellaneous control.
    PCIE_DEV_MISC_CTRL @ 0x21c {
        SERDES_SEL_DIN: Bit = 4;
        SERDES_ENDIAN: Bit = 3;
        SPIROM_EXIST: Bit = 2;
        EXT_PIPE: Bit = 1;
        RETRY_BUFDIS: Bit = 0;
    }

    /// PCIe PHY miscellaneous control.
    PCIE_PHYMISC @ 0x1000 {
        NFTS: Bits = 23:16;
        FORCE_RCV_DET: Bit = 2;
    }

    /// PCIe PHY miscellaneous control 2 (L2CB1 tuning).
    PCIE_PHYMISC2 @ 0x1004 {
        L0S_TH: Bits = 19:18;
        CDR_BW: Bits = 17:16;
    }

    /// TWSI debug: tells whether an EEPROM is attached.
    TWSI_DEBUG @ 0x1108 {
        DEV_EXIST: Bit = 29;
    }

    /// DMA debug.
    DMA_DBG @ 0x1114 {
        VENDOR_MSG: Bit = 0;
    }

    /// VPD EEPROM access.
    EEPROM_CTRL @ 0x12c0 {
        RW: Bit = 31;
        ACK: Bit = 30;
        ADDR: Bits = 25:16;
        DATA_HI: Bits = 15:0;
    }

    /// VPD EEPROM data, low word.
    EEPROM_DATA_LO @ 0x12c4 {}

    /// OTP control.
    OTP_CTRL @ 0x12f0 {
        CLK_EN: Bit = 1;
    }

    /// Power management: the MAC's own ASPM L0s/L1 control (the chip does not rely on the
    /// PCIe Link Control register for it).
    PM_CTRL @ 0x12f8 {
        HOTRST: Bit = 31;
        MAC_ASPM_CHK: Bit = 30;
        SA_DLY_EN: Bit = 29;
        L0S_BUFSRX_EN: Bit = 28;
        LCKDET_TIMER: Bits = 27:24;
        PM_REQ_TIMER: Bits = 23:20;
        /// L1D v2.0+: transmit L1 after L0s.
        TXL1_AFTER_L0S: Bit = 19;
        /// L1C: L1 entry timer (4 bits; L1D v2.0+ uses bits 18:16 only).
        L1_ENTRY_TIMER: Bits = 19:16;
        /// L1D v2.0+: L1 entry timer.
        L1D_L1_ENTRY_TM: Bits = 18:16;
        RCVR_WT_TIMER: Bit = 15;
        CLK_PWM_VER1_1: Bit = 14;
        CLK_SWH_L1: Bit = 13;
        ASPM_L0S_EN: Bit = 12;
        /// L1D v2.0+: receive L1 after L0s.
        RXL1_AFTER_L0S: Bit = 11;
        /// L1C: L0s entry timer (4 bits; L1D v2.0+ uses bits 10:8 only).
        L0S_ENTRY_TIMER: Bits = 11:8;
        /// L1D v2.0+: L0s entry timer.
        L1D_L0S_TIMER: Bits = 10:8;
        SERDES_BUFS_RX_L1_EN: Bit = 7;
        SERDES_PD_EX_L1: Bit = 6;
        SERDES_PLL_L1_EN: Bit = 5;
        SERDES_L1_EN: Bit = 4;
        ASPM_L1_EN: Bit = 3;
        CLK_REQ_EN: Bit = 2;
        RBER_EN: Bit = 1;
        SPRSDWER_EN: Bit = 0;
    }

    /// LTSSM identification control.
    LTSSM_ID_CTRL @ 0x12fc {
        EN_WRO: Bit = 12;
    }

    /// Master control: soft reset, interrupt moderation enables, chip revision.
    MASTER_CTRL @ 0x1400 {
        OTP_SEL: Bit = 31;
        DEV_NUM: Bits = 30:24;
        REV_NUM: Bits = 23:16;
        INT_RDCLR: Bit = 14;
        CLK_SEL_DIS: Bit = 12;
        /// Enables the rx interrupt moderation timer.
        RX_ITIMER_EN: Bit = 11;
        /// Enables the tx interrupt moderation timer.
        TX_ITIMER_EN: Bit = 10;
        MANU_INT: Bit = 9;
        MANUTIMER_EN: Bit = 8;
        SA_TIMER_EN: Bit = 7;
        OOB_DIS: Bit = 6;
        WAKEN_25M: Bit = 5;
        BERT_START: Bit = 4;
        PCIE_TSTMOD: Bits = 3:2;
        PCIE_RST: Bit = 1;
        /// Resets MAC and DMA; clears itself.
        SOFT_RST: Bit = 0;
    }

    /// Manual timer initial value.
    MANUAL_TIMER_INIT @ 0x1404 {}

    /// Interrupt moderation timers, in 2 us units.
    IRQ_MODRT_TIMER_INIT @ 0x1408 {
        /// Rx moderation.
        RX: Bits = 31:16;
        /// Tx moderation.
        TX: Bits = 15:0;
    }

    /// Gigabit PHY control.
    GPHY_CTRL @ 0x140c {
        ADDR: Bits = 23:19;
        BP_VLTGSW: Bit = 18;
        AB100_EN: Bit = 17;
        AB10_EN: Bit = 16;
        PHY_PLL_BYPASS: Bit = 15;
        PWDOWN_HW: Bit = 14;
        PHY_PLL_ON: Bit = 13;
        SEL_ANA_RST: Bit = 12;
        HIB_PULSE: Bit = 11;
        HIB_EN: Bit = 10;
        GIGA_DIS: Bit = 9;
        PHY_IDDQ_DIS: Bit = 8;
        PHY_IDDQ: Bit = 7;
        LPW_EXIT: Bit = 6;
        GATE_25M_EN: Bit = 5;
        REV_ANEG: Bit = 4;
        ANEG_NOW: Bit = 3;
        LED_MODE: Bit = 2;
        RTL_MODE: Bit = 1;
        /// Takes the PHY out of DSP reset.
        EXT_RESET: Bit = 0;
    }

    /// Block idle status.
    IDLE_STATUS @ 0x1410 {
        SFORCE: Bits = 17:14;
        CALIB_DONE: Bit = 13;
        CALIB_RES: Bits = 12:8;
        CALIBERR: Bits = 7:4;
        /// Tx queue, rx queue, tx MAC and rx MAC busy (`IDLE_STATUS_MASK`).
        BUSY: Bits = 3:0;
        TXQ_BUSY: Bit = 3;
        RXQ_BUSY: Bit = 2;
        TXMAC_BUSY: Bit = 1;
        RXMAC_BUSY: Bit = 0;
    }

    /// MDIO control: one PHY register transaction at a time.
    MDIO_CTRL @ 0x1414 {
        /// Clause 45 (extension) access, address in [`MDIO_EXTN`].
        MODE_EXT: Bit = 30;
        POST_READ: Bit = 29;
        AP_EN: Bit = 28;
        BUSY: Bit = 27;
        CLK_SEL: Bits = 26:24;
        START: Bit = 23;
        SPRES_PRMBL: Bit = 22;
        /// 1 = read, 0 = write.
        OP_READ: Bit = 21;
        REG: Bits = 20:16;
        DATA: Bits = 15:0;
    }

    /// MDIO extension (clause 45) address.
    MDIO_EXTN @ 0x1448 {
        PORTAD: Bits = 25:21;
        DEVAD: Bits = 20:16;
        REG: Bits = 15:0;
    }

    /// BIST control 0 (packet memory).
    BIST0_CTRL @ 0x141c {
        FUSE_FLAG: Bit = 2;
        SRAM_FAIL: Bit = 1;
        NOW: Bit = 0;
    }

    /// BIST control 1 (PCIe retry buffer).
    BIST1_CTRL @ 0x1420 {
        FUSE_FLAG: Bit = 2;
        SRAM_FAIL: Bit = 1;
        NOW: Bit = 0;
    }

    /// SerDes lock detect control and status.
    SERDES @ 0x1424 {
        PHY_CLK_SLOWDOWN: Bit = 18;
        MAC_CLK_SLOWDOWN: Bit = 17;
        SELFB_PLL: Bits = 15:14;
        PHYCLK_SEL_GTX: Bit = 13;
        PCIECLK_SEL_SRDS: Bit = 12;
        BUFS_RX_EN: Bit = 11;
        PD_RX: Bit = 10;
        PLL_EN: Bit = 9;
        EN: Bit = 8;
        SELFB_PLL_SEL_CSR: Bit = 6;
        SELFB_PLL_CSR: Bits = 5:4;
        VCO_SLOW: Bit = 3;
        VCO_FAST: Bit = 2;
        LOCK_DETECT_EN: Bit = 1;
        LOCK_DETECT: Bit = 0;
    }

    /// EEE low-power-idle decision timer.
    LPI_DECISN_TIMER @ 0x143c {}

    /// EEE low-power-idle control.
    LPI_CTRL @ 0x1440 {
        CHK_DA: Bit = 31;
        ENH_TO: Bits = 24:12;
        ENH_TH: Bits = 10:6;
        ENH_EN: Bit = 5;
        CHK_RX: Bit = 4;
        CHK_STATE: Bit = 3;
        GMII: Bit = 2;
        TO_PHY: Bit = 1;
        EN: Bit = 0;
    }

    /// EEE low-power-idle wait timer.
    LPI_WAIT @ 0x1444 {
        TIMER: Bits = 15:0;
    }

    /// MAC control.
    MAC_CTRL @ 0x1480 {
        SPEED_MODE_SW: Bit = 30;
        HASH_ALG_CRC32: Bit = 29;
        SINGLE_PAUSE_EN: Bit = 28;
        DBG: Bit = 27;
        BC_EN: Bit = 26;
        MC_ALL_EN: Bit = 25;
        RX_CHKSUM_EN: Bit = 24;
        TX_HUGE: Bit = 23;
        DBG_TX_BKPRESURE: Bit = 22;
        /// [`MacSpeed`] as its register value.
        SPEED: Bits = 21:20;
        TX_SIMURST: Bit = 19;
        SCNT: Bit = 17;
        TX_PAUSE: Bit = 16;
        PROMIS_EN: Bit = 15;
        RMV_VLAN: Bit = 14;
        PRMLEN: Bits = 13:10;
        HUGE_EN: Bit = 9;
        LENCHK: Bit = 8;
        PAD: Bit = 7;
        ADD_CRC: Bit = 6;
        DUPLX: Bit = 5;
        LOOPBACK: Bit = 4;
        RX_FLOW: Bit = 3;
        TX_FLOW: Bit = 2;
        RX_EN: Bit = 1;
        TX_EN: Bit = 0;
    }

    /// MAC inter-packet gap / inter-frame gap.
    MAC_IPG_IFG @ 0x1484 {
        IPGR2: Bits = 30:24;
        IPGR1: Bits = 22:16;
        MIFG: Bits = 15:8;
        IPGT: Bits = 6:0;
    }

    /// Station address, bytes 2..5 (byte 2 in bits 31:24).
    MAC_STA_ADDR @ 0x1488 {}

    /// Station address, bytes 0..1 (byte 0 in bits 15:8).
    MAC_STA_ADDR_HI @ 0x148c {}

    /// Multicast hash table, first word (the second is at `+4`).
    RX_HASH_TABLE @ 0x1490 {}

    /// MAC half-duplex control.
    MAC_HALF_DUPLX_CTRL @ 0x1498 {
        JAMIPG: Bits = 27:24;
        ABEBT: Bits = 23:20;
        ABEBE: Bit = 19;
        NO_BACK_P: Bit = 18;
        NO_BACK_C: Bit = 17;
        EXC_DEF_EN: Bit = 16;
        RETRY: Bits = 15:12;
        LCOL: Bits = 9:0;
    }

    /// Maximum frame length.
    MTU @ 0x149c {}

    /// Wake-on-LAN control.
    WOL_CTRL @ 0x14a0 {
        LNKCHG_ST: Bit = 10;
        MAGIC_ST: Bit = 9;
        PATTERN_ST: Bit = 8;
        OOB_EN: Bit = 6;
        LINK_CHG_PME_EN: Bit = 5;
        LINK_CHG_EN: Bit = 4;
        MAGIC_PME_EN: Bit = 3;
        MAGIC_EN: Bit = 2;
        PATTERN_PME_EN: Bit = 1;
        PATTERN_EN: Bit = 0;
    }

    /// Wake-on-LAN pattern lengths 0..3.
    WOL_PTLEN1 @ 0x14a4 {}

    /// Wake-on-LAN pattern lengths 4..7.
    WOL_PTLEN2 @ 0x14a8 {}

    /// SRAM partition: RFD ring 0 head/tail.
    SRAM_RFD0_INFO @ 0x1500 {
        TAIL_ADDR: Bits = 25:16;
        HEAD_ADDR: Bits = 9:0;
    }

    /// SRAM RFD length, in 8-byte units.
    RFD_NIC_LEN @ 0x1510 {
        LEN: Bits = 9:0;
    }

    /// SRAM partition: TPD head/tail.
    SRAM_TRD_ADDR @ 0x1518 {
        TAIL_ADDR: Bits = 25:16;
        HEAD_ADDR: Bits = 9:0;
    }

    /// SRAM TPD length, in 8-byte units.
    SRAM_TRD_LEN @ 0x151c {
        LEN: Bits = 9:0;
    }

    /// SRAM rx FIFO address.
    SRAM_RXF_ADDR @ 0x1520 {}

    /// SRAM rx FIFO length.
    SRAM_RXF_LEN @ 0x1524 {}

    /// SRAM tx FIFO address.
    SRAM_TXF_ADDR @ 0x1528 {}

    /// SRAM tx FIFO length.
    SRAM_TXF_LEN @ 0x152c {}

    /// Load pointers: set after programming ring heads; self-clearing.
    LOAD_PTR @ 0x1534 {}

    /// High 32 bits of every rx ring (RFD and RRD) base address.
    RX_BASE_ADDR_HI @ 0x1540 {}

    /// High 32 bits of every TPD ring base address.
    TX_BASE_ADDR_HI @ 0x1544 {}

    /// Number of RFDs per rx ring.
    RFD_RING_SIZE @ 0x1560 {
        SIZE: Bits = 11:0;
    }

    /// Rx buffer size in bytes.
    RX_BUF_SIZE @ 0x1564 {
        SIZE: Bits = 15:0;
    }

    /// Number of RRDs per rx ring.
    RRD_RING_SIZE @ 0x1578 {
        SIZE: Bits = 11:0;
    }

    /// Number of TPDs per tx ring.
    TPD_RING_SIZE @ 0x1584 {
        SIZE: Bits = 15:0;
    }

    /// Tx queue control.
    TXQ_CTRL @ 0x1590 {
        TXF_BURST_NUM: Bits = 31:16;
        PEDING_CLR: Bit = 8;
        LS_8023_EN: Bit = 7;
        ENH_MODE: Bit = 6;
        EN: Bit = 5;
        IP_OPTION_EN: Bit = 4;
        NUM_TPD_BURST: Bits = 3:0;
    }

    /// Jumbo threshold for TSO, in 8-byte units.
    TX_TSO_OFFLOAD_THRESH @ 0x1594 {
        THRESH: Bits = 10:0;
    }

    /// Tx FIFO water marks, in 8-byte units.
    TXF_WATER_MARK @ 0x1598 {
        HIGH: Bits = 27:16;
        LOW: Bits = 11:0;
    }

    /// Throughput monitor control.
    THRUPUT_MON_CTRL @ 0x159c {
        EN: Bit = 7;
        RATE: Bits = 1:0;
    }

    /// Rx queue control.
    RXQ_CTRL @ 0x15a0 {
        EN: Bit = 31;
        RX_CUT_THRU_EN: Bit = 30;
        RRS_HASH_CTRL_EN: Bit = 29;
        RSS_NIP_QUEUE_SEL: Bit = 28;
        RSS_MODE: Bits = 27:26;
        RFD_BURST_NUM: Bits = 25:20;
        IPV6_CHKSUM_CTRL_EN: Bit = 7;
        ASPM_THRUPUT_LIMIT: Bits = 1:0;
    }

    /// Free RFD thresholds.
    RFD_FREE_THRESH @ 0x15a4 {
        LO: Bits = 11:6;
        HI: Bits = 5:0;
    }

    /// Rx FIFO pause thresholds.
    RXQ_RXF_PAUSE_THRESH @ 0x15a8 {
        LO: Bits = 27:16;
        HI: Bits = 11:0;
    }

    /// RRD DMA control.
    RXD_DMA_CTRL @ 0x15ac {
        DOWN_TIMER: Bits = 31:16;
        THRESH: Bits = 11:0;
    }

    /// DMA engine control.
    DMA_CTRL @ 0x15c0 {
        SMB_NOW: Bit = 31;
        WPEND_CLR: Bit = 30;
        RPEND_CLR: Bit = 29;
        WDLY_CNT: Bits = 19:16;
        RDLY_CNT: Bits = 15:11;
        RREQ_PRI_DATA: Bit = 10;
        WREQ_BLEN: Bits = 9:7;
        RREQ_BLEN: Bits = 6:4;
        /// L1C: 0 = 64-byte, 1 = 128-byte read completion boundary.
        RCB_LEN128: Bit = 3;
        RORDER_MODE: Bits = 2:0;
    }

    /// Statistics message block timer, 2 us units.
    SMB_STAT_TIMER @ 0x15c4 {
        TIMER: Bits = 23:0;
    }

    /// TPD threshold that triggers a tx interrupt.
    TINT_TPD_THRESH @ 0x15c8 {}

    /// RFD ring 0 producer index (mailbox).
    MB_RFD0_PROD_IDX @ 0x15e0 {
        IDX: Bits = 15:0;
    }

    /// RFD rings 0 and 1 consumer indices.
    MB_RFD01_CONS_IDX @ 0x15f8 {
        RFD1: Bits = 31:16;
        RFD0: Bits = 15:0;
    }

    /// Interrupt status (write 1 to clear).
    ISR @ 0x1600 {
        DIS_INT: Bit = 31;
        PHY_LINKDOWN: Bit = 26;
        CERR_DETECTED: Bit = 25;
        NFERR_DETECTED: Bit = 24;
        FERR_DETECTED: Bit = 23;
        UR_DETECTED: Bit = 22;
        MAC_TX: Bit = 21;
        MAC_RX: Bit = 20;
        RX_PKT_3: Bit = 19;
        RX_PKT_2: Bit = 18;
        RX_PKT_1: Bit = 17;
        RX_PKT_0: Bit = 16;
        TX_PKT_0: Bit = 15;
        TXQ_TO_RST: Bit = 14;
        GPHY_LPW: Bit = 13;
        GPHY: Bit = 12;
        TX_CREDIT: Bit = 11;
        DMAW_TO_RST: Bit = 10;
        DMAR_TO_RST: Bit = 9;
        TXF_UR: Bit = 8;
        RFD3_UR: Bit = 7;
        RFD2_UR: Bit = 6;
        RFD1_UR: Bit = 5;
        RFD0_UR: Bit = 4;
        HW_RXF_OV: Bit = 3;
        MANUAL: Bit = 2;
        TIMER: Bit = 1;
        SMB: Bit = 0;
    }

    /// Interrupt mask; same bit layout as [`ISR`].
    IMR @ 0x1604 {}

    /// Interrupt retrigger timer, 2 us units.
    INT_RETRIG_TIMER @ 0x1608 {
        TIMER: Bits = 15:0;
    }

    /// Clock gating control.
    CLK_GATING_CTRL @ 0x1814 {
        RXMAC_EN: Bit = 5;
        TXMAC_EN: Bit = 4;
        RXQ_EN: Bit = 3;
        TXQ_EN: Bit = 2;
        DMAR_EN: Bit = 1;
        DMAW_EN: Bit = 0;
    }

    /// Debug data 0.
    DEBUG_DATA0 @ 0x1900 {}

    /// Debug data 1.
    DEBUG_DATA1 @ 0x1904 {}

    /// Mikrotik: reads [`MT_MAGIC`] on the Mikrotik 10/25G NIC.
    MT_MAGIC_REG @ 0x1f00 {}

    /// Mikrotik: queue mode.
    MT_MODE @ 0x1f04 {
        /// Four tx/rx queue pairs.
        Q4: Bit = 0;
    }

    /// Mikrotik: link speed in Mb/s; 0 while the link is down.
    MT_SPEED @ 0x1f08 {}

    /// Mikrotik: firmware version.
    MT_VERSION @ 0x1f0c {}
}

/// Value of `MT_MAGIC_REG` on the Mikrotik NIC (`MT_MAGIC` in the C driver).
pub(crate) const MT_MAGIC: u32 = 0xaabb_1234;

/// Size of BAR0.
pub(crate) const BAR0_SIZE: usize = 0x40000;

/// `ISR_TX_PKT_n`: tx completion interrupt per queue (queue 0 is bit 15, queues 1..3 are bits
/// 28..30 on the Mikrotik NIC).
pub(crate) const ISR_TX_PKT: [u32; 4] = [1 << 15, 1 << 28, 1 << 29, 1 << 30];

/// `ISR_RX_PKT_n`: rx interrupt per queue.
pub(crate) const ISR_RX_PKT: [u32; 4] = [1 << 16, 1 << 17, 1 << 18, 1 << 19];

/// `ISR_RFDn_UR`: a frame found rx ring n without a free RFD (the ring ran dry).
pub(crate) const ISR_RFD_UR: [u32; 4] = [1 << 4, 1 << 5, 1 << 6, 1 << 7];

/// The bits of every queue's cause in `causes`, ORed.
const fn all_queues(causes: [u32; 4]) -> u32 {
    let mut m = 0;
    let mut i = 0;
    while i < causes.len() {
        m |= causes[i];
        i += 1;
    }
    m
}

/// `ISR_RX_PKT` of every queue.
pub(crate) const ISR_RX_PKT_ALL: u32 = all_queues(ISR_RX_PKT);

/// `ISR_RFDn_UR` of every ring.
pub(crate) const ISR_RFD_UR_ALL: u32 = all_queues(ISR_RFD_UR);

/// Every rx and tx completion cause (`ISR_RX_PKT` and `ISR_TX_PKT` of all queues): what a
/// driver's NAPI instances handle.
pub(crate) const ISR_PKT: u32 = ISR_RX_PKT_ALL | all_queues(ISR_TX_PKT);

/// `IMR_NORMAL_MASK`: what the driver always keeps unmasked.
pub(crate) const IMR_NORMAL_MASK: u32 = ISR::MANUAL.mask()
    | ISR::HW_RXF_OV.mask()
    | ISR::RFD0_UR.mask()
    | ISR::TXF_UR.mask()
    | ISR::DMAR_TO_RST.mask()
    | ISR::TXQ_TO_RST.mask()
    | ISR::DMAW_TO_RST.mask()
    | ISR::GPHY.mask()
    | ISR::GPHY_LPW.mask()
    | ISR::PHY_LINKDOWN.mask();

/// `ISR_ERROR`: conditions that need a MAC reset.
pub(crate) const ISR_ERROR: u32 = ISR::DMAR_TO_RST.mask()
    | ISR::TXQ_TO_RST.mask()
    | ISR::DMAW_TO_RST.mask()
    | ISR::PHY_LINKDOWN.mask();

/// `ISR_OVER`: rx/tx FIFO and RFD underrun / overflow.
pub(crate) const ISR_OVER: u32 = ISR::RFD0_UR.mask()
    | ISR::RFD1_UR.mask()
    | ISR::RFD2_UR.mask()
    | ISR::RFD3_UR.mask()
    | ISR::HW_RXF_OV.mask()
    | ISR::TXF_UR.mask();

/// Per-queue register offsets, indexed by queue number (0..=3).
pub(crate) mod queue {
    /// `REG_RFDn_HEAD_ADDR_LO`.
    pub(crate) const RFD_HEAD_ADDR_LO: [usize; 4] = [0x1550, 0x1554, 0x1558, 0x155c];
    /// `REG_RRDn_HEAD_ADDR_LO`.
    pub(crate) const RRD_HEAD_ADDR_LO: [usize; 4] = [0x1568, 0x156c, 0x1570, 0x1574];
    /// `REG_TPD_PRIn_ADDR_LO`.
    pub(crate) const TPD_ADDR_LO: [usize; 4] = [0x1580, 0x157c, 0x1f10, 0x1f14];
    /// `REG_MB_RFDn_PROD_IDX`.
    pub(crate) const RFD_PROD_IDX: [usize; 4] = [0x15e0, 0x15e4, 0x15e8, 0x15ec];
    /// `REG_TPD_PRIn_PIDX`: 16-bit tx producer index, the tx doorbell.
    pub(crate) const TPD_PIDX: [usize; 4] = [0x15f2, 0x15f0, 0x1f1a, 0x1f18];
    /// `REG_TPD_PRIn_CIDX`: 16-bit tx consumer index.
    pub(crate) const TPD_CIDX: [usize; 4] = [0x15f6, 0x15f4, 0x1f1e, 0x1f1c];
}

/// MAC statistics counters, clear on read (`REG_MAC_RX_STATUS_BIN`..`REG_MAC_TX_STATUS_END`).
pub(crate) mod stats {
    /// First rx counter.
    pub(crate) const RX_BIN: usize = 0x1700;
    /// Last rx counter.
    pub(crate) const RX_END: usize = 0x175c;
    /// First tx counter.
    pub(crate) const TX_BIN: usize = 0x1760;
    /// Last tx counter.
    pub(crate) const TX_END: usize = 0x17c0;
    /// Number of rx counters (`struct atl1c_hw_stats` rx part).
    pub(crate) const RX_COUNT: usize = (RX_END - RX_BIN) / 4 + 1;
    /// Number of tx counters.
    pub(crate) const TX_COUNT: usize = (TX_END - TX_BIN) / 4 + 1;

    /// The counters' names, rx then tx, as `struct atl1c_hw_stats` has them (what
    /// `ethtool -S` shows, prefixed `mac_`).
    pub(crate) const NAMES: [&str; RX_COUNT + TX_COUNT] = [
        "rx_ok",
        "rx_bcast",
        "rx_mcast",
        "rx_pause",
        "rx_ctrl",
        "rx_fcs_err",
        "rx_len_err",
        "rx_byte_cnt",
        "rx_runt",
        "rx_frag",
        "rx_sz_64",
        "rx_sz_65_127",
        "rx_sz_128_255",
        "rx_sz_256_511",
        "rx_sz_512_1023",
        "rx_sz_1024_1518",
        "rx_sz_1519_max",
        "rx_sz_ov",
        "rx_rxf_ov",
        "rx_rrd_ov",
        "rx_align_err",
        "rx_bcast_byte_cnt",
        "rx_mcast_byte_cnt",
        "rx_err_addr",
        "tx_ok",
        "tx_bcast",
        "tx_mcast",
        "tx_pause",
        "tx_exc_defer",
        "tx_ctrl",
        "tx_defer",
        "tx_byte_cnt",
        "tx_sz_64",
        "tx_sz_65_127",
        "tx_sz_128_255",
        "tx_sz_256_511",
        "tx_sz_512_1023",
        "tx_sz_1024_1518",
        "tx_sz_1519_max",
        "tx_1_col",
        "tx_2_col",
        "tx_late_col",
        "tx_abort_col",
        "tx_underrun",
        "tx_rd_eop",
        "tx_len_err",
        "tx_trunc",
        "tx_bcast_byte",
        "tx_mcast_byte",
    ];

    /// Index of a counter in [`NAMES`] (and in the accumulated statistics).
    pub(crate) const fn index(name: &str) -> usize {
        let mut i = 0;
        while i < NAMES.len() {
            if str_eq(NAMES[i], name) {
                return i;
            }
            i += 1;
        }
        panic!("no such MAC counter");
    }

    const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    /// First rx size-bucket counter (64, 65-127, ..., 1519-max: seven buckets).
    pub(crate) const RX_SZ_64: usize = index("rx_sz_64");
    /// First tx size-bucket counter.
    pub(crate) const TX_SZ_64: usize = index("tx_sz_64");
    /// Size buckets per direction.
    pub(crate) const SZ_BUCKETS: usize = 7;
}

/// PHY (MII) registers specific to the AR8151 PHY, beyond the standard `mii.h` ones.
pub(crate) mod phy {
    /// PHY specific status.
    pub(crate) const MII_GIGA_PSSR: u16 = 0x11;
    /// Speed and duplex resolved.
    pub(crate) const GIGA_PSSR_SPD_DPLX_RESOLVED: u16 = 0x0800;
    /// Full duplex.
    pub(crate) const GIGA_PSSR_DPLX: u16 = 0x2000;
    /// Speed, bits 15:14.
    pub(crate) const GIGA_PSSR_SPEED: u16 = 0xc000;
    /// 10 Mb/s.
    pub(crate) const GIGA_PSSR_10MBS: u16 = 0x0000;
    /// 100 Mb/s.
    pub(crate) const GIGA_PSSR_100MBS: u16 = 0x4000;
    /// 1000 Mb/s.
    pub(crate) const GIGA_PSSR_1000MBS: u16 = 0x8000;
    /// Interrupt enable.
    pub(crate) const MII_IER: u16 = 0x12;
    /// Interrupt status.
    pub(crate) const MII_ISR: u16 = 0x13;
    /// Link-up interrupt.
    pub(crate) const IER_LINK_UP: u16 = 0x0400;
    /// Link-down interrupt.
    pub(crate) const IER_LINK_DOWN: u16 = 0x0800;
    /// Debug register address port.
    pub(crate) const MII_DBG_ADDR: u16 = 0x1d;
    /// Debug register data port.
    pub(crate) const MII_DBG_DATA: u16 = 0x1e;
}

/// MAC speed as programmed into `MAC_CTRL::SPEED` (`enum atl1c_mac_speed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MacSpeed {
    /// Not set.
    Speed0 = 0,
    /// 10 or 100 Mb/s.
    Speed10_100 = 1,
    /// 1000 Mb/s (and every Mikrotik rate).
    Speed1000 = 2,
}

impl MacSpeed {
    /// Decodes the register field; the reserved value 3 reads as `None`.
    pub(crate) const fn from_field(v: u32) -> Option<Self> {
        match v {
            0 => Some(Self::Speed0),
            1 => Some(Self::Speed10_100),
            2 => Some(Self::Speed1000),
            _ => None,
        }
    }
}

/// Splits a station address into the values of `MAC_STA_ADDR` and `MAC_STA_ADDR_HI`
/// (`atl1c_hw_set_mac_addr`).
pub(crate) const fn mac_to_regs(mac: [u8; 6]) -> (u32, u32) {
    let lo = u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]);
    let hi = u32::from_be_bytes([0, 0, mac[0], mac[1]]);
    (lo, hi)
}

/// Inverse of [`mac_to_regs`]: the address the two registers hold.
pub(crate) const fn regs_to_mac(lo: u32, hi: u32) -> [u8; 6] {
    let l = lo.to_be_bytes();
    let h = hi.to_be_bytes();
    [h[2], h[3], l[0], l[1], l[2], l[3]]
}

#[cfg(any(test, CONFIG_KUNIT))]
#[cfg_attr(not(test), kernel::prelude::kunit_tests(atl1c_rs_regs))]
mod tests {
    use super::*;

    #[test]
    fn field_masks() {
        assert_eq!(MASTER_CTRL::SOFT_RST.mask(), 1);
        assert_eq!(MASTER_CTRL::REV_NUM.mask(), 0x00ff_0000);
        assert_eq!(MAC_CTRL::SPEED.mask(), 0x0030_0000);
        assert_eq!(MDIO_CTRL::REG.mask(), 0x001f_0000);
        assert_eq!(IRQ_MODRT_TIMER_INIT::RX.mask(), 0xffff_0000);
        assert_eq!(IRQ_MODRT_TIMER_INIT::TX.max(), 0xffff);
        assert_eq!(Bits::new(31, 0).mask(), u32::MAX);
        assert_eq!(IDLE_STATUS::BUSY.mask(), 0xf);
    }

    #[test]
    fn field_round_trip() {
        let r = MAC_CTRL::default()
            .with_field(MAC_CTRL::SPEED, MacSpeed::Speed1000 as u32)
            .with_field(MAC_CTRL::PRMLEN, 7)
            .with_bit(MAC_CTRL::DUPLX, true)
            .with_bit(MAC_CTRL::RX_EN, true);
        assert_eq!(r.raw(), (2 << 20) | (7 << 10) | (1 << 5) | (1 << 1));
        assert_eq!(
            MacSpeed::from_field(r.field(MAC_CTRL::SPEED)),
            Some(MacSpeed::Speed1000)
        );
        assert_eq!(r.field(MAC_CTRL::PRMLEN), 7);
        assert!(r.bit(MAC_CTRL::DUPLX));
        assert!(!r.bit(MAC_CTRL::TX_EN));
        let r = r.with_bit(MAC_CTRL::DUPLX, false);
        assert!(!r.bit(MAC_CTRL::DUPLX));
        assert_eq!(r.field(MAC_CTRL::PRMLEN), 7);
    }

    #[test]
    fn field_truncates_to_width() {
        let r = IRQ_MODRT_TIMER_INIT::default()
            .with_field(IRQ_MODRT_TIMER_INIT::TX, 0x1_2345)
            .with_field(IRQ_MODRT_TIMER_INIT::RX, 100);
        assert_eq!(r.field(IRQ_MODRT_TIMER_INIT::TX), 0x2345);
        assert_eq!(r.raw(), (100 << 16) | 0x2345);
    }

    #[test]
    fn isr_groups_match_c() {
        // Values of the C macros in atl1c_hw.h.
        assert_eq!(IMR_NORMAL_MASK, 0x0400_771c);
        assert_eq!(ISR_ERROR, 0x0400_4600);
        assert_eq!(ISR_OVER, 0x0000_01f8);
        assert_eq!(ISR::TX_PKT_0.mask(), ISR_TX_PKT[0]);
        assert_eq!(ISR::RX_PKT_3.mask(), ISR_RX_PKT[3]);
        assert_eq!(ISR::RFD0_UR.mask(), ISR_RFD_UR[0]);
        assert_eq!(ISR::RFD3_UR.mask(), ISR_RFD_UR[3]);
        assert_eq!(ISR_PKT, 0x700f_8000);
        assert_eq!(ISR_RX_PKT_ALL, 0x000f_0000);
        assert_eq!(ISR_RFD_UR_ALL, 0x0000_00f0);
        assert_eq!(
            ISR_RFD_UR_ALL | ISR::HW_RXF_OV.mask() | ISR::TXF_UR.mask(),
            ISR_OVER
        );
        assert_eq!(MacSpeed::from_field(3), None);
    }

    #[test]
    fn stats_ranges() {
        assert_eq!(stats::RX_COUNT, 24);
        assert_eq!(stats::TX_COUNT, 25);
        assert_eq!(stats::RX_END + 4, stats::TX_BIN);
        // The names follow struct atl1c_hw_stats: the rx part ends where tx begins.
        assert_eq!(stats::NAMES[stats::RX_COUNT - 1], "rx_err_addr");
        assert_eq!(stats::NAMES[stats::RX_COUNT], "tx_ok");
        assert_eq!(stats::RX_SZ_64, 10);
        assert_eq!(stats::index("rx_rrd_ov"), 19);
        assert_eq!(stats::index("rx_rxf_ov"), 18);
        assert_eq!(stats::TX_SZ_64, stats::RX_COUNT + 8);
        assert_eq!(
            stats::NAMES[stats::TX_SZ_64 + stats::SZ_BUCKETS],
            "tx_1_col"
        );
        // Every name fits ETH_GSTRING_LEN (32) with the "mac_" prefix and its NUL.
        assert!(stats::NAMES.iter().all(|n| n.len() + 4 < 32));
    }

    #[test]
    fn mac_address_registers() {
        // atl1c_hw_set_mac_addr's own example: 00-0B-6A-F6-00-DC -> 0x6AF600DC, 0x000B.
        let mac = [0x00, 0x0b, 0x6a, 0xf6, 0x00, 0xdc];
        assert_eq!(mac_to_regs(mac), (0x6af6_00dc, 0x0000_000b));
        assert_eq!(regs_to_mac(0x6af6_00dc, 0x0000_000b), mac);
        assert_eq!(
            regs_to_mac(0x7400_5c38, 0xffff_0013),
            [0x00, 0x13, 0x74, 0x00, 0x5c, 0x38]
        );
    }
}
