"""Make one syscall with arguments the kernel rejects; print the errno name.

Run inside and outside the sandbox: outside the kernel answers (EBADF, EFAULT,
EINVAL, …), inside the seccomp filter answers EPERM before the kernel looks.
"""

import ctypes
import errno
import sys

NUMBERS = {  # x86_64
    "ptrace": (101, (0x4206, 0, 0, 0)),  # PTRACE_SEIZE on pid 0
    "mount": (165, (0, 0, 0, 0, 0)),
    "unshare": (272, (0x10000000,)),
    "setns": (308, (-1, 0)),
    "bpf": (321, (999, 0, 0)),
    "perf_event_open": (298, (0, 0, -1, -1, 0)),
    "keyctl": (250, (999, 0, 0, 0, 0)),
    "kexec_load": (246, (0, 0, 0, 0)),
    "init_module": (175, (0, 0, 0)),
    "io_uring_setup": (425, (0, 0)),
    "userfaultfd": (323, (0xFFFF,)),
    "process_vm_readv": (310, (0, 0, 0, 0, 0, 0)),
}

libc = ctypes.CDLL(None, use_errno=True)
number, args = NUMBERS[sys.argv[1]]
result = libc.syscall(number, *(ctypes.c_long(a) for a in args))
print("OK" if result >= 0 else errno.errorcode[ctypes.get_errno()])
