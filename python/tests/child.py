"""child.py - a process with a known layout for the live tests: an anonymous mapping of PAGES pages with every
other page written. Prints "ADDR PAGES", then obeys stdin: "w N" writes page N and answers "ok"; "fork" forks a
twin that shares the pages copy-on-write and sleeps until killed, and answers its PID."""
import ctypes
import mmap
import os
import signal
import sys

PAGES = 64
page = mmap.PAGESIZE
m = mmap.mmap(-1, PAGES * page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_NOHUGEPAGE)
for i in range(0, PAGES, 2):
    m[i * page] = 1
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
print(addr, PAGES, flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "w":
        m[int(cmd[1]) * page] = 2
        print("ok", flush=True)
    elif cmd[0] == "fork":
        pid = os.fork()
        if pid == 0:
            while True:
                signal.pause()
        print(pid, flush=True)
