#!/usr/bin/env python3
"""Lock workers for tests/fs/locks_test.sh, one process per call.

  count  KIND LOCKFILE COUNTER N   N increments of the COUNTER file, each under an
                                   exclusive lock of KIND (flock|fcntl) on LOCKFILE
  hold   KIND LOCKFILE READY       takes an exclusive lock, touches READY, sleeps forever
  getlk  LOCKFILE                  prints the F_GETLK answer for a whole-file write lock:
                                   "<type> <pid>" (type: unlocked|read|write)
  wait   KIND LOCKFILE             blocks until it gets the lock, prints the seconds waited
  alarm  KIND LOCKFILE             blocks for the lock with a 2 s alarm: prints
                                   "interrupted <seconds>" when the signal ends the wait
"""
import fcntl
import os
import signal
import struct
import sys
import time


def lock(kind, fd, op):
    if kind == "flock":
        fcntl.flock(fd, op)
    else:
        fcntl.lockf(fd, op)


def count(kind, lockfile, counter, n):
    fd = os.open(lockfile, os.O_RDWR | os.O_CREAT, 0o644)
    for _ in range(int(n)):
        lock(kind, fd, fcntl.LOCK_EX)
        with open(counter) as f:
            value = int(f.read() or "0")
        time.sleep(0.0002)  # widen the window a missing lock would let others into
        with open(counter, "w") as f:
            f.write(str(value + 1))
        lock(kind, fd, fcntl.LOCK_UN)
    os.close(fd)


def hold(kind, lockfile, ready):
    fd = os.open(lockfile, os.O_RDWR | os.O_CREAT, 0o644)
    lock(kind, fd, fcntl.LOCK_EX)
    open(ready, "w").close()
    while True:
        time.sleep(60)


def getlk(lockfile):
    fd = os.open(lockfile, os.O_RDWR)
    request = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
    answer = fcntl.fcntl(fd, fcntl.F_GETLK, request)
    l_type, _, _, _, l_pid = struct.unpack("hhqqi", answer)
    names = {fcntl.F_UNLCK: "unlocked", fcntl.F_RDLCK: "read", fcntl.F_WRLCK: "write"}
    print(names.get(l_type, str(l_type)), l_pid)


def wait(kind, lockfile):
    fd = os.open(lockfile, os.O_RDWR)
    started = time.monotonic()
    lock(kind, fd, fcntl.LOCK_EX)
    print(f"{time.monotonic() - started:.1f}")


class Alarm(Exception):
    pass


def alarm(kind, lockfile):
    def ring(signum, frame):
        raise Alarm()

    fd = os.open(lockfile, os.O_RDWR)
    signal.signal(signal.SIGALRM, ring)
    started = time.monotonic()
    signal.alarm(2)
    try:
        lock(kind, fd, fcntl.LOCK_EX)
        print(f"locked {time.monotonic() - started:.1f}")
    except Alarm:
        print(f"interrupted {time.monotonic() - started:.1f}")


if __name__ == "__main__":
    commands = {"count": count, "hold": hold, "getlk": getlk, "wait": wait, "alarm": alarm}
    commands[sys.argv[1]](*sys.argv[2:])
