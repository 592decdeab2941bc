#!/usr/bin/env python3
"""Read-after-change coherence across mounts, for shared_caching_test.sh.

  coherence_check.py --seed S --steps N DIR_ON_MOUNT_1 DIR_ON_MOUNT_2 [...]

The DIRs are one directory of one file system as several mounts show it. Each step
first has every mount look at everything in it (lstat of every name of the pool, file
contents, listings: what their kernels then cache, under the read shares the MDS
gives), then one mount, chosen at random, makes one change: a create with data, an
overwrite, an append, a truncate, a chmod, a utime, a rename (of files and
directories, also over an existing name), an unlink, a hard link, a symlink, a mkdir
or an rmdir, on names from a small pool so that changes meet what the others cache.
The moment the change has returned, every other mount must show exactly what the
changer shows: the same names, types, modes, sizes, link counts, symlink targets and
bytes, and after a utime the same mtime. Names are looked up by path before any
listing (a listing brings fresh attributes along). The choices depend on the seed
alone, so a seed replays the same sequence; a difference prints the seed, the step,
the change and the difference, and exits 1.
"""
import argparse
import hashlib
import os
import random
import stat
import sys

FILES = [f"f{i}" for i in range(6)]
DIRS = [f"d{i}" for i in range(3)]
INNER = [f"{d}/g{i}" for d in DIRS for i in range(3)]
NAMES = FILES + DIRS + INNER


def view(root):
    """What every mount must agree on: each name of the pool looked up by its path (from
    what the kernel caches, before any listing refreshes it), then the listings."""
    out = {}
    for rel in NAMES:
        path = os.path.join(root, rel)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            out[rel] = "missing"
            continue
        except OSError as e:
            # A symlink of the pool may stand for a directory on the path, and may point
            # at itself (ELOOP): every mount must fail the same way.
            out[rel] = os.strerror(e.errno)
            continue
        entry = [stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_nlink]
        try:
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    data = f.read()
                entry += [st.st_size, len(data), hashlib.sha256(data).hexdigest()[:16]]
            elif stat.S_ISLNK(st.st_mode):
                entry.append(os.readlink(path))
        except OSError as e:
            entry.append(os.strerror(e.errno))
        out[rel] = tuple(entry)
    for rel in [""] + DIRS:
        try:
            out["listing of /" + rel] = sorted(os.listdir(os.path.join(root, rel)))
        except OSError as e:
            out["listing of /" + rel] = os.strerror(e.errno)
    return out


def change(rng, root):
    """One random change under root; returns its description (errors included)."""
    kind = rng.choice(["create", "create", "create", "overwrite", "append", "truncate",
                       "chmod", "utime", "rename", "rename", "unlink", "link", "symlink",
                       "mkdir", "mkdir", "mkdir", "rmdir"])
    a = rng.choice(NAMES)
    b = rng.choice(NAMES)
    size = rng.choice([0, 1, 100, 5000, 70000])
    data = bytes([rng.randrange(256)]) * size
    p, q = os.path.join(root, a), os.path.join(root, b)
    what = f"{kind} {a}" + (f" {b}" if kind in ("rename", "link", "symlink") else "")
    try:
        if kind == "create":
            fd = os.open(p, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
            os.write(fd, data)
            os.close(fd)
        elif kind == "overwrite":
            fd = os.open(p, os.O_WRONLY)
            os.write(fd, data)
            os.close(fd)
        elif kind == "append":
            fd = os.open(p, os.O_WRONLY | os.O_APPEND)
            os.write(fd, data[:1000] or b"x")
            os.close(fd)
        elif kind == "truncate":
            os.truncate(p, size)
        elif kind == "chmod":
            os.chmod(p, rng.choice([0o600, 0o640, 0o755, 0o700, 0o444]))
        elif kind == "utime":
            t = 1_600_000_000 + rng.randrange(100_000_000)
            os.utime(p, (t, t), follow_symlinks=False)
            what += f" {t}"
        elif kind == "rename":
            os.rename(p, q)
        elif kind == "unlink":
            os.unlink(p)
        elif kind == "link":
            os.link(p, q)
        elif kind == "symlink":
            os.symlink(a, q)
        elif kind == "mkdir":
            os.mkdir(p, 0o755)
        elif kind == "rmdir":
            os.rmdir(p)
        return what + ": done", (kind == "utime" and p)
    except OSError as e:
        return f"{what}: {os.strerror(e.errno)}", None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    if len(args.dirs) < 2:
        sys.exit("coherence_check.py: give the directory on at least two mounts")
    rng = random.Random(args.seed)
    done = 0
    for step in range(1, args.steps + 1):
        for d in args.dirs:
            view(d)  # every kernel caches what it can of it now
        changer = rng.randrange(len(args.dirs))
        what, timed = change(rng, args.dirs[changer])
        done += what.endswith(": done")
        expected = view(args.dirs[changer])
        for i, d in enumerate(args.dirs):
            if i == changer:
                continue
            seen = view(d)
            if seen != expected:
                print(f"seed {args.seed}, step {step}: after mount {changer + 1}'s {what}, "
                      f"mount {i + 1} differs:", file=sys.stderr)
                for rel in sorted(set(seen) | set(expected)):
                    if seen.get(rel) != expected.get(rel):
                        print(f"  {rel}: mount {changer + 1} {expected.get(rel)}, "
                              f"mount {i + 1} {seen.get(rel)}", file=sys.stderr)
                sys.exit(1)
            if timed:
                rel = os.path.relpath(timed, args.dirs[changer])
                want = os.lstat(timed).st_mtime_ns
                got = os.lstat(os.path.join(d, rel)).st_mtime_ns
                if want != got:
                    print(f"seed {args.seed}, step {step}: after mount {changer + 1}'s {what}, "
                          f"mount {i + 1} shows mtime {got}, not {want}", file=sys.stderr)
                    sys.exit(1)
    print(f"seed {args.seed}: {args.steps} steps, {done} changes made, every mount agreed "
          "after each")


if __name__ == "__main__":
    main()
