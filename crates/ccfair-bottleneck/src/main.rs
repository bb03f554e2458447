//! ccfair-bottleneck: the testbed's userspace bottleneck, an L2 "bump in the
//! wire" running in the bottleneck network namespace.
//!
//! It opens one AF_PACKET raw socket per port (packet(7)): one port per sender
//! namespace and one towards the receiver namespace; its ports carry no IP
//! address, so the kernel does not route. Frames from a sender port go through
//! that port's forward delay line, the queue discipline (the simulator's own,
//! `ccfair_sim::qdisc::build`) and a token-bucket link at the configured rate
//! (see shaper.rs); frames from the receiver go through the destination port's
//! reverse delay line (destination found by learning source MACs on the sender
//! ports; unknown destinations are flooded, each copy through its port's delay line). Non-IPv4 frames (ARP) are
//! forwarded at once.
//!
//! Single-threaded: ppoll(2) with a nanosecond timeout on the earliest
//! deadline, CLOCK_MONOTONIC time (shared by every namespace on the host),
//! timer slack 1 ns (prctl PR_SET_TIMERSLACK), optional SCHED_FIFO.
//!
//! Kernel-qdisc mode (`kernel_qdisc = true`, the testbed's kernel bottleneck
//! path): the program only adds the per-direction delays; the forward frames
//! are handed to the receiver port's egress qdisc (no PACKET_QDISC_BYPASS on
//! that port), where tc's tbf and its child qdisc (configured by the runner)
//! rate-limit and queue them. A send the qdisc refuses fails with ENOBUFS
//! (net/packet/af_packet.c packet_snd: net_xmit_errno(NET_XMIT_DROP)); it is
//! counted as a drop of the frame's sender port.
//!
//! Each pass of the loop drains every sender port, then the receiver port.
//! Frames read in one pass are enqueued in port order, so when the queue has
//! one free place the first port's frame takes it: by default (`port_order`
//! "port") port 0, the first flow's sender, is read first on every pass;
//! "rotate" moves the first port on by one each pass; "arrival" admits the
//! due frames of every port in the order of their kernel receive timestamps
//! (docs/fidelity.md, "The testbed as the reference").
//!
//! Usage: ccfair-bottleneck CONFIG.json   (prints "ready" when the sockets are
//! bound; on SIGTERM/SIGINT, or when its parent dies, it writes the stats JSON
//! to `stats_path` and exits 0).
//!
//! Sources: packet(7) (AF_PACKET, PACKET_IGNORE_OUTGOING since Linux 4.20,
//! PACKET_QDISC_BYPASS, PACKET_STATISTICS), ppoll(2), Linux
//! net/sched/sch_tbf.c (token bucket), RFC 791 (IPv4 header checksum),
//! RFC 3168 (ECN field).

mod shaper;

use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use ccfair_sim::config::{LinkConfig, QdiscConfig};
use ccfair_sim::packet::Ecn;
use serde::Deserialize;
use shaper::{check_outages, MonitorConfig, Out, Shaper};

