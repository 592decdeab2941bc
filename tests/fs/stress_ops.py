#!/usr/bin/env python3
"""Random file system operations in one directory, for two_mounts_stress_test.sh.

  stress_ops.py --root DIR --seed S --seconds T --who A|B --out FILE
      loops random operations inside DIR for T seconds: create+write (O_CREAT, sometimes
      O_EXCL), overwrite, append, truncate, rename (also over an existing name, and of
      directories), unlink, mkdir, rmdir, chmod, stat, readdir and read of a whole file.
      The names come from a small fixed pool (files f0..f15 at the top, directories
      d0..d3, files d*/g0..g5 in them: 44 names), so that two workers on two mounts of
      one directory collide on purpose. Errors that races explain (ENOENT, EEXIST,
      ENOTEMPTY, ENOTDIR, EISDIR) on a call that resolves a path are counted, and so is
      ESTALE from a rename (RENAME_STALE_OK below); any other errno (EIO, ENOTCONN, ...),
      and any error on an already open descriptor
      (read, write, ftruncate, fstat, close), is recorded with the operation and makes the
      worker exit 1 at the end. The choice of operations depends on the seed alone (not on
      results), so a seed replays the same sequence. Writes FILE: a JSON summary (counts
      per operation and outcome, per errno, the unexpected errors, the last operations).
      FILE.cur holds the operation in progress (for a hang).

  stress_ops.py --list DIR
      prints every name under DIR, sorted: type, path, mode, and for a file its size and
      sha256 (the listing two_mounts_stress_test.sh compares).
"""
import argparse
import collections
import errno
import hashlib
import json
import os
import random
import stat
import sys
import time

EXPECTED = {errno.ENOENT, errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR}
# A rename whose path walk finds a directory that the other mount moved meanwhile gets
# ESTALE from the kernel itself: its dcache still has the directory under the old name,
# and moving that alias needs the old parent's lock, which this very rename holds
# (d_splice_alias, __d_unalias in fs/dcache.c). NFS clients see the same.
RENAME_STALE_OK = True

TOP_FILES = [f"f{i}" for i in range(16)]
DIRS = [f"d{i}" for i in range(4)]
SUB_FILES = [f"{d}/g{j}" for d in DIRS for j in range(6)]
FILES = TOP_FILES + SUB_FILES
ALL = FILES + DIRS
SIZES = [0, 1, 100, 4095, 4096, 4097, 65536, 100000, 300000]


class FdError(Exception):
    """An error on a descriptor that was open: never explained by a race on names."""

    def __init__(self, call, err):
        super().__init__(f"{call}: {err}")
        self.call, self.err = call, err


def list_tree(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: (_ for _ in ()).throw(e)):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            mode = "%o" % stat.S_IMODE(st.st_mode)
            if stat.S_ISDIR(st.st_mode):
                out.append(f"d {rel} {mode}")
            elif stat.S_ISREG(st.st_mode):
                h = hashlib.sha256()
                n = 0
                with open(p, "rb") as f:
                    while True:
                        b = f.read(1 << 20)
                        if not b:
                            break
                        h.update(b)
                        n += len(b)
                if n != st.st_size:
                    out.append(f"f {rel} {mode} stat-size={st.st_size} read={n} {h.hexdigest()}")
                else:
                    out.append(f"f {rel} {mode} {n} {h.hexdigest()}")
            else:
                out.append(f"? {rel} {mode} {stat.S_IFMT(st.st_mode):o}")
    return sorted(out)


