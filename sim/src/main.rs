// SPDX-License-Identifier: GPL-2.0

//! `atl1c-sim`: serves the device model to QEMU (`-device vfio-user-pci`) and connects its MAC
//! to a unix datagram socket, the far end of which is QEMU's `-netdev dgram` backend of the
//! guest's peer NIC.
//!
//! usage: atl1c-sim --personality mikrotik|ar8151 --socket PATH --wire PATH --peer PATH
//!                  --stats PATH [--mac XX:XX:XX:XX:XX:XX]

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use atl1c_sim::{pci, Device, Env, Fault, Personality};
use vfio_bindings::bindings::vfio::{
    vfio_region_info, VFIO_IRQ_INFO_AUTOMASKED, VFIO_IRQ_INFO_EVENTFD, VFIO_IRQ_INFO_MASKABLE,
    VFIO_IRQ_INFO_NORESIZE, VFIO_IRQ_SET_ACTION_TRIGGER, VFIO_IRQ_SET_DATA_EVENTFD,
    VFIO_IRQ_SET_DATA_NONE, VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX,
    VFIO_PCI_INTX_IRQ_INDEX, VFIO_PCI_MSI_IRQ_INDEX, VFIO_PCI_NUM_IRQS, VFIO_PCI_NUM_REGIONS,
    VFIO_REGION_INFO_FLAG_READ, VFIO_REGION_INFO_FLAG_WRITE,
};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, Server, ServerBackend, ServerRegion};

/// A piece of guest memory QEMU shared with us (DMA_MAP), mapped into this process.
struct Mapping {
    iova: u64,
    size: u64,
    ptr: *mut u8,
}

// SAFETY: the pointer is a private MAP_SHARED mapping owned by this struct; it is only
// dereferenced while the model's mutex is held, and unmapped in `Drop`.
unsafe impl Send for Mapping {}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`size` are exactly what mmap returned in `GuestMem::map`.
        unsafe { libc::munmap(self.ptr.cast(), self.size as usize) };
    }
}

/// Guest memory, as the set of DMA mappings.
#[derive(Default)]
struct GuestMem {
    maps: Vec<Mapping>,
}

impl GuestMem {
    fn map(&mut self, iova: u64, size: u64, offset: u64, fd: &File) -> std::io::Result<()> {
        // SAFETY: a fresh shared mapping of the fd QEMU passed; no existing memory is touched.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        self.unmap(iova, size);
        self.maps.push(Mapping {
            iova,
            size,
            ptr: ptr.cast(),
        });
        Ok(())
    }

    fn unmap(&mut self, iova: u64, size: u64) {
        self.maps
            .retain(|m| m.iova + m.size <= iova || iova + size <= m.iova);
    }

    /// Calls `f` with (host pointer, length, offset into the request) for each mapped piece
    /// of `[addr, addr + len)`; false if any byte is unmapped.
    fn each(&self, addr: u64, len: usize, mut f: impl FnMut(*mut u8, usize, usize)) -> bool {
        let mut done = 0usize;
        while done < len {
            let a = addr + done as u64;
            let Some(m) = self
                .maps
                .iter()
                .find(|m| m.iova <= a && a < m.iova + m.size)
            else {
                return false;
            };
            let off = (a - m.iova) as usize;
            let n = (len - done).min(m.size as usize - off);
            // SAFETY: `off + n <= m.size`, so the pointer stays inside the mapping.
            f(unsafe { m.ptr.add(off) }, n, done);
            done += n;
        }
        true
    }
}

/// Interrupt eventfds given by QEMU (SET_IRQS).
#[derive(Default)]
struct Irqs {
    intx: Option<File>,
    msi: Option<File>,
}

struct Io {
    mem: GuestMem,
    irqs: Irqs,
    msi_enabled: bool,
    /// Frames for the wire; a separate thread sends them, so that a peer that is not reading
    /// (QEMU's main loop waits while a vCPU waits for our MMIO reply) never blocks the model.
    wire: Sender<Vec<u8>>,
    /// Bytes queued for the wire, bounded by `WIRE_QUEUE_BYTES`.
    wire_queued: Arc<AtomicUsize>,
    /// Frames lost because the wire queue was full.
    wire_dropped: u64,
    /// SIM_CONTROL commands not understood (logged; SIM_STATS `control_errors`).
    control_errors: u64,
    start: Instant,
}

