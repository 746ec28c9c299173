"""Where and how much a case may write. Landlock (Linux >= 5.13): an unprivileged process can give up the right to
write outside some folders, for itself and every process it starts; RLIMIT_FSIZE caps each file. Standard library
only, like probe.py, which loads it by path: it runs in any interpreter that has torch."""

from __future__ import annotations

import os

_LANDLOCK_CREATE, _LANDLOCK_ADD_RULE, _LANDLOCK_RESTRICT = 444, 445, 446  # the same number on every architecture
_WRITES = (1 << 1) | sum(1 << b for b in range(4, 13))  # write_file, remove_dir/file, make_char/dir/reg/sock/...
_REFER, _TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
_FILE_RIGHTS = (1 << 1) | _TRUNCATE  # what a rule on a file (not a folder) may grant: write_file, truncate


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; below 1 when there is none (or a seccomp filter refuses it)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(_LANDLOCK_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(1))  # ..._VERSION flag


def confine_writes(writable: list[str]) -> int | None:
    """Forbid file-system writes outside `writable` (folders, or single files such as /dev/null); the ABI version
    when confined, else None."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = landlock_abi()
        if abi < 1:
            return None  # no Landlock in this kernel (or a seccomp filter refuses it)
        handled = _WRITES | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
        attr = ctypes.c_uint64(handled)  # struct landlock_ruleset_attr, ABI 1 layout: handled_access_fs only
        ruleset = libc.syscall(_LANDLOCK_CREATE, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
        if ruleset < 0:
            return None
        rule = (ctypes.c_ubyte * 12)()  # struct landlock_path_beneath_attr (packed): u64 access, s32 parent_fd
        for folder in writable:
            try:
                fd = os.open(folder, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            allowed = handled if os.path.isdir(f"/proc/self/fd/{fd}") else handled & _FILE_RIGHTS  # a device node
            ctypes.memmove(rule, ctypes.byref(ctypes.c_uint64(allowed)), 8)
            ctypes.memmove(ctypes.byref(rule, 8), ctypes.byref(ctypes.c_int32(fd)), 4)
            libc.syscall(_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0))  # PATH_BENEATH
            os.close(fd)
        if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.syscall(_LANDLOCK_RESTRICT, ruleset, ctypes.c_uint32(0)) != 0:
            return None  # PR_SET_NO_NEW_PRIVS, then landlock_restrict_self
        os.close(ruleset)
        return abi
    except (OSError, AttributeError):
        return None


def cap_files(cap: str) -> None:
    """No file the script (or a child) writes grows past `cap` bytes (RLIMIT_FSIZE): a write beyond it fails (EFBIG;
    CPython ignores SIGXFSZ), so a flood cannot fill the disk (/dev/shm included). Root could raise it again."""
    if cap.isdigit():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (int(cap), int(cap)))
