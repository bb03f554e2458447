"""Linux's TCP congestion-control modules as BPF struct_ops programs, for the testbed.

The testbed runs a flow's ``cca`` on the host kernel. When the kernel lacks the
module (the testbed host's kernel builds only reno, cubic and bbr), ccfair runs its BPF port
instead: ``bpf/<cca>.bpf.c`` in this package, a function-by-function port of
Linux's ``net/ipv4/tcp_<cca>.c`` (each file names the kernel version it follows and
its deviations). The set of ports is the set of those files; nothing else lists
them (``ports()``).

Build (:func:`build`): ``bpftool btf dump`` writes the running kernel's
``vmlinux.h``, clang compiles each port (``-target bpf``, CO-RE) into a cache
directory keyed by the kernel's BTF, the sources and clang's version
(``$CCFAIR_BPF_CACHE``, default ``~/.cache/ccfair/bpf``). The README's set-up
builds every port (``ccfair testbed build``); a run builds what is missing on
demand.

Load (:class:`Loaded`): libbpf (the system's ``libbpf.so.1``, through ctypes)
opens the object with the run's kernel name written over its placeholder
(``c<run id>_<cca>``: never the name of a built-in module, and two concurrent runs
never clash), sets the module parameters (``param_*`` read-only globals) and
loads it; the struct_ops map is created with ``BPF_F_LINK`` and registered by a
BPF link (``BPF_LINK_CREATE``, attach type ``BPF_STRUCT_OPS``, Linux >= 6.4)
whose only file descriptor this process holds. Closing it unregisters the
algorithm, and so does the process's death: after ``kill -9`` the kernel closes
the descriptor and nothing is left registered or pinned (ccfair pins nothing).
Sockets that still use the algorithm keep it until they close.

Which implementation a flow gets (:func:`choose`): with ``testbed.cca_impl =
"auto"`` (default) the host module when the kernel offers it (or modprobe loads
it), else the BPF port; ``"bpf"`` prefers the port (the BPF twins of cubic and
reno, to check ports against built-in modules); a flow with CCA parameters
other than the defaults uses the port (its parameters are the module's
parameters, per load), as a host module's parameters are global.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "BpfError",
    "Choice",
    "Loaded",
    "build",
    "choose",
    "host_modules",
    "kernel_name",
    "module_params",
    "ports",
    "unavailable",
]

SRC_DIR = Path(__file__).with_name("bpf")
SUFFIX = ".bpf.c"
#: What CCF_NAME("x") compiles to (ccfair_tcp.h); the loader writes the kernel name over it.
NAME_PLACEHOLDER = b"c????_"
#: struct tcp_congestion_ops.name is char[TCP_CA_NAME_MAX = 16], NUL included.
CA_NAME_BYTES = 16
BTF_PATH = Path("/sys/kernel/btf/vmlinux")
#: BPF_F_LINK (uapi bpf.h): the struct_ops map is registered through a link.
BPF_F_LINK = 1 << 13
#: enum bpf_attach_type BPF_STRUCT_OPS, enum bpf_map_type BPF_MAP_TYPE_STRUCT_OPS, BTF_KIND_DATASEC.
BPF_STRUCT_OPS = 44
BPF_MAP_TYPE_STRUCT_OPS = 26
BTF_KIND_DATASEC = 15
#: Struct_ops links: Linux 6.4 (commit 68b04864ca42, "bpf: Create links for BPF struct_ops maps").
MIN_KERNEL = (6, 4)
CLANG_FLAGS = ["-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86", "-Wall", "-Wno-unused-function"]
#: Debian packages the build needs (installed by the README's set-up, scripts/venv.sh).
PACKAGES = "clang, libbpf-dev, bpftool"


class BpfError(RuntimeError):
    """A BPF port could not be built or loaded (the message names the CCA and the cause)."""


# ------------------------------------------------------------------ declarations


def ports() -> dict[str, Path]:
    """CCA name -> its BPF source: one ``bpf/<cca>.bpf.c`` per port."""
    return {p.name[: -len(SUFFIX)]: p for p in sorted(SRC_DIR.glob(f"*{SUFFIX}"))}


_LOCAL_INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def source_digest(cca: str) -> str | None:
    """A short hash of the port of ``cca``: its ``bpf/<cca>.bpf.c`` and every header of
    ``bpf/`` it includes (``vmlinux.h`` is generated from the kernel's BTF, not hashed); None
    without a port. Stored with a fidelity run (fidelity/points.py ``spec_sha``), so that runs of
    an edited port are not mixed with the port's current runs."""
    src = ports().get(cca)
    if src is None:
        return None
    h = hashlib.sha256()
    todo, seen = [src], set()
    while todo:
        path = todo.pop(0)
        if path.name in seen or not path.is_file():
            continue
        seen.add(path.name)
        text = path.read_bytes()
        h.update(path.name.encode() + b"\0" + text)
        todo += [SRC_DIR / m for m in _LOCAL_INCLUDE.findall(text.decode(errors="replace"))]
    return h.hexdigest()[:16]


#: The Linux source a port follows, where it is not net/ipv4/tcp_<cca>.c.
LINUX_SOURCES = {"reno": "net/ipv4/tcp_cong.c"}


def linux_source(cca: str) -> str:
    """The Linux file the port of ``cca`` follows."""
    return LINUX_SOURCES.get(cca, f"net/ipv4/tcp_{cca}.c")


Converter = Callable[[dict[str, Any]], int]


def _int(field: str, unit: int = 1) -> Converter:
    """The resolved parameter ``field`` as a whole number, in multiples of ``unit`` (ns -> us: 1000)."""
    return lambda p: int(p[field]) // unit


def _flag(field: str) -> Converter:
    """The resolved switch ``field`` as 0 / 1."""
    return lambda p: 1 if p[field] else 0


def _fixed(field: str, scale: int, per: int = 1) -> Converter:
    """The resolved real ``field`` times ``scale`` / ``per``, rounded (beta 0.7 -> 717/1024)."""
    return lambda p: round(p[field] * scale / per)


#: Module parameters (module_param() in the Linux source, ``param_<name>`` in the port) from
#: ccfair's resolved CCA parameters (simulator units), per CCA. A ccfair parameter the module
#: does not have cannot be given on the testbed (:func:`module_params` says so).
PARAMS: dict[str, dict[str, Converter]] = {
    "cubic": {
        "beta": _fixed("beta", 1024),
        "bic_scale": _fixed("c", 1024, 10),
        "fast_convergence": _flag("fast_convergence"),
        "tcp_friendliness": _flag("tcp_friendliness"),
        "hystart": _flag("hystart"),
        "hystart_detect": _int("hystart_detect"),
        "hystart_low_window": _int("hystart_low_window_pkts"),
        "hystart_ack_delta_us": _int("hystart_ack_delta_ns", 1000),
        "initial_ssthresh": _int("initial_ssthresh_pkts"),
    },
    "bic": {
        "beta": _fixed("beta", 1024),
        "fast_convergence": _flag("fast_convergence"),
        "max_increment": _int("max_increment_pkts"),
        "low_window": _int("low_window_pkts"),
        "smooth_part": _int("smooth_part"),
    },
    "htcp": {"use_rtt_scaling": _flag("use_rtt_scaling"), "use_bandwidth_switch": _flag("use_bandwidth_switch")},
    "hybla": {"rtt0": _int("rtt0_ns", 1_000_000)},
    "vegas": {"alpha": _int("alpha_pkts"), "beta": _int("beta_pkts"), "gamma": _int("gamma_pkts")},
    "illinois": {"win_thresh": _int("win_thresh_pkts"), "theta": _int("theta")},
    "dctcp": {"dctcp_shift_g": _int("shift_g")},
    "nv": {"nv_pad": _int("pad_pkts"), "nv_reset_period": _int("reset_period_ns", 1_000_000_000), "nv_min_cwnd": _int("min_cwnd_pkts")},
    "cdg": {
        "window": _int("window"),
        "backoff_beta": _int("backoff_beta"),
        "backoff_factor": _int("backoff_factor"),
        "hystart_detect": _int("hystart_detect"),
        "use_ineff": _int("use_ineff"),
        "use_shadow": _flag("use_shadow"),
        "use_tolerance": _flag("use_tolerance"),
    },
}


def module_params(cca: str, given: dict[str, Any], resolved: dict[str, Any]) -> dict[str, int]:
    """The port's module parameters for a flow's CCA parameters. ``given``: the fields the
    experiment set (simulator units); ``resolved``: every field with defaults. Raises
    :class:`ValueError` naming a given field the Linux module has no parameter for."""
    table = PARAMS.get(cca, {})
    out = {name: conv(resolved) for name, conv in table.items()}
    used = {f for name, conv in table.items() for f in _fields_read(conv, resolved)}
    for f in given:
        if f not in used:
            raise ValueError(
                f"{f}: Linux's {linux_source(cca).rsplit('/', 1)[-1]} has no module parameter for it, so the testbed cannot set it "
                f"(module parameters ccfair maps: {', '.join(sorted(used)) or 'none'})"
            )
    return out


def _fields_read(conv: Converter, resolved: dict[str, Any]) -> set[str]:
    seen: set[str] = set()

    class Spy(dict[str, Any]):
        def __getitem__(self, k: str) -> Any:
            seen.add(k)
            return resolved[k]

    conv(Spy())
    return seen


def kernel_name(cca: str, run_id: str, index: int = 0) -> str:
    """The name a run registers its port under: ``c<run id>_<cca>`` (``c<run id><index>_<cca>``
    for a second parameter set of the same CCA); at most 15 characters (TCP_CA_NAME_MAX)."""
    name = f"c{run_id}{index or ''}_{cca}"
    if len(name) >= CA_NAME_BYTES:
        raise BpfError(f"{cca}: kernel name {name!r} is longer than {CA_NAME_BYTES - 1} characters")
    return name


#: Registered names made by kernel_name(): run id in group 1.
KERNEL_NAME_RE = re.compile(r"^c([0-9a-f]{4})\d?_")


# ------------------------------------------------------------------ what the host offers


def offered() -> list[str]:
    """CCAs the running kernel offers now (net.ipv4.tcp_available_congestion_control)."""
    try:
        return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    except OSError:
        return []


def host_modules() -> set[str]:
    """CCAs of the host kernel: offered now, or a loadable ``tcp_<cca>`` module file."""
    names = {n for n in offered() if not KERNEL_NAME_RE.match(n)}
    moddir = Path("/lib/modules") / os.uname().release / "kernel" / "net" / "ipv4"
    if moddir.is_dir():
        names |= {p.name.split(".", 1)[0][len("tcp_") :] for p in moddir.glob("tcp_*.ko*")}
    return names


def _kernel_version() -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _libbpf_path() -> str | None:
    return ctypes.util.find_library("bpf")


def unavailable(load: bool = True) -> str | None:
    """What is missing to build (and with ``load``, to load) a port here, or None."""
    missing = []
    if not BTF_PATH.exists():
        missing.append(f"the kernel has no BTF ({BTF_PATH}; CONFIG_DEBUG_INFO_BTF)")
    if load and _kernel_version() < MIN_KERNEL:
        missing.append(f"Linux >= {MIN_KERNEL[0]}.{MIN_KERNEL[1]} for struct_ops links (this is {os.uname().release})")
    if load and _libbpf_path() is None:
        missing.append("libbpf (libbpf.so.1; apt-get install libbpf1)")
    if not _cache_complete():
        for tool in ("clang", "bpftool"):
            if shutil.which(tool) is None:
                missing.append(f"{tool} to build the port (apt-get install {tool}; the README's set-up installs {PACKAGES})")
        if not Path("/usr/include/bpf/bpf_helpers.h").exists():
            missing.append("libbpf's headers to build the port (apt-get install libbpf-dev)")
    if load and os.geteuid() != 0:
        missing.append("root (CAP_BPF and CAP_NET_ADMIN) to load a struct_ops program")
    return "; ".join(missing) or None


@dataclass
class Choice:
    """How the testbed runs one flow's CCA: ``impl`` "module" (the host's) or "bpf" (the port)."""

    cca: str
    impl: str
    params: dict[str, int] = field(default_factory=dict)


def choose(cca: str, prefer: str, given: dict[str, Any], resolved: dict[str, Any], modules: set[str]) -> Choice:
    """The implementation of ``cca`` for a flow (module docstring). Raises :class:`ValueError`
    naming what is missing (no module, no port) or a parameter the module does not have."""
    port, module = cca in ports(), cca in modules
    if port and (prefer == "bpf" or given or not module):
        return Choice(cca, "bpf", module_params(cca, given, resolved))
    if module:
        if given:
            raise ValueError(
                f"{cca!r} with parameters {sorted(given)}: the host module's parameters are global to the "
                "kernel and ccfair has no BPF port of it to set them per run"
            )
        return Choice(cca, "module")
    have = ", ".join(sorted(modules)) or "none"
    raise ValueError(
        f"{cca!r} is neither a module of this kernel (it has: {have}) nor one of ccfair's BPF ports ({', '.join(ports()) or 'none'})"
    )


# ------------------------------------------------------------------ build


def cache_root() -> Path:
    env = os.environ.get("CCFAIR_BPF_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ccfair" / "bpf"


def _clang_version() -> str:
    clang = shutil.which("clang")
    if clang is None:
        return "none"
    return subprocess.run([clang, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def build_dir() -> Path:
    """This kernel's and these sources' build directory (the key: BTF, sources, clang)."""
    h = hashlib.sha256()
    h.update(BTF_PATH.read_bytes() if BTF_PATH.exists() else b"")
    for p in sorted(SRC_DIR.iterdir()):
        if p.is_file():
            h.update(p.name.encode() + b"\0" + p.read_bytes())
    h.update(_clang_version().encode())
    return cache_root() / h.hexdigest()[:16]


def _cache_complete() -> bool:
    try:
        d = build_dir()
    except OSError:
        return False
    return all((d / f"{c}.bpf.o").is_file() for c in ports())


def _atomic_write_from(cmd: list[str], dest: Path, what: str, to_stdout: bool = False) -> None:
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        if to_stdout:
            with open(tmp, "wb") as out:
                p = subprocess.run(cmd, stdout=out, stderr=subprocess.PIPE, text=False)
        else:
            p = subprocess.run([*cmd, "-o", str(tmp)], capture_output=True)
        if p.returncode != 0:
            err = p.stderr.decode(errors="replace").strip().splitlines()
            raise BpfError(f"{what} failed: {' | '.join(err[-6:])}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def build(ccas: Iterable[str] | None = None, say: Callable[[str], None] | None = None) -> dict[str, Path]:
    """Compile the ports of ``ccas`` (all by default) that are not in the cache; return CCA ->
    object file. ``say`` gets one line per port built. Raises :class:`BpfError`."""
    srcs = ports()
    wanted = list(srcs) if ccas is None else list(ccas)
    d = build_dir()
    out = {c: d / f"{c}.bpf.o" for c in wanted}
    todo = [c for c in wanted if not out[c].is_file()]
    if not todo:
        return out
    for tool in ("clang", "bpftool"):
        if shutil.which(tool) is None:
            raise BpfError(f"cannot build the BPF port of {', '.join(todo)}: {tool} is missing (apt-get install {PACKAGES})")
    d.mkdir(parents=True, exist_ok=True)
    vmlinux = d / "vmlinux.h"
    if not vmlinux.is_file():
        _atomic_write_from(["bpftool", "btf", "dump", "file", str(BTF_PATH), "format", "c"], vmlinux, "bpftool btf dump", to_stdout=True)
    for c in todo:
        if say:
            say(f"building the BPF port of {c} ({srcs[c].name}) into {d}")
        cmd = ["clang", *CLANG_FLAGS, "-I", str(d), "-I", str(SRC_DIR), "-c", str(srcs[c])]
        _atomic_write_from(cmd, out[c], f"clang {srcs[c].name}")
    return out


# ------------------------------------------------------------------ load (libbpf through ctypes)

_lib: ctypes.CDLL | None = None


def _libbpf() -> ctypes.CDLL:
    global _lib
    if _lib is not None:
        return _lib
    path = _libbpf_path()
    if path is None:
        raise BpfError("libbpf (libbpf.so.1) is not installed (apt-get install libbpf1)")
    lib = ctypes.CDLL(path, use_errno=True)
    vp, cp, u32, i32, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_size_t
    protos: dict[str, tuple[Any, list[Any]]] = {
        "bpf_object__open_mem": (vp, [vp, sz, vp]),
        "bpf_object__load": (i32, [vp]),
        "bpf_object__close": (None, [vp]),
        "bpf_object__next_map": (vp, [vp, vp]),
        "bpf_object__btf": (vp, [vp]),
        "bpf_map__name": (cp, [vp]),
        "bpf_map__type": (i32, [vp]),
        "bpf_map__fd": (i32, [vp]),
        "bpf_map__map_flags": (u32, [vp]),
        "bpf_map__set_map_flags": (i32, [vp, u32]),
        "bpf_map__initial_value": (vp, [vp, ctypes.POINTER(sz)]),
        "bpf_map__attach_struct_ops": (vp, [vp]),
        "bpf_link_create": (i32, [i32, i32, i32, vp]),
        "btf__find_by_name_kind": (i32, [vp, cp, u32]),
        "btf__type_by_id": (vp, [vp, u32]),
        "btf__name_by_offset": (cp, [vp, u32]),
        "libbpf_get_error": (ctypes.c_long, [vp]),
        "libbpf_set_print": (vp, [vp]),
    }
    for name, (res, args) in protos.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    if not os.environ.get("CCFAIR_BPF_VERBOSE"):
        lib.libbpf_set_print(None)  # libbpf's (and the verifier's) log only on request
    _lib = lib
    return lib


def _maps(lib: ctypes.CDLL, obj: int) -> list[int]:
    out: list[int] = []
    m = None
    while True:
        m = lib.bpf_object__next_map(obj, m)
        if not m:
            return out
        out.append(m)


def _set_params(lib: ctypes.CDLL, obj: int, cca: str, params: dict[str, int]) -> None:
    """Write ``param_<name>`` globals (.rodata) before load, located through the object's BTF."""
    if not params:
        return
    rodata = [m for m in _maps(lib, obj) if lib.bpf_map__name(m).decode().endswith(".rodata")]
    btf = lib.bpf_object__btf(obj)
    sec_id = lib.btf__find_by_name_kind(btf, b".rodata", BTF_KIND_DATASEC)
    if not rodata or sec_id < 0:
        raise BpfError(f"{cca}: the port declares no module parameters (CCF_PARAM), cannot set {sorted(params)}")
    size = ctypes.c_size_t()
    ptr = lib.bpf_map__initial_value(rodata[0], ctypes.byref(size))
    sec = ctypes.cast(lib.btf__type_by_id(btf, sec_id), ctypes.POINTER(ctypes.c_uint32))
    vlen = sec[1] & 0xFFFF
    offsets: dict[str, tuple[int, int]] = {}
    for k in range(vlen):
        var_id, off, nbytes = sec[3 + 3 * k], sec[4 + 3 * k], sec[5 + 3 * k]
        var = ctypes.cast(lib.btf__type_by_id(btf, var_id), ctypes.POINTER(ctypes.c_uint32))
        offsets[lib.btf__name_by_offset(btf, var[0]).decode()] = (off, nbytes)
    for name, value in params.items():
        if f"param_{name}" not in offsets:
            raise BpfError(f"{cca}: the port has no module parameter {name!r} (CCF_PARAM)")
        off, nbytes = offsets[f"param_{name}"]
        if off + nbytes > size.value:
            raise BpfError(f"{cca}: parameter {name!r} lies outside .rodata")
        ctypes.memmove(ptr + off, int(value).to_bytes(nbytes, "little", signed=value < 0), nbytes)


def patch_name(obj_bytes: bytes, cca: str, name: str) -> bytes:
    """The object with the ops' name CCF_NAME(cca) replaced by ``name`` (NUL-padded to 16 bytes)."""
    old = NAME_PLACEHOLDER + cca.encode() + b"\0"
    at = obj_bytes.find(old)
    if at < 0 or obj_bytes.find(old, at + 1) >= 0:
        raise BpfError(f"{cca}: the object must name its ops CCF_NAME({cca!r}) exactly once")
    return obj_bytes[:at] + name.encode().ljust(CA_NAME_BYTES, b"\0") + obj_bytes[at + CA_NAME_BYTES :]


class Loaded:
    """Ports loaded and registered for one run; :meth:`close` (or the process's exit) unregisters them."""

    def __init__(self) -> None:
        self._objs: list[int] = []
        self._bufs: list[Any] = []
        self.links: dict[str, int] = {}

    def load(self, cca: str, obj_path: Path, name: str, params: dict[str, int]) -> None:
        """Load ``obj_path`` (the port of ``cca``) as kernel CCA ``name`` with ``params``. Raises
        :class:`BpfError` naming the CCA and the failing step."""
        lib = _libbpf()
        data = patch_name(obj_path.read_bytes(), cca, name)
        buf = ctypes.create_string_buffer(data, len(data))
        self._bufs.append(buf)
        obj = lib.bpf_object__open_mem(buf, len(data), None)
        if not obj or lib.libbpf_get_error(obj):
            raise BpfError(f"{cca}: libbpf could not open {obj_path.name}")
        self._objs.append(obj)
        _set_params(lib, obj, cca, params)
        ops = [m for m in _maps(lib, obj) if lib.bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS]
        if len(ops) != 1:
            raise BpfError(f"{cca}: {obj_path.name} must define exactly one struct tcp_congestion_ops")
        lib.bpf_map__set_map_flags(ops[0], lib.bpf_map__map_flags(ops[0]) | BPF_F_LINK)
        if lib.bpf_object__load(obj) != 0:
            err = os.strerror(ctypes.get_errno())
            raise BpfError(f"{cca}: the kernel refused the program ({err}); CCFAIR_BPF_VERBOSE=1 prints the verifier's log")
        if not lib.bpf_map__attach_struct_ops(ops[0]):
            raise BpfError(f"{cca}: could not initialize the struct_ops map ({os.strerror(ctypes.get_errno())})")
        fd = lib.bpf_link_create(lib.bpf_map__fd(ops[0]), 0, BPF_STRUCT_OPS, None)
        if fd < 0:
            raise BpfError(f"{cca}: registering {name!r} failed ({os.strerror(ctypes.get_errno())})")
        os.set_inheritable(fd, False)
        self.links[name] = fd

    def close(self) -> None:
        """Unregister (close the links) and free the objects; idempotent."""
        for fd in self.links.values():
            try:
                os.close(fd)
            except OSError:
                pass
        self.links.clear()
        if self._objs:
            lib = _libbpf()
            for obj in self._objs:
                lib.bpf_object__close(obj)
        self._objs.clear()
        self._bufs.clear()


def catalogue(sim: list[tuple[str, str, list[str], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """``ccfair list ccas``: the simulator's CCAs ((name, source, aliases, params) each) and
    any port without a simulator model, each with its backends: ``simulator`` (bool) and
    ``testbed``: "module" (the host kernel has it), "bpf" (ccfair's port runs), or None."""
    modules, srcs = host_modules(), ports()

    def entry(name: str, source: str, aliases: list[str], params: list[dict[str, Any]], simulated: bool) -> dict[str, Any]:
        impl = "module" if name in modules else "bpf" if name in srcs else None
        return {
            "name": name,
            "aliases": aliases,
            "source": source,
            "params": params,
            "backends": {"simulator": simulated, "testbed": impl},
            "host_module": name in modules,
            "bpf_port": f"ccfair/testbed/bpf/{name}{SUFFIX}" if name in srcs else None,
        }

    out = [entry(n, src, al, ps, True) for n, src, al, ps in sim]
    known = {e["name"] for e in out}
    out += [entry(n, f"Linux net/ipv4/tcp_{n}.c (BPF port; no simulator model)", [], [], False) for n in srcs if n not in known]
    return out


def registered_of_dead_runs(live: Any) -> list[str]:
    """Registered CCAs named by :func:`kernel_name` whose run is not live (``rid in live``).
    Normally none: a port stays registered only while its run's process holds the link."""
    out = []
    for n in offered():
        m = KERNEL_NAME_RE.match(n)
        if m and m.group(1) not in live:
            out.append(n)
    return out