impl Env for Io {
    fn dma_read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        let dst = buf.as_mut_ptr();
        self.mem.each(addr, buf.len(), |p, n, at| {
            // SAFETY: `p` is valid for `n` bytes (see `each`); `dst + at .. + n` is inside
            // `buf`; guest memory and `buf` do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(p, dst.add(at), n) }
        })
    }

    fn dma_write(&mut self, addr: u64, data: &[u8]) -> bool {
        // Check first so that a partly unmapped write changes nothing.
        if !self.mem.each(addr, data.len(), |_, _, _| {}) {
            return false;
        }
        self.mem.each(addr, data.len(), |p, n, at| {
            // SAFETY: as in `dma_read`, with source and destination swapped.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr().add(at), p, n) }
        })
    }

    fn transmit(&mut self, frame: &[u8]) {
        // A slow peer (the guest's own virtio NIC under TCG) lags behind a pktgen flood: queue
        // up to WIRE_QUEUE_BYTES rather than lose frames the card did send.
        if self.wire_queued.load(Ordering::Relaxed) + frame.len() > WIRE_QUEUE_BYTES {
            self.wire_dropped += 1;
            return;
        }
        self.wire_queued.fetch_add(frame.len(), Ordering::Relaxed);
        if self.wire.send(frame.to_vec()).is_err() {
            self.wire_dropped += 1;
        }
    }

    fn interrupt(&mut self) {
        let fd = if self.msi_enabled {
            self.irqs.msi.as_mut()
        } else {
            self.irqs.intx.as_mut()
        };
        if let Some(f) = fd {
            let _ = f.write_all(&1u64.to_ne_bytes());
        }
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

/// Most bytes of frames waiting for the peer.
const WIRE_QUEUE_BYTES: usize = 64 << 20;

struct Model {
    dev: Device,
    io: Io,
}

struct Shared {
    model: Mutex<Model>,
    /// Woken when the device sets a timer deadline.
    timer: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Model> {
        // A panic while holding the lock is a bug in the model; keep serving with the state.
        self.model.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Backend {
    shared: Arc<Shared>,
}

impl ServerBackend for Backend {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> std::io::Result<()> {
        let mut m = self.shared.lock();
        let Model { dev, io } = &mut *m;
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => dev.cfg.read(offset as usize, data),
            VFIO_PCI_BAR0_REGION_INDEX => {
                for (i, chunk) in data.chunks_mut(8).enumerate() {
                    let v = dev.mmio_read(io, offset + (i * 8) as u64, chunk.len());
                    chunk.copy_from_slice(&v.to_le_bytes()[..chunk.len()]);
                }
            }
            _ => data.fill(0xff),
        }
        let wake = dev.deadline().is_some();
        drop(m);
        if wake {
            self.shared.timer.notify_one();
        }
        Ok(())
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> std::io::Result<()> {
        let mut m = self.shared.lock();
        let Model { dev, io } = &mut *m;
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => {
                dev.config_write(io, offset as usize, data);
                io.msi_enabled = dev.cfg.msi_enabled();
            }
            VFIO_PCI_BAR0_REGION_INDEX => {
                for (i, chunk) in data.chunks(8).enumerate() {
                    let mut b = [0u8; 8];
                    b[..chunk.len()].copy_from_slice(chunk);
                    dev.mmio_write(
                        io,
                        offset + (i * 8) as u64,
                        chunk.len(),
                        u64::from_le_bytes(b),
                    );
                }
            }
            _ => {}
        }
        let wake = dev.deadline().is_some();
        drop(m);
        if wake {
            self.shared.timer.notify_one();
        }
        Ok(())
    }

    fn dma_map(
        &mut self,
        _flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> std::io::Result<()> {
        let Some(fd) = fd else {
            // Memory without an fd cannot be reached (no DMA_READ/WRITE messages here).
            eprintln!("atl1c-sim: DMA_MAP {address:#x}+{size:#x} without fd ignored");
            return Ok(());
        };
        self.shared.lock().io.mem.map(address, size, offset, &fd)
    }

    fn dma_unmap(&mut self, _flags: DmaUnmapFlags, address: u64, size: u64) -> std::io::Result<()> {
        self.shared.lock().io.mem.unmap(address, size);
        Ok(())
    }

    fn reset(&mut self) -> std::io::Result<()> {
        let mut m = self.shared.lock();
        m.dev.function_reset();
        m.io.msi_enabled = false;
        Ok(())
    }

    fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        _start: u32,
        count: u32,
        fds: Vec<File>,
    ) -> std::io::Result<()> {
        let mut m = self.shared.lock();
        if flags & VFIO_IRQ_SET_ACTION_TRIGGER == 0 {
            // MASK/UNMASK of INTx: the line is re-signalled by the retrigger timer if needed.
            return Ok(());
        }
        let fd = if flags & VFIO_IRQ_SET_DATA_EVENTFD != 0 && count > 0 {
            fds.into_iter().next()
        } else if flags & VFIO_IRQ_SET_DATA_NONE != 0 && count == 0 {
            None
        } else {
            return Ok(());
        };
        match index {
            VFIO_PCI_INTX_IRQ_INDEX => m.io.irqs.intx = fd,
            VFIO_PCI_MSI_IRQ_INDEX => m.io.irqs.msi = fd,
            _ => {}
        }
        Ok(())
    }
}

fn regions() -> Vec<ServerRegion> {
    (0..VFIO_PCI_NUM_REGIONS)
        .map(|index| {
            let mut info = vfio_region_info {
                argsz: std::mem::size_of::<vfio_region_info>() as u32,
                index,
                ..Default::default()
            };
            let size = match index {
                VFIO_PCI_BAR0_REGION_INDEX => u64::from(pci::BAR0_SIZE),
                VFIO_PCI_CONFIG_REGION_INDEX => pci::CFG_SIZE as u64,
                _ => 0,
            };
            if size != 0 {
                info.size = size;
                info.flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
            }
            ServerRegion {
                region_info: info,
                sparse_areas: Vec::new(),
                mmap_fd: None,
            }
        })
        .collect()
}

fn irqs() -> Vec<IrqInfo> {
    (0..VFIO_PCI_NUM_IRQS)
        .map(|index| {
            let (count, flags) = match index {
                VFIO_PCI_INTX_IRQ_INDEX => (
                    1,
                    VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED,
                ),
                VFIO_PCI_MSI_IRQ_INDEX => (1, VFIO_IRQ_INFO_EVENTFD | VFIO_IRQ_INFO_NORESIZE),
                _ => (0, 0),
            };
            IrqInfo {
                index,
                flags,
                count,
            }
        })
        .collect()
}

fn write_stats(path: &Path, m: &Model) {
    let tmp = path.with_extension("tmp");
    let mut v = m.dev.stats_json();
    v["wire_tx_dropped"] = m.io.wire_dropped.into();
    v["control_errors"] = m.io.control_errors.into();
    // The model's own clock, for rates that must not depend on the guest's timekeeping.
    v["time_us"] = (m.io.now().as_micros() as u64).into();
    let body = v.to_string();
    if std::fs::write(&tmp, body).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Applies a command left in the control file ("link up", "link down", "tx hang"), then
/// removes it.
fn control_file(path: &Path, m: &mut Model) {
    let Ok(cmd) = std::fs::read_to_string(path) else {
        return;
    };
    // Writers rename a complete file into place; an empty one is still being written.
    if cmd.trim().is_empty() {
        return;
    }
    let _ = std::fs::remove_file(path);
    let Model { dev, io } = m;
    match cmd.trim() {
        "link up" => dev.set_link(io, true),
        "link down" => dev.set_link(io, false),
        "dump rx" => eprint!("{}", dev.dump_rx(io)),
        "wake magic" => dev.wake_magic(),
        "wake link" => dev.wake_link(),
        other => match Fault::from_command(other) {
            Some(f) => dev.inject(io, f),
            None => {
                io.control_errors += 1;
                eprintln!("atl1c-sim: unknown control command {other:?}");
            }
        },
    }
}

struct Args {
    personality: Personality,
    socket: PathBuf,
    wire: PathBuf,
    peer: PathBuf,
    stats: PathBuf,
    control: Option<PathBuf>,
    mac: [u8; 6],
}

fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let v: Vec<u8> = s
        .split(':')
        .map(|x| u8::from_str_radix(x, 16))
        .collect::<Result<_, _>>()
        .ok()?;
    v.try_into().ok()
}

fn parse_args() -> Result<Args, String> {
    let mut a = std::env::args().skip(1);
    let (mut pers, mut socket, mut wire, mut peer, mut stats) = (None, None, None, None, None);
    let mut control = None;
    let mut mac = [0x00, 0x13, 0x74, 0x00, 0x5c, 0x38];
    while let Some(k) = a.next() {
        let v = a.next().ok_or(format!("{k} needs a value"))?;
        match k.as_str() {
            "--personality" => {
                pers = Some(Personality::from_name(&v).ok_or(format!("unknown personality {v}"))?)
            }
            "--socket" => socket = Some(PathBuf::from(v)),
            "--wire" => wire = Some(PathBuf::from(v)),
            "--peer" => peer = Some(PathBuf::from(v)),
            "--stats" => stats = Some(PathBuf::from(v)),
            "--control" => control = Some(PathBuf::from(v)),
            "--mac" => mac = parse_mac(&v).ok_or(format!("bad MAC address {v}"))?,
            _ => return Err(format!("unknown option {k}")),
        }
    }
    Ok(Args {
        personality: pers.ok_or("--personality is required")?,
        socket: socket.ok_or("--socket is required")?,
        wire: wire.ok_or("--wire is required")?,
        peer: peer.ok_or("--peer is required")?,
        stats: stats.ok_or("--stats is required")?,
        control,
        mac,
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("atl1c-sim: {e}");
            eprintln!(
                "usage: atl1c-sim --personality mikrotik|ar8151 --socket PATH --wire PATH \
                 --peer PATH --stats PATH [--control PATH] [--mac XX:XX:XX:XX:XX:XX]"
            );
            return ExitCode::from(2);
        }
    };
    let _ = std::fs::remove_file(&args.wire);
    let wire = match UnixDatagram::bind(&args.wire) {
        Ok(w) => w,
        Err(e) => {
            eprintln!(
                "atl1c-sim: cannot bind wire socket {}: {e}",
                args.wire.display()
            );
            return ExitCode::FAILURE;
        }
    };
    let rx = match wire.try_clone() {
        Ok(w) => w,
        Err(e) => {
            eprintln!("atl1c-sim: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Wire, sending side.
    let (wire_tx, wire_rx) = channel::<Vec<u8>>();
    let wire_queued = Arc::new(AtomicUsize::new(0));
    let peer = args.peer.clone();
    let queued = wire_queued.clone();
    thread::spawn(move || {
        for frame in wire_rx {
            // The peer may not be listening (yet, or any more): that is a cable nobody holds.
            let _ = wire.send_to(&frame, &peer);
            queued.fetch_sub(frame.len(), Ordering::Relaxed);
        }
    });
    let shared = Arc::new(Shared {
        model: Mutex::new(Model {
            dev: Device::new(args.personality, args.mac),
            io: Io {
                mem: GuestMem::default(),
                irqs: Irqs::default(),
                msi_enabled: false,
                wire: wire_tx,
                wire_queued,
                wire_dropped: 0,
                control_errors: 0,
                start: Instant::now(),
            },
        }),
        timer: Condvar::new(),
    });

    // Wire: frames from the peer into the MAC.
    let s = shared.clone();
    thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        while let Ok(n) = rx.recv(&mut buf) {
            let mut m = s.lock();
            let Model { dev, io } = &mut *m;
            dev.receive(io, &buf[..n]);
            let wake = dev.deadline().is_some();
            drop(m);
            if wake {
                s.timer.notify_one();
            }
        }
    });

    // Timers (moderation, retrigger) and the stats file.
    let s = shared.clone();
    let stats_path = args.stats.clone();
    let control = args.control.clone();
    thread::spawn(move || {
        let mut last_stats = Instant::now() - Duration::from_secs(1);
        let mut m = s.lock();
        loop {
            let Model { dev, io } = &mut *m;
            let next = dev.tick(io);
            if last_stats.elapsed() >= Duration::from_millis(20) {
                if let Some(c) = &control {
                    control_file(c, &mut m);
                }
                write_stats(&stats_path, &m);
                last_stats = Instant::now();
            }
            let now = m.io.now();
            let wait = next
                .map(|d| d.saturating_sub(now))
                .unwrap_or(Duration::from_millis(20))
                .min(Duration::from_millis(20))
                .max(Duration::from_micros(20));
            m = s
                .timer
                .wait_timeout(m, wait)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    });

    let _ = std::fs::remove_file(&args.socket);
    let server = match Server::new(&args.socket, true, irqs(), regions()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("atl1c-sim: cannot listen on {}: {e}", args.socket.display());
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "atl1c-sim: {:?} listening on {}",
        args.personality,
        args.socket.display()
    );
    let mut backend = Backend {
        shared: shared.clone(),
    };
    let res = server.run(&mut backend);
    write_stats(&args.stats, &shared.lock());
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("atl1c-sim: vfio-user session ended: {e}");
            ExitCode::FAILURE
        }
    }
}
