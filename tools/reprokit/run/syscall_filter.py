"""The system calls a case may not make, in one place, each with why; compiled by libseccomp (pyseccomp's bindings)
into the BPF program that bubblewrap loads (`--seccomp FD`) for the sandbox's first process and all it starts.

Everything else is allowed: a case is torch code (threads, compile workers, torchrun's ranks, loopback sockets).
A denied call fails with EPERM (clone3 with ENOSYS, so that the C library falls back to clone, whose flags the filter
can read); a call of another architecture's table (int 0x80) kills the process.
"""

from __future__ import annotations

import errno

# name -> why the case never needs it. A call missing from this kernel's table is skipped (older kernels).
DENIED: dict[str, str] = {
    **dict.fromkeys(
        ("io_uring_setup", "io_uring_enter", "io_uring_register"),
        "io_uring runs file and socket operations that a seccomp filter never sees; a rich kernel attack surface",
    ),
    **dict.fromkeys(
        ("add_key", "request_key", "keyctl"),
        "kernel keyrings are not namespaced: a key outlives the run and is shared with the host's user",
    ),
    "perf_event_open": "host-wide performance counters: a side channel and a frequent kernel bug",
    **dict.fromkeys(
        ("kexec_load", "kexec_file_load", "reboot", "init_module", "finit_module", "delete_module"),
        "the host's kernel is not the case's to replace, restart or extend",
    ),
    "bpf": "kernel programs and maps: attack surface, and a view of the host's tracing",
    **dict.fromkeys(
        (
            "mount",
            "umount2",
            "pivot_root",
            "chroot",
            "move_mount",
            "open_tree",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
        ),
        "the file system bubblewrap built for the run is final: no mount can uncover or add a folder",
    ),
    **dict.fromkeys(
        ("unshare", "setns"),
        "no namespace of the case's own (nested user namespaces grant every capability inside them)",
    ),
    **dict.fromkeys(
        ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp"),
        "another process's memory or descriptors (the sandbox's first process holds the report pipe)",
    ),
    "userfaultfd": "pauses the kernel inside a copy from user memory: the usual step of a kernel exploit",
    **dict.fromkeys(
        ("open_by_handle_at", "name_to_handle_at"),
        "opens a file by its handle, past the bind mounts that hide the rest of the host",
    ),
    **dict.fromkeys(
        (
            "swapon",
            "swapoff",
            "acct",
            "quotactl",
            "syslog",
            "vhangup",
            "settimeofday",
            "clock_settime",
            "clock_adjtime",
            "adjtimex",
            "iopl",
            "ioperm",
            "lookup_dcookie",
            "nfsservctl",
            "uselib",
        ),
        "host administration: swap, accounting, quotas, the kernel log, the clock, I/O ports",
    ),
    "clone3": "its flags lie in memory the filter cannot read: ENOSYS, and the C library falls back to clone",
}
# clone(2) with any of these flags makes a namespace: refused like unshare (threads and forks pass).
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
# socket(2) in these address families: refused (EPERM), as the run's network namespace does not cover them.
DENIED_FAMILIES = {
    "AF_VSOCK": (
        40,
        "host <-> guest sockets: the network namespace does not cover vsock, so a case "
        "could reach the hypervisor's or the host's listeners",
    )
}


def program() -> bytes:
    """The filter as a BPF program (what bwrap --seccomp reads). Raises OSError or RuntimeError where libseccomp is
    missing (pyseccomp raises RuntimeError at import then)."""
    import os

    import pyseccomp as seccomp

    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        try:
            rules.add_rule(seccomp.ERRNO(errno.ENOSYS if name == "clone3" else errno.EPERM), name)
        except (OSError, ValueError, RuntimeError):
            continue  # not a system call of this architecture or kernel
    for flag in CLONE_NAMESPACE_FLAGS.values():
        rules.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    for family, _why in DENIED_FAMILIES.values():
        for call in ("socket", "socketpair"):
            rules.add_rule(seccomp.ERRNO(errno.EPERM), call, seccomp.Arg(0, seccomp.EQ, family))
    read_end, write_end = os.pipe()
    try:
        with open(write_end, "wb", closefd=True) as sink:
            rules.export_bpf(sink)
        chunks = []
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(read_end)
