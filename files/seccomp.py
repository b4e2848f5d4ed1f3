"""A seccomp filter that refuses new user namespaces, for the bubblewrap sandbox run as root.

Why: run as root, bubblewrap makes no user namespace (inside one, the sandbox's ``nobody`` would be
root outside) and ``setpriv`` drops the command to the host's ``nobody``, which the kernel still lets
make a user namespace of its own (``unshare -Urm``): root there, it could mount a tmpfs past every
memory limit. bubblewrap's ``--disable-userns`` needs a user namespace of bubblewrap's own, so on that
path this classic BPF program, handed to ``bwrap --seccomp FD``, refuses ``unshare`` and ``clone``
with ``CLONE_NEWUSER``, ``setns`` (EPERM) and ``clone3``, whose flags a filter cannot read (ENOSYS:
the C library then falls back to ``clone``). Any other architecture's calls are refused (EPERM):
their numbers differ, so they cannot be judged.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import struct
from collections.abc import Iterator

__all__ = ["no_user_namespaces", "supported"]

# <linux/filter.h>, <linux/seccomp.h>, <linux/audit.h>, <linux/sched.h>
_LD_W_ABS, _JEQ_K, _JSET_K, _RET_K = 0x20, 0x15, 0x45, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_CLONE_NEWUSER = 0x10000000
_ARCH_OFFSET, _NR_OFFSET, _ARG0_OFFSET = 4, 0, 16  # struct seccomp_data; arg 0's low word (little-endian)
# machine -> (audit arch, unshare, clone, clone3, setns)
_CALLS = {
    "x86_64": (0xC000003E, 272, 56, 435, 308),
    "aarch64": (0xC00000B7, 97, 220, 435, 268),
}


def supported() -> bool:
    return platform.machine() in _CALLS


def _filter() -> bytes:
    """The program, laid out with its jumps counted from the instruction after each (BPF's rule)."""
    arch, unshare, clone, clone3, setns = _CALLS[platform.machine()]

    def op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
        return struct.pack("=HBBI", code, jt, jf, k)

    eperm, enosys = _ERRNO | errno.EPERM, _ERRNO | errno.ENOSYS
    program = [
        op(_LD_W_ABS, _ARCH_OFFSET),        # 0
        op(_JEQ_K, arch, 1, 0),             # 1: ours -> 3
        op(_RET_K, eperm),                  # 2: another architecture's call
        op(_LD_W_ABS, _NR_OFFSET),          # 3
        op(_JEQ_K, unshare, 6, 0),          # 4: -> 11 (flags)
        op(_JEQ_K, clone, 5, 0),            # 5: -> 11 (flags)
        op(_JEQ_K, clone3, 2, 0),           # 6: -> 9
        op(_JEQ_K, setns, 2, 0),            # 7: -> 10
        op(_RET_K, _ALLOW),                 # 8: any other call
        op(_RET_K, enosys),                 # 9: clone3
        op(_RET_K, eperm),                  # 10: setns
        op(_LD_W_ABS, _ARG0_OFFSET),        # 11: the flags of unshare/clone
        op(_JSET_K, _CLONE_NEWUSER, 0, 1),  # 12: a new user namespace -> 13, else -> 14
        op(_RET_K, eperm),                  # 13
        op(_RET_K, _ALLOW),                 # 14
    ]
    return b"".join(program)


@contextlib.contextmanager
def no_user_namespaces() -> Iterator[int]:
    """A readable descriptor holding the filter, for ``bwrap --seccomp FD`` (pass it with ``pass_fds``)."""
    read, write = os.pipe()
    try:
        os.write(write, _filter())  # 15 instructions of 8 bytes: far below a pipe's buffer
        os.close(write)
        write = -1
        yield read
    finally:
        if write != -1:
            os.close(write)
        os.close(read)
