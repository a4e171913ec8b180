#!/usr/bin/env python3
# hostile_names.py - processes whose every name is hostile: comm, a mapped file's name, a memfd's name and an
# anonymous mapping's name hold invalid UTF-8, quotes, backslashes, newlines, ESC and "</script>".
# Usage: hostile_names.py DIR: makes the files in DIR, starts one child per comm, prints "PID ADDR" per child
# (ADDR: the start of its file mapping) and "ready"; the children live until this process's stdin closes.
import ctypes, mmap, os, sys

PR_SET_NAME = 15
PR_SET_VMA, PR_SET_VMA_ANON_NAME = 0x53564D41, 0

# comm is at most 15 bytes: each one a different kind of trouble.
COMMS = [
    b"\xff",                        # not UTF-8 at all
    b'q"uote\\bs',                  # JSON's and Prometheus' quote and backslash
    b"nl\nx\ty",                    # newline and tab
    b"esc\x1b[2J\x1b[31m",         # terminal escapes: clear the screen, red
    b"</script>",                   # HTML's end of data
    b"\xe2\x82\xc0\xaf\xed\xa0\x80",  # truncated sequence, overlong '/', a surrogate
    b"\\xff\\x5c\xc3\xa9",          # text that looks like the escapes, and a valid e-acute
    b"c1\xc2\x9b2J\xc2\x9d0;t",        # C1 controls, valid UTF-8: CSI clear screen, OSC
]
# A file name may hold any byte but '/' and NUL (so no "</script>": "<script>" and "]]>").
FILE_NAME = b"f\xff\x1b[2J\n\"\\<script>]]>&\xc0\xaf\xf4\x90\x80\x80\xed\xb0\x80"
MEMFD_NAME = b"m\xfe\x1b]0;x\x07\"\\\n</script>"
# The kernel takes only printable ASCII for anonymous mapping names, and none of [ ] \ $ `.
ANON_NAME = b"anon\"</script>&'<b>"

libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]


def child(comm, path, out):
    with open(path, "r+b") as f:
        fm = mmap.mmap(f.fileno(), 65536)
    fm[:] = b"x" * 65536
    mfd = os.memfd_create(os.fsdecode(MEMFD_NAME))
    os.ftruncate(mfd, 65536)
    mm = mmap.mmap(mfd, 65536)
    mm[:] = b"y" * 65536
    anon = mmap.mmap(-1, 65536)
    anon[:] = b"z" * 65536
    a = ctypes.addressof(ctypes.c_char.from_buffer(anon))
    libc.prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, a, 65536, ctypes.cast(ctypes.c_char_p(ANON_NAME), ctypes.c_void_p).value)
    fa = ctypes.addressof(ctypes.c_char.from_buffer(fm))
    if libc.prctl(PR_SET_NAME, ctypes.cast(ctypes.c_char_p(comm), ctypes.c_void_p).value, 0, 0, 0):
        os._exit(3)
    os.write(out, b"%d 0x%x\n" % (os.getpid(), fa))
    os.close(out)
    os.read(0, 1)	# until the parent's stdin (shared) closes
    os._exit(0)


def main():
    d = os.fsencode(sys.argv[1])
    path = os.path.join(d, FILE_NAME)
    with open(path, "wb") as f:
        f.write(b"\0" * 65536)
    r, w = os.pipe()
    kids = []
    for comm in COMMS:
        pid = os.fork()
        if pid == 0:
            os.close(r)
            child(comm, path, w)
        kids.append(pid)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        lines = f.read().splitlines()
    if len(lines) != len(COMMS):
        sys.exit("hostile_names: %d of %d children started" % (len(lines), len(COMMS)))
    sys.stdout.write("\n".join(l.decode() for l in lines) + "\nready\n")
    sys.stdout.flush()
    sys.stdin.buffer.read()
    for pid in kids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