const ETH_P_ALL: u16 = 0x0003;
const ETH_P_IP: u16 = 0x0800;
const ETH_HEADER_BYTES: usize = 14;
const SOL_PACKET: i32 = 263;
const PACKET_STATISTICS: i32 = 6;
const PACKET_QDISC_BYPASS: i32 = 20;
const PACKET_IGNORE_OUTGOING: i32 = 23;
const PACKET_OUTGOING: u8 = 4;
/// Socket buffers: enough for a few thousand frames of backlog if the loop stalls.
const SOCKET_BUFFER_BYTES: i32 = 8 << 20;
/// Largest frame we accept (anything above the MTU means offloads are still on).
const MAX_FRAME_BYTES: usize = 65_600;
const MTU_FRAME_BYTES: usize = 1514;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    sender_ifaces: Vec<String>,
    receiver_iface: String,
    /// The dumbbell's link (absent for a topology, `links`).
    #[serde(default)]
    rate_bps: u64,
    #[serde(default)]
    qdisc: Option<QdiscConfig>,
    /// The dumbbell link's outages, `[start, duration]` ns after t0 (a topology's are its links').
    #[serde(default)]
    outages_ns: Vec<[u64; 2]>,
    /// A topology: its links, and per sender port the link indices its data frames
    /// (`fwd_paths`) and its ACK frames (`rev_paths`, empty = the reverse delay line only) cross.
    #[serde(default)]
    links: Vec<LinkConfig>,
    #[serde(default)]
    fwd_paths: Vec<Vec<usize>>,
    #[serde(default)]
    rev_paths: Vec<Vec<usize>>,
    /// The link whose series fill the single-queue statistics (a topology's narrowest link crossed by data).
    #[serde(default)]
    primary_link: usize,
    /// Run seed: randomised disciplines (PIE, FQ-CoDel's hash, PI2) draw from it.
    #[serde(default)]
    seed: u64,
    /// Added one-way delay per sender port, forward (towards the receiver) and reverse.
    fwd_delay_ns: Vec<u64>,
    rev_delay_ns: Vec<u64>,
    /// The dumbbell's token-bucket depth (S0: one frame).
    #[serde(default = "default_burst")]
    burst_bytes: u64,
    /// IP length of a full-size data packet: a topology's links each hold one frame in
    /// their token bucket (this plus the link's L2 overhead).
    #[serde(default = "default_burst")]
    packet_bytes: u64,
    t0_ns: u64,
    duration_ns: u64,
    bin_ns: u64,
    sample_ns: u64,
    sojourn_bin_ns: u64,
    window_start_ns: u64,
    window_end_ns: u64,
    stats_path: String,
    /// Run with SCHED_FIFO priority (needs CAP_SYS_NICE; ignored with a warning otherwise).
    #[serde(default)]
    realtime: bool,
    /// Kernel-qdisc mode (see the header): delay only; the receiver port's egress qdisc is the bottleneck.
    #[serde(default)]
    kernel_qdisc: bool,
    /// L2 bytes charged per frame on top of its IP length (the run's
    /// `bottleneck.l2_overhead_bytes`; 14 = the Ethernet frame as it is).
    #[serde(default)]
    l2_overhead_bytes: u32,
    /// The order in which frames of different sender ports that arrive together enter the queue.
    #[serde(default)]
    port_order: PortOrder,
}

/// How frames of different sender ports that one pass reads (or one poll finds due) are ordered
/// (the run's `testbed.bottleneck_order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum PortOrder {
    /// Port 0 read first on every pass; due frames enter port by port.
    #[default]
    Port,
    /// The first port read moves on by one each pass; due frames enter port by port.
    Rotate,
    /// Each frame stamped with the kernel's receive time (SO_TIMESTAMPNS) and the due frames of
    /// every port entering in the order of their times.
    Arrival,
}

/// The sender ports in the order one pass reads them, starting at `first`.
fn sender_port_order(first: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (first + k) % n)
}

/// The environment variable naming a file for the forward frames entering the link (shaper.rs
/// `SlotRecord`, CSV; a measurement tool, bench/fidelity_slots.py).
const SLOT_LOG_VAR: &str = "CCFAIR_BOTTLENECK_SLOT_LOG";

fn write_slot_log(path: &str, slots: &[shaper::SlotRecord]) -> std::io::Result<()> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(f, "due_ns,now_ns,port,queue_before,admitted,last_free_ns,last_free_poll_ns")?;
    for r in slots {
        let admitted = r.admitted as u8;
        writeln!(f, "{},{},{},{},{},{},{}", r.due_ns, r.now_ns, r.port, r.queue_before, admitted, r.last_free_ns, r.last_free_poll_ns)?;
    }
    f.flush()
}

fn default_burst() -> u64 {
    1500
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn real_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The SCM_TIMESTAMPNS receive time (CLOCK_REALTIME, ns) in a received message's control data.
fn receive_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: the CMSG macros walk the control buffer recvmsg filled, within msg_controllen.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return (ts.tv_sec > 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

fn die(msg: String) -> ! {
    eprintln!("ccfair-bottleneck: {msg}");
    std::process::exit(2);
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// One AF_PACKET socket bound to an interface.
struct Port {
    fd: i32,
}

fn setopt(fd: i32, level: i32, name: i32, val: i32) -> Result<(), String> {
    // SAFETY: fd is a socket, val lives across the call.
    let r = unsafe { libc::setsockopt(fd, level, name, &val as *const i32 as *const libc::c_void, std::mem::size_of::<i32>() as u32) };
    if r < 0 {
        return Err(os_err(&format!("setsockopt({level},{name})")));
    }
    Ok(())
}

/// `qdisc_bypass`: send straight to the driver (PACKET_QDISC_BYPASS), skipping the egress qdisc.
fn open_port(name: &str, qdisc_bypass: bool) -> Result<Port, String> {
    let cname = std::ffi::CString::new(name).map_err(|_| format!("bad interface name {name:?}"))?;
    // SAFETY: plain libc calls with valid arguments.
    let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
    if ifindex == 0 {
        return Err(os_err(&format!("interface {name}")));
    }
    let fd =
        unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, (ETH_P_ALL.to_be()) as i32) };
    if fd < 0 {
        return Err(os_err("socket(AF_PACKET)"));
    }
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = ETH_P_ALL.to_be();
    sll.sll_ifindex = ifindex as i32;
    let r = unsafe {
        libc::bind(fd, &sll as *const libc::sockaddr_ll as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32)
    };
    if r < 0 {
        return Err(os_err(&format!("bind to {name}")));
    }
    setopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)?;
    if qdisc_bypass {
        setopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1)?;
    }
    // Force variants exceed rmem_max/wmem_max (root); fall back to the plain ones.
    if setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, SOCKET_BUFFER_BYTES).is_err() {
        setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, SOCKET_BUFFER_BYTES)?;
    }
    if setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, SOCKET_BUFFER_BYTES).is_err() {
        setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, SOCKET_BUFFER_BYTES)?;
    }
    Ok(Port { fd })
}