class Worker:
    def __init__(self, root, seed, who, out):
        self.root, self.who, self.out = root, who, out
        self.rng = random.Random(f"{seed}/{who}")
        self.counts = collections.Counter()      # "op ok", "op ENOENT", ...
        self.errnos = collections.Counter()
        self.unexpected = []
        self.last = collections.deque(maxlen=50)
        self.cur = open(out + ".cur", "w")
        self.n = 0

    def path(self, rel):
        return os.path.join(self.root, rel)

    def data(self):
        size = self.rng.choice(SIZES)
        # A header says who wrote which op, then random bytes.
        head = f"{self.who} op {self.n}\n".encode()
        return (head + self.rng.randbytes(max(0, size - len(head))))[:size] if size else b""

    def write_all(self, fd, b):
        while b:
            try:
                n = os.write(fd, b)
            except OSError as e:
                raise FdError("write", e)
            b = b[n:]

    def close(self, fd):
        try:
            os.close(fd)
        except OSError as e:
            raise FdError("close", e)

    # Each op: (name, args description, callable). All random choices are made here,
    # before anything is run, so that they depend on the seed alone.
    def pick(self):
        r = self.rng
        k = r.randrange(100)
        if k < 14:
            name, flags = r.choice(FILES), os.O_CREAT | os.O_WRONLY | os.O_TRUNC
            excl = r.random() < 0.3
            if excl:
                flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY
            b = self.data()
            return ("create_excl" if excl else "create", name, lambda: self.op_write(name, flags, b))
        if k < 22:
            name, b = r.choice(FILES), self.data()
            off = r.choice([0, 0, 1000, 4096, 70000])
            return ("overwrite", f"{name}@{off}", lambda: self.op_write(name, os.O_WRONLY, b, off))
        if k < 30:
            name, b = r.choice(FILES), self.data()
            return ("append", name, lambda: self.op_write(name, os.O_WRONLY | os.O_APPEND, b))
        if k < 36:
            name, size = r.choice(FILES), r.choice(SIZES)
            if r.random() < 0.5:
                return ("truncate", f"{name}->{size}", lambda: os.truncate(self.path(name), size))
            return ("ftruncate", f"{name}->{size}", lambda: self.op_ftruncate(name, size))
        if k < 48:
            if r.random() < 0.2:
                a, b = r.choice(DIRS), r.choice(DIRS)
            elif r.random() < 0.1:
                a, b = r.choice(FILES), r.choice(DIRS)
            else:
                a, b = r.choice(FILES), r.choice(FILES)
            return ("rename", f"{a}->{b}", lambda: os.rename(self.path(a), self.path(b)))
        if k < 56:
            name = r.choice(FILES)
            return ("unlink", name, lambda: os.unlink(self.path(name)))
        if k < 62:
            name = r.choice(DIRS) if r.random() < 0.95 else r.choice(FILES)
            return ("mkdir", name, lambda: os.mkdir(self.path(name), 0o755))
        if k < 67:
            name = r.choice(DIRS) if r.random() < 0.85 else r.choice(FILES)
            return ("rmdir", name, lambda: os.rmdir(self.path(name)))
        if k < 72:
            name, mode = r.choice(ALL), r.choice([0o644, 0o600, 0o755, 0o640, 0o444])
            return ("chmod", f"{name} {mode:o}", lambda: os.chmod(self.path(name), mode))
        if k < 80:
            name = r.choice(ALL)
            return ("stat", name, lambda: os.stat(self.path(name)))
        if k < 88:
            name = r.choice(["."] + DIRS)
            return ("readdir", name, lambda: self.op_readdir(name))
        name = r.choice(FILES)
        return ("read", name, lambda: self.op_read(name))

    def op_write(self, name, flags, b, off=None):
        fd = os.open(self.path(name), flags, 0o644)
        try:
            if off:
                try:
                    os.lseek(fd, off, os.SEEK_SET)
                except OSError as e:
                    raise FdError("lseek", e)
            self.write_all(fd, b)
        finally:
            self.close(fd)

    def op_ftruncate(self, name, size):
        fd = os.open(self.path(name), os.O_WRONLY)
        try:
            try:
                os.ftruncate(fd, size)
            except OSError as e:
                raise FdError("ftruncate", e)
        finally:
            self.close(fd)

    def op_read(self, name):
        fd = os.open(self.path(name), os.O_RDONLY)
        try:
            try:
                st = os.fstat(fd)
            except OSError as e:
                raise FdError("fstat", e)
            if stat.S_ISDIR(st.st_mode):  # open(O_RDONLY) of a directory succeeds
                raise IsADirectoryError(errno.EISDIR, "Is a directory")
            while True:
                try:
                    b = os.read(fd, 1 << 20)
                except OSError as e:
                    raise FdError("read", e)
                if not b:
                    break
        finally:
            self.close(fd)

    def op_readdir(self, name):
        with os.scandir(self.path(name)) as it:
            for e in it:
                e.name

    def run(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.n += 1
            op, args, fn = self.pick()
            desc = f"#{self.n} {op} {args}"
            self.cur.seek(0)
            self.cur.write(f"{time.time():.3f} {desc}\n")
            self.cur.truncate()
            self.cur.flush()
            t0 = time.monotonic()
            outcome = "ok"
            try:
                fn()
            except FdError as e:
                outcome = f"{e.call}:{errno.errorcode.get(e.err.errno, e.err.errno)}"
                self.errnos[errno.errorcode.get(e.err.errno, str(e.err.errno))] += 1
                self.record(desc, f"on the open descriptor, {e.call}: {e.err}")
            except OSError as e:
                code = errno.errorcode.get(e.errno, str(e.errno))
                outcome = code
                self.errnos[code] += 1
                stale_rename = RENAME_STALE_OK and op == "rename" and e.errno == errno.ESTALE
                if e.errno not in EXPECTED and not stale_rename:
                    self.record(desc, str(e))
            ms = (time.monotonic() - t0) * 1000
            self.counts[f"{op} {outcome}"] += 1
            self.last.append(f"{desc}: {outcome} ({ms:.0f} ms)")
            if ms > 15000:
                self.record(desc, f"took {ms:.0f} ms")

    def record(self, desc, what):
        line = f"{time.strftime('%H:%M:%S')} {self.who} {desc}: {what}"
        if len(self.unexpected) < 20:
            print("UNEXPECTED " + line, file=sys.stderr, flush=True)
        if len(self.unexpected) < 1000:
            self.unexpected.append(line)

    def summary(self, seed):
        per_op = collections.defaultdict(dict)
        for k, v in sorted(self.counts.items()):
            op, outcome = k.split(" ", 1)
            per_op[op][outcome] = v
        return {"who": self.who, "seed": seed, "ops": self.n, "per_op": per_op,
                "errnos": dict(sorted(self.errnos.items())), "unexpected": self.unexpected,
                "last_ops": list(self.last)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--who", default="A")
    ap.add_argument("--out")
    ap.add_argument("--list", metavar="DIR")
    a = ap.parse_args()
    if a.list:
        print("\n".join(list_tree(a.list)))
        return 0
    if not a.root or not a.out:
        ap.error("--root and --out are needed")
    seed = a.seed if a.seed is not None else random.randrange(1 << 31)
    print(f"stress_ops {a.who}: --seed {seed} --seconds {a.seconds:g} --root {a.root}", flush=True)
    w = Worker(a.root, seed, a.who, a.out)
    try:
        w.run(a.seconds)
    finally:
        s = w.summary(seed)
        with open(a.out, "w") as f:
            json.dump(s, f, indent=1)
    ok = sum(v for k, v in w.counts.items() if k.endswith(" ok"))
    print(f"stress_ops {a.who}: {w.n} ops, {ok} succeeded, errnos {dict(w.errnos)},"
          f" {len(w.unexpected)} unexpected", flush=True)
    return 1 if w.unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