/// Kernel drop counter of a packet socket (reset on read, so accumulate).
fn socket_drops(fd: i32) -> u64 {
    let mut st = [0u32; 2]; // struct tpacket_stats { tp_packets, tp_drops }
    let mut len = std::mem::size_of_val(&st) as u32;
    // SAFETY: st is large enough for tpacket_stats.
    let r = unsafe { libc::getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, st.as_mut_ptr() as *mut libc::c_void, &mut len) };
    if r < 0 {
        0
    } else {
        st[1] as u64
    }
}

/// Bytes the link charges a frame of `frame_len` bytes: its IP length plus the
/// configured L2 overhead (the simulator's `wire_bytes + l2_overhead_bytes`).
fn charged_bytes(frame_len: usize, l2_overhead_bytes: u32) -> u32 {
    frame_len.saturating_sub(ETH_HEADER_BYTES) as u32 + l2_overhead_bytes
}

/// IPv4 payload of an Ethernet frame, if it is one.
fn is_ipv4(frame: &[u8]) -> bool {
    frame.len() >= ETH_HEADER_BYTES + 20 && u16::from_be_bytes([frame[12], frame[13]]) == ETH_P_IP
}

/// TCP payload bytes of an IPv4 frame (IP total length - IP header - TCP header;
/// RFC 791 IHL, RFC 9293 data offset); 0 for anything but TCP or a truncated header.
fn tcp_payload_bytes(frame: &[u8]) -> u64 {
    if !is_ipv4(frame) {
        return 0;
    }
    let ip = &frame[ETH_HEADER_BYTES..];
    const IPPROTO_TCP: u8 = 6;
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if ip[9] != IPPROTO_TCP || ihl < 20 || ip.len() < ihl + 20 || total < ihl + 20 {
        return 0;
    }
    let doff = ((ip[ihl + 12] >> 4) as usize) * 4;
    total.saturating_sub(ihl + doff) as u64
}

/// (TCP source port, first sequence number, payload bytes) of an IPv4 TCP frame with payload.
fn tcp_segment(frame: &[u8]) -> Option<(u16, u32, u32)> {
    let payload = tcp_payload_bytes(frame) as u32;
    if payload == 0 {
        return None;
    }
    let ihl = ((frame[ETH_HEADER_BYTES] & 0x0f) as usize) * 4;
    let tcp = &frame[ETH_HEADER_BYTES + ihl..];
    Some((u16::from_be_bytes([tcp[0], tcp[1]]), u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]), payload))
}

/// Counts segments whose data the sender had already sent (RFC 9293 sequence space, with
/// wrap-around): a segment ending at or before the highest end seen on its connection.
#[derive(Default)]
struct RetransmitCounter {
    highest_end: HashMap<(usize, u16), u32>,
    count: Vec<u64>,
}

impl RetransmitCounter {
    fn see(&mut self, port: usize, frame: &[u8]) {
        let Some((sport, seq, len)) = tcp_segment(frame) else { return };
        let end = seq.wrapping_add(len);
        match self.highest_end.get_mut(&(port, sport)) {
            Some(h) if (end.wrapping_sub(*h) as i32) <= 0 => self.count[port] += 1,
            Some(h) => *h = end,
            None => {
                self.highest_end.insert((port, sport), end);
            }
        }
    }
}

fn ecn_of(frame: &[u8]) -> Ecn {
    if !is_ipv4(frame) {
        return Ecn::NotEct;
    }
    match frame[ETH_HEADER_BYTES + 1] & 0b11 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// IPv4 header checksum (RFC 791; one's-complement sum, RFC 1071) of `hdr`
/// with its checksum field taken as zero.
fn ipv4_checksum(hdr: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for i in (0..hdr.len()).step_by(2) {
        if i == 10 {
            continue;
        }
        sum += u16::from_be_bytes([hdr[i], hdr[i + 1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Set the CE codepoint (RFC 3168) and recompute the IPv4 header checksum.
fn set_ce(frame: &mut [u8]) {
    if !is_ipv4(frame) {
        return;
    }
    let ip = &mut frame[ETH_HEADER_BYTES..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    if ip.len() < ihl || ihl < 20 {
        return;
    }
    ip[1] |= 0b11;
    let c = ipv4_checksum(&ip[..ihl]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
}

/// Frame buffers, reused.
struct Slab {
    frames: Vec<Vec<u8>>,
    free: Vec<usize>,
}

impl Slab {
    fn alloc(&mut self, data: &[u8]) -> usize {
        if let Some(i) = self.free.pop() {
            self.frames[i].clear();
            self.frames[i].extend_from_slice(data);
            i
        } else {
            self.frames.push(data.to_vec());
            self.frames.len() - 1
        }
    }
    fn release(&mut self, i: usize) {
        self.free.push(i);
    }
}

struct Io {
    ports: Vec<Port>, // senders 0..n, receiver n
    tx_errors: u64,
}

impl Io {
    /// Send a frame; Err(errno) if the kernel refused it (counted in `tx_errors` unless the caller handles it).
    fn try_send(&mut self, port: usize, frame: &[u8]) -> Result<(), i32> {
        // SAFETY: fd is a bound packet socket; frame is a valid buffer.
        let r = unsafe { libc::send(self.ports[port].fd, frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        if r < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(())
    }

    fn send(&mut self, port: usize, frame: &[u8]) {
        if self.try_send(port, frame).is_err() {
            self.tx_errors += 1;
        }
    }
}

/// The dumbbell needs `rate_bps` and `qdisc`; a topology needs valid links and one forward
/// and one reverse path of known link indices per sender port.
fn check_topology(cfg: &Config) -> Result<(), String> {
    let n = cfg.sender_ifaces.len();
    if cfg.links.is_empty() {
        if !cfg.kernel_qdisc && (cfg.rate_bps == 0 || cfg.qdisc.is_none()) {
            return Err("rate_bps > 0 and qdisc are required without links".into());
        }
        if cfg.kernel_qdisc && !cfg.outages_ns.is_empty() {
            return Err("kernel_qdisc takes no outages: the kernel's tbf cannot stop its link".into());
        }
        return check_outages(&cfg.outages_ns, cfg.t0_ns);
    }
    if !cfg.outages_ns.is_empty() {
        return Err("outages_ns is the dumbbell link's; a topology's outages are its links'".into());
    }
    if cfg.kernel_qdisc {
        return Err("kernel_qdisc takes no links: the kernel bottleneck is one link".into());
    }
    for (k, l) in cfg.links.iter().enumerate() {
        l.validate().map_err(|(field, msg)| format!("links.{k}.{field}: {msg}"))?;
        check_outages(&l.outages_ns, cfg.t0_ns).map_err(|e| format!("links.{k}.{e}"))?;
    }
    if cfg.fwd_paths.len() != n || cfg.rev_paths.len() != n {
        return Err("fwd_paths and rev_paths need one entry per sender port".into());
    }
    for (i, p) in cfg.fwd_paths.iter().chain(cfg.rev_paths.iter()).enumerate() {
        if p.iter().any(|&k| k >= cfg.links.len()) {
            return Err(format!("path {i} names a link index beyond the {} links", cfg.links.len()));
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        die("usage: ccfair-bottleneck CONFIG.json".into());
    }
    let cfg = load_config(&args[1]).unwrap_or_else(|e| die(e));
    let order = cfg.port_order;
    let rotate = order == PortOrder::Rotate;
    set_up_process(cfg.realtime);
    let n = cfg.sender_ifaces.len();
    let mut io = Io { ports: Vec::with_capacity(n + 1), tx_errors: 0 };
    for name in &cfg.sender_ifaces {
        let port = open_port(name, true).unwrap_or_else(|e| die(e));
        if order == PortOrder::Arrival {
            setopt(port.fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1).unwrap_or_else(|e| die(e));
        }
        io.ports.push(port);
    }
    io.ports.push(open_port(&cfg.receiver_iface, !cfg.kernel_qdisc).unwrap_or_else(|e| die(e)));
    let mut bridge = Bridge::new(&cfg, io);
    bridge.stamped = order == PortOrder::Arrival;
    bridge.shaper.merge_by_due = order == PortOrder::Arrival;
    let slot_log = std::env::var(SLOT_LOG_VAR).ok();
    if slot_log.is_some() {
        bridge.shaper.slot_log = Some(Vec::with_capacity(1 << 20));
    }
    let mut buf = vec![0u8; MAX_FRAME_BYTES];
    let mut pfds: Vec<libc::pollfd> = bridge.io.ports.iter().map(|p| libc::pollfd { fd: p.fd, events: libc::POLLIN, revents: 0 }).collect();

    println!("ready");
    let _ = std::io::stdout().flush();

    let mut first = 0usize;
    while !STOP.load(Ordering::SeqCst) {
        for port in sender_port_order(first, n) {
            bridge.receive(port, &mut buf);
        }
        bridge.receive(n, &mut buf);
        if rotate && n > 0 {
            first = (first + 1) % n;
        }
        bridge.send_due();
        // Sleep until the next deadline or a frame arrives.
        let deadline = bridge.shaper.next_deadline();
        let now = now_ns();
        let wait = deadline.saturating_sub(now).min(100_000_000);
        if deadline != u64::MAX && deadline <= now {
            continue;
        }
        let ts = libc::timespec { tv_sec: (wait / 1_000_000_000) as i64, tv_nsec: (wait % 1_000_000_000) as i64 };
        // SAFETY: pfds is a valid array; ts lives across the call.
        unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    }
    let slots = bridge.shaper.slot_log.take();
    let stamps = (bridge.unstamped, std::mem::take(&mut bridge.stamp_lead_us));
    let mut stats = bridge.finish();
    stats.port_order = serde_json::to_value(order).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    stats.unstamped_frames = (order == PortOrder::Arrival).then_some(stamps.0);
    if let (Some(path), Some(slots)) = (slot_log, slots) {
        let lead = format!("unstamped {}\nread - stamp per us: {:?}\n", stamps.0, stamps.1);
        if let Err(e) = write_slot_log(&path, &slots).and_then(|_| std::fs::write(format!("{path}.stamps"), lead)) {
            die(format!("{path}: {e}"));
        }
    }
    let json = serde_json::to_string(&stats).expect("stats serialize");
    let tmp = format!("{}.tmp", cfg.stats_path);
    if let Err(e) = std::fs::write(&tmp, json).and_then(|_| std::fs::rename(&tmp, &cfg.stats_path)) {
        die(format!("{}: {e}", cfg.stats_path));
    }
}

/// The configuration file `path`, decoded and checked.
fn load_config(path: &str) -> Result<Config, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let cfg: Config = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let n = cfg.sender_ifaces.len();
    if n == 0 || cfg.fwd_delay_ns.len() != n || cfg.rev_delay_ns.len() != n {
        return Err("sender_ifaces, fwd_delay_ns and rev_delay_ns must have the same, non-zero length".into());
    }
    if cfg.bin_ns == 0 || cfg.sample_ns == 0 || cfg.sojourn_bin_ns == 0 {
        return Err("bin_ns, sample_ns and sojourn_bin_ns must be > 0".into());
    }
    check_topology(&cfg)?;
    Ok(cfg)
}

/// Signal handlers (SIGTERM, SIGINT: stop), SIGTERM when the parent dies, 1 ns timer slack,
/// SCHED_FIFO if `realtime` (a warning when refused).
fn set_up_process(realtime: bool) {
    // SAFETY: installing async-signal-safe handlers and process attributes.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        libc::prctl(libc::PR_SET_TIMERSLACK, 1);
        if realtime {
            let p = libc::sched_param { sched_priority: 10 };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
                eprintln!("ccfair-bottleneck: warning: {}", os_err("SCHED_FIFO"));
            }
        }
    }
}

/// The shaper `cfg` asks for: delay only (the kernel bottleneck), a topology's links or the dumbbell's link.
fn build_shaper(cfg: &Config) -> Shaper {
    let mon = MonitorConfig {
        t0_ns: cfg.t0_ns,
        duration_ns: cfg.duration_ns,
        bin_ns: cfg.bin_ns,
        sample_ns: cfg.sample_ns,
        sojourn_bin_ns: cfg.sojourn_bin_ns,
        window_start_ns: cfg.window_start_ns,
        window_end_ns: cfg.window_end_ns,
    };
    let (fwd, rev) = (cfg.fwd_delay_ns.clone(), cfg.rev_delay_ns.clone());
    if cfg.kernel_qdisc {
        Shaper::delay_only(fwd, rev, mon)
    } else if !cfg.links.is_empty() {
        let links: Vec<(LinkConfig, u64)> = cfg.links.iter().map(|l| (l.clone(), cfg.packet_bytes + l.l2_overhead_bytes as u64)).collect();
        let mut s = Shaper::topology(&links, cfg.fwd_paths.clone(), cfg.rev_paths.clone(), cfg.seed, fwd, rev, mon);
        s.set_primary(cfg.primary_link);
        s
    } else {
        let qdisc = cfg.qdisc.as_ref().expect("checked");
        let mut s = Shaper::new(cfg.rate_bps, cfg.burst_bytes, qdisc, cfg.seed, fwd, rev, mon);
        s.set_outages(&cfg.outages_ns);
        s
    }
}

/// The bump in the wire: the ports, the frames in flight, the shaper, and what is counted
/// besides the shaper's statistics.
struct Bridge {
    io: Io,
    shaper: Shaper,
    slab: Slab,
    /// Sender ports: 0..n; the receiver port is n.
    n: usize,
    /// Charged on top of a frame's IP length (0 for a topology: its links each add their own).
    l2_overhead_bytes: u32,
    kernel_qdisc: bool,
    /// Sender port each forward frame came from, by slab index (kernel-qdisc drops are charged to it).
    origin: Vec<usize>,
    macs: HashMap<[u8; 6], usize>,
    out: Vec<Out>,
    freed: Vec<usize>,
    /// Per sender port: frames handed to the receiver port and their TCP payload bytes.
    fwd_packets: Vec<u64>,
    fwd_payload: Vec<u64>,
    retrans: RetransmitCounter,
    oversize: u64,
    /// Sender ports carry the kernel's receive time (SO_TIMESTAMPNS): a frame arrived then.
    stamped: bool,
    /// With `stamped`: frames read without a usable stamp, and per 1 us (up to 1 ms) how long
    /// before its read a stamped frame arrived (written beside the slot log).
    unstamped: u64,
    stamp_lead_us: Vec<u64>,
}

impl Bridge {
    fn new(cfg: &Config, io: Io) -> Bridge {
        let n = cfg.sender_ifaces.len();
        Bridge {
            io,
            shaper: build_shaper(cfg),
            slab: Slab { frames: Vec::new(), free: Vec::new() },
            n,
            l2_overhead_bytes: if cfg.links.is_empty() { cfg.l2_overhead_bytes } else { 0 },
            kernel_qdisc: cfg.kernel_qdisc,
            origin: Vec::new(),
            macs: HashMap::new(),
            out: Vec::new(),
            freed: Vec::new(),
            fwd_packets: vec![0; n],
            fwd_payload: vec![0; n],
            retrans: RetransmitCounter { count: vec![0; n], ..Default::default() },
            oversize: 0,
            stamped: false,
            unstamped: 0,
            stamp_lead_us: vec![0; 1001],
        }
    }

    /// Receive everything pending on `port` (into `buf`).
    fn receive(&mut self, port: usize, buf: &mut [u8]) {
        let stamped = self.stamped && port < self.n;
        // CLOCK_REALTIME - CLOCK_MONOTONIC: the receive stamps are CLOCK_REALTIME.
        let real_minus_mono = if stamped { real_ns() as i128 - now_ns() as i128 } else { 0 };
        loop {
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut cmsg = [0u64; 8];
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
            // SAFETY: an all-zero msghdr is valid; its pointers are set below.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_name = &mut from as *mut libc::sockaddr_ll as *mut libc::c_void;
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            if stamped {
                msg.msg_control = cmsg.as_mut_ptr() as *mut libc::c_void;
                msg.msg_controllen = std::mem::size_of_val(&cmsg);
            }
            // SAFETY: msg points at valid buffers of the given sizes.
            let r = unsafe { libc::recvmsg(self.io.ports[port].fd, &mut msg, libc::MSG_DONTWAIT) };
            if r <= 0 {
                break;
            }
            let arrived = if stamped { receive_stamp(&msg).map(|t| (t as i128 - real_minus_mono) as u64) } else { None };
            if from.sll_pkttype == PACKET_OUTGOING {
                continue;
            }
            let frame = &buf[..r as usize];
            if frame.len() > MTU_FRAME_BYTES {
                self.oversize += 1;
            }
            if frame.len() < ETH_HEADER_BYTES {
                continue;
            }
            if port < self.n {
                self.sender_frame(port, frame, arrived);
            } else {
                self.receiver_frame(frame);
            }
        }
    }

    /// A frame from sender port `port` (that arrived at `arrived`, the kernel's receive time, if
    /// known; else now): an IPv4 frame into its forward path, anything else (ARP) on at once.
    fn sender_frame(&mut self, port: usize, frame: &[u8], arrived: Option<u64>) {
        let read = now_ns();
        let now = arrived.map_or(read, |t| t.min(read));
        if self.stamped {
            match arrived {
                Some(t) => self.stamp_lead_us[(read.saturating_sub(t) / 1000).min(1000) as usize] += 1,
                None => self.unstamped += 1,
            }
        }
        let src: [u8; 6] = frame[6..12].try_into().unwrap();
        if src[0] & 1 == 0 {
            self.macs.insert(src, port);
        }
        if is_ipv4(frame) {
            self.retrans.see(port, frame);
            let s = self.slab.alloc(frame);
            if self.origin.len() <= s {
                self.origin.resize(s + 1, 0);
            }
            self.origin[s] = port;
            self.shaper.arrive_fwd(now, port, s);
        } else {
            self.io.send(self.n, frame);
        }
    }

    /// A frame from the receiver port, towards the sender port that has its destination MAC.
    fn receiver_frame(&mut self, frame: &[u8]) {
        let now = now_ns();
        let dst: [u8; 6] = frame[0..6].try_into().unwrap();
        match self.macs.get(&dst) {
            Some(&to) if is_ipv4(frame) => {
                let s = self.slab.alloc(frame);
                self.shaper.arrive_rev(now, to, s);
            }
            Some(&to) => self.io.send(to, frame),
            // Unknown destination (not yet learned, e.g. the SYN of a connection the
            // receiver opens): flooded, through every port's reverse delay line, so
            // that it is not faster than the frames that follow it.
            None if is_ipv4(frame) => {
                for to in 0..self.n {
                    let s = self.slab.alloc(frame);
                    self.shaper.arrive_rev(now, to, s);
                }
            }
            None => {
                for to in 0..self.n {
                    self.io.send(to, frame);
                }
            }
        }
    }

    /// Send everything due now (CE marks set as the queue discipline decided).
    fn send_due(&mut self) {
        let now = now_ns();
        {
            let frames = &self.slab.frames;
            let l2 = self.l2_overhead_bytes;
            let info = |s: usize| {
                let f = &frames[s];
                (charged_bytes(f.len(), l2), ecn_of(f))
            };
            let mut to_mark: Vec<usize> = Vec::new();
            self.shaper.poll(now, &info, &mut |s| to_mark.push(s), &mut self.out, &mut self.freed);
            for s in to_mark {
                set_ce(&mut self.slab.frames[s]);
            }
        }
        let rx = self.n;
        let mut out = std::mem::take(&mut self.out);
        for o in out.drain(..) {
            let s = match o {
                Out::Receiver(s) => {
                    match self.io.try_send(rx, &self.slab.frames[s]) {
                        Ok(()) => {
                            self.fwd_packets[self.origin[s]] += 1;
                            self.fwd_payload[self.origin[s]] += tcp_payload_bytes(&self.slab.frames[s]);
                        }
                        // Kernel-qdisc mode: the egress qdisc refused the frame (a drop).
                        Err(libc::ENOBUFS) if self.kernel_qdisc => self.shaper.stats.drops[self.origin[s]] += 1,
                        Err(_) => self.io.tx_errors += 1,
                    }
                    s
                }
                Out::Sender { port, slab: s } => {
                    self.io.send(port, &self.slab.frames[s]);
                    s
                }
            };
            self.slab.release(s);
        }
        self.out = out;
        for s in self.freed.drain(..) {
            self.slab.release(s);
        }
    }

    /// The statistics for the stats file (the shaper's and the counters here); the sockets closed.
    fn finish(mut self) -> shaper::Stats {
        let rx_drops: Vec<u64> = self.io.ports.iter().map(|p| socket_drops(p.fd)).collect();
        self.shaper.finish();
        let mut stats = std::mem::take(&mut self.shaper.stats);
        stats.rx_socket_drops = rx_drops;
        stats.tx_errors = self.io.tx_errors;
        stats.oversize_frames = self.oversize;
        stats.flow_fwd_packets = self.fwd_packets;
        stats.flow_fwd_payload_bytes = self.fwd_payload;
        stats.flow_retransmitted_segments = self.retrans.count;
        for p in &self.io.ports {
            // SAFETY: closing our own descriptors.
            unsafe { libc::close(p.fd) };
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_order_reads_port_0_first_on_every_pass_and_rotate_moves_the_first_port_on() {
        assert_eq!(sender_port_order(0, 3).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(sender_port_order(2, 3).collect::<Vec<_>>(), [2, 0, 1]);
        let order = |v: &str| serde_json::from_str::<PortOrder>(v).map_err(|e| e.to_string());
        assert_eq!(PortOrder::default(), PortOrder::Port);
        assert_eq!(order("\"port\""), Ok(PortOrder::Port));
        assert_eq!(order("\"rotate\""), Ok(PortOrder::Rotate));
        assert_eq!(order("\"arrival\""), Ok(PortOrder::Arrival));
        let e = order("\"random\"").unwrap_err();
        assert!(e.contains("random") && e.contains("`port`, `rotate`, `arrival`"), "{e}");
    }

    #[test]
    fn a_full_frame_is_charged_its_ip_length_plus_the_l2_overhead() {
        // MSS 1448 + 52 header bytes + 14 Ethernet header = a 1514-byte frame.
        assert_eq!(charged_bytes(1514, 14), 1514);
        assert_eq!(charged_bytes(1514, 0), 1500);
        assert_eq!(charged_bytes(1514, 38), 1538); // + preamble, FCS and inter-frame gap
    }

    #[test]
    fn tcp_payload_is_ip_length_minus_ip_and_tcp_headers() {
        let mut f = vec![0u8; ETH_HEADER_BYTES + 20 + 32 + 100];
        f[12] = 0x08; // ethertype IPv4
        let ip = &mut f[ETH_HEADER_BYTES..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(20u16 + 32 + 100).to_be_bytes());
        ip[9] = 6;
        ip[20 + 12] = 8 << 4; // 32-byte TCP header (timestamps)
        assert_eq!(tcp_payload_bytes(&f), 100);
        f[ETH_HEADER_BYTES + 9] = 17; // UDP: not counted
        assert_eq!(tcp_payload_bytes(&f), 0);
    }

    fn segment(seq: u32, len: u16) -> Vec<u8> {
        let mut f = vec![0u8; ETH_HEADER_BYTES + 40 + len as usize];
        f[12] = 0x08;
        let ip = &mut f[ETH_HEADER_BYTES..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(40 + len).to_be_bytes());
        ip[9] = 6;
        ip[20..22].copy_from_slice(&80u16.to_be_bytes());
        ip[24..28].copy_from_slice(&seq.to_be_bytes());
        ip[32] = 5 << 4;
        f
    }

    #[test]
    fn a_segment_resending_old_data_counts_as_a_retransmission_across_sequence_wrap() {
        let mut r = RetransmitCounter { count: vec![0; 1], ..Default::default() };
        let start = u32::MAX - 1000;
        for k in 0..3u32 {
            r.see(0, &segment(start.wrapping_add(k * 1000), 1000)); // wraps on the third
        }
        assert_eq!(r.count[0], 0);
        r.see(0, &segment(start.wrapping_add(1000), 1000)); // the second again
        assert_eq!(r.count[0], 1);
        r.see(0, &segment(start.wrapping_add(3000), 1000));
        assert_eq!(r.count[0], 1);
    }

    /// A well-known IPv4 header (20 bytes, TOS 0) with checksum 0xb861.
    const HDR: [u8; 20] =
        [0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7];

    #[test]
    fn checksum_matches_the_known_header() {
        assert_eq!(ipv4_checksum(&HDR), 0xb861);
    }

    #[test]
    fn ce_mark_sets_both_ecn_bits_and_keeps_the_header_valid() {
        let mut frame = vec![0u8; ETH_HEADER_BYTES];
        frame[12] = 0x08; // EtherType IPv4
        frame.extend_from_slice(&HDR);
        frame[ETH_HEADER_BYTES + 1] = 0x02; // ECT(0)
        assert_eq!(ecn_of(&frame), Ecn::Ect0);
        set_ce(&mut frame);
        assert_eq!(ecn_of(&frame), Ecn::Ce);
        // A valid header sums to 0xffff including its checksum (RFC 1071).
        let ip = &frame[ETH_HEADER_BYTES..];
        let mut sum: u32 = (0..20).step_by(2).map(|i| u16::from_be_bytes([ip[i], ip[i + 1]]) as u32).sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(sum, 0xffff);
        assert_eq!(
            &ip[2..],
            &{
                let mut h = HDR;
                h[1] = 0x03;
                let c = ipv4_checksum(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
                h
            }[2..]
        );
    }
}
