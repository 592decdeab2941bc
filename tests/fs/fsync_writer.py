#!/usr/bin/env python3
"""Writers and checker for crash_test.sh (fsync durability across SIGKILL of every daemon).

usage: fsync_writer.py COMMAND DIR STATE
  synced   files written with fsync, two generations: DIR/synced/{small,medium,large}
  churn    until an I/O error (the kill), without fsync: in-place overwrites of some of
           the synced files, new files in DIR/churn, one file in DIR/churn kept open and
           appended to
  fsyncing until an I/O error, with fsync: new files, in-place overwrites and atomic
           replaces (write a temporary file, fsync, rename, fsync the directory) in DIR/fsyncing
  usable   new files and rewrites of two synced files, with fsync, in DIR/after
  verify   check DIR against everything STATE recorded
usage: fsync_writer.py fsync-tree DIR    fsync every regular file and directory under DIR

Every write is recorded in a journal in STATE (STATE/<n>-<command>.jsonl, on local disk)
before its first byte goes out, and marked done once its fsync (and the fsync of the
directory, for a new file) returned. Contents are random bytes from a seed
(random.Random(seed).randbytes(size)), so a journal holds seeds, offsets, sizes and
sha256 digests. The rules `verify` applies to each file, given its last done write:
  - done and not written since: exactly that content;
  - done, then overwritten in place without fsync (whole for small and medium files, a
    2 MiB region across an object boundary for large ones): the same size, and each byte
    is the done content's or one a later write put at that offset; a file small enough to
    be inline in the MDS, written by one write(2), must be one of the contents whole;
  - never done (created without fsync, or the kill came before its fsync returned):
    missing, or a prefix of its content;
  - replaced atomically: one of the contents whole (the last done one, or one whose
    rename may or may not have reached the disk); its temporary file, if there, a prefix
    of the last content;
  - a directory holding recorded files lists every file with a done write and no name
    that was never written.
"""
import glob
import hashlib
import json
import os
import random
import sys
import time

KIB = 1024
MIB = 1024 * KIB
INLINE_MAX = 4 * KIB  # the MDS keeps files up to this size inline
CHUNK = 256 * KIB     # write(2) size


def content(seed, size):
    return random.Random(seed).randbytes(size)


def sha(data):
    return hashlib.sha256(data).hexdigest()


def fsync_path(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_dir(path):
    fsync_path(path, os.O_RDONLY | os.O_DIRECTORY)


class Journal:
    """Records writes under DIR in STATE/<name>.jsonl, each before it starts and `done`
    after its fsync returned."""

    def __init__(self, top, state, name, first_seed):
        self.top = top
        self.file = open(os.path.join(state, name + ".jsonl"), "a")
        self.seed = first_seed
        self.id = 0

    def _log(self, record):
        self.file.write(json.dumps(record) + "\n")
        self.file.flush()  # local disk is not what gets killed

    def intend(self, rel, size, how, offset=0):
        """Records a write of `size` bytes at `offset` of top/rel and returns (id, bytes).
        how: create (O_EXCL), trunc (O_TRUNC) or inplace."""
        self.seed += 1
        self.id += 1
        data = content(self.seed, size)
        self._log({"id": self.id, "path": rel, "seed": self.seed, "size": size,
                   "offset": offset, "how": how, "sha": sha(data)})
        return self.id, data

    def write(self, rel, size, how, offset=0, fsync=False):
        wid, data = self.intend(rel, size, how, offset)
        flags = {"create": os.O_CREAT | os.O_EXCL, "trunc": os.O_TRUNC, "inplace": 0}[how]
        path = os.path.join(self.top, rel)
        fd = os.open(path, os.O_WRONLY | flags, 0o644)
        try:
            for off in range(0, len(data), CHUNK):
                os.pwrite(fd, data[off:off + CHUNK], offset + off)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if fsync:
            if how == "create":
                fsync_dir(os.path.dirname(path))
            self._log({"done": wid})

    def replace(self, rel, size):
        """The atomic replace: write rel.tmp, fsync, rename over rel, fsync the directory."""
        wid, data = self.intend(rel, size, "replace")
        path = os.path.join(self.top, rel)
        fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            for off in range(0, len(data), CHUNK):
                os.pwrite(fd, data[off:off + CHUNK], off)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(path + ".tmp", path)
        fsync_dir(os.path.dirname(path))
        self._log({"done": wid})

    def mkdir(self, rel):
        os.mkdir(os.path.join(self.top, rel))
        fsync_dir(os.path.join(self.top, rel))
        fsync_dir(os.path.dirname(os.path.join(self.top, rel)))


# --- writers ---

def cmd_synced(top, state):
    os.makedirs(top)
    fsync_dir(os.path.dirname(top))
    j = Journal(top, state, "1-synced", 1000)
    rng = random.Random(1)
    sizes = {}
    for i in range(20):
        sizes[f"synced/small/s{i:02d}"] = rng.randint(1, INLINE_MAX - 1)
    for i in range(6):
        sizes[f"synced/medium/m{i}"] = rng.randint(100 * KIB, MIB)
    for i, mb in enumerate((8, 13, 20)):
        sizes[f"synced/large/l{i}"] = mb * MIB + rng.randint(0, 4 * KIB)  # odd tails
    for d in ("synced", "synced/small", "synced/medium", "synced/large"):
        j.mkdir(d)
    for rel, size in sizes.items():
        j.write(rel, size, "create", fsync=True)
    # Generation 2 (O_TRUNC): same size, shrink, grow, inline -> objects -> smaller.
    gen2 = {
        "small/s00": 3000, "small/s01": 17, "small/s02": 200 * KIB, "small/s03": 4000,
        "medium/m0": 700 * KIB, "medium/m1": 2 * KIB, "medium/m2": 5 * MIB + 5,
        "large/l0": 9 * MIB + 77, "large/l1": 13 * MIB + 4096,
    }
    for rel, size in gen2.items():
        j.write("synced/" + rel, size, "trunc", fsync=True)
        sizes["synced/" + rel] = size
    print(f"fsynced {len(sizes)} files, {len(gen2)} of them twice; "
          f"{sum(sizes.values()) / MIB:.1f} MiB now")


def cmd_churn(top, state):
    victims = {}  # in-place overwrites of fsynced files: rel -> current size
    for rel, size in final_sizes(state, "1-synced").items():
        if rel.split("/")[-1] in ("s00", "s10", "m0", "m4", "l0", "l2"):
            victims[rel] = size
    j = Journal(top, state, "2-churn", 10**6)
    rng = random.Random(os.getpid())
    sizes = [300, 3 * KIB, 150 * KIB, 900 * KIB, 6 * MIB + 3, 10 * MIB]
    ops = 0
    try:
        j.mkdir("churn")
        # Kept open and appended to, never closed: its pages stay dirty in the kernel
        # and its size uncommitted unless writeback gets there. Recorded as one write.
        _, held_data = j.intend("churn/held", 16 * MIB, "create")
        hfd = os.open(os.path.join(top, "churn/held"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        i = 0
        while True:
            for rel, size in victims.items():
                if size > 4 * MIB:
                    j.write(rel, 2 * MIB, "inplace", 3 * MIB + rng.randint(0, 4095))
                else:
                    j.write(rel, size, "inplace")
                ops += 1
            j.write(f"churn/n{i:04d}", sizes[i % len(sizes)], "create")
            ops += 1
            if i * 256 * KIB < len(held_data):
                os.pwrite(hfd, held_data[i * 256 * KIB:(i + 1) * 256 * KIB], i * 256 * KIB)
            i += 1
            if i == 1:
                open(os.path.join(state, "churning"), "w").close()
    except OSError as e:
        print(f"churn: stopped after {ops} writes: {e}", file=sys.stderr)


def cmd_fsyncing(top, state):
    j = Journal(top, state, "2-fsyncing", 3 * 10**6)
    rng = random.Random(os.getpid())
    sizes = [2000, 64 * KIB, 700 * KIB, 5 * MIB + 1]
    done = {}
    ops = 0
    try:
        j.mkdir("fsyncing")
        i = 0
        while True:
            rel = f"fsyncing/f{i:04d}"
            j.write(rel, sizes[i % len(sizes)], "create", fsync=True)
            done[rel] = sizes[i % len(sizes)]
            ops += 1
            rel = rng.choice(sorted(done))
            j.write(rel, done[rel], "inplace", fsync=True)
            ops += 1
            j.replace("fsyncing/atomic", [3000, 300 * KIB, 5 * MIB + 7][i % 3])
            ops += 1
            i += 1
            if i == 1:
                open(os.path.join(state, "fsyncing"), "w").close()
    except OSError as e:
        print(f"fsyncing: stopped after {ops} fsynced writes: {e}", file=sys.stderr)


def cmd_usable(top, state):
    j = Journal(top, state, "3-usable", 5 * 10**6)
    j.mkdir("after")
    for k, size in enumerate((0, 1, 2000, 4 * KIB, 300 * KIB, 9 * MIB + 1)):
        j.write(f"after/f{k}", size, "create", fsync=True)
    for rel in ("synced/small/s00", "synced/large/l0"):
        j.write(rel, 5000, "trunc", fsync=True)
    print("wrote 8 files with fsync")


def cmd_fsync_tree(top):
    n = 0
    for root, _, names in os.walk(top, topdown=False):
        for name in names:
            p = os.path.join(root, name)
            if os.path.isfile(p) and not os.path.islink(p):
                fsync_path(p)
                n += 1
        fsync_dir(root)
        n += 1
    fsync_dir(os.path.dirname(os.path.abspath(top)))
    print(f"fsynced {n} files and directories under {top}")


# --- verify ---

def histories(state, only=None):
    """rel -> [write records in order, each with "done"]; journals in name order."""
    hist = {}
    for path in sorted(glob.glob(os.path.join(state, "*.jsonl"))):
        if only and os.path.basename(path) != only + ".jsonl":
            continue
        by_id = {}
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                r = json.loads(line)
                if "done" in r:
                    by_id[r["done"]]["done"] = True
                else:
                    r["done"] = False
                    by_id[r["id"]] = r
                    hist.setdefault(r["path"], []).append(r)
    return hist


def final_sizes(state, journal):
    out = {}
    for rel, writes in histories(state, journal).items():
        for w in writes:
            if w["how"] != "inplace":
                out[rel] = w["size"]
    return out


def describe(data, known):
    """What `data` is: its size, digest and where it first departs from each known write."""
    out = [f"size {len(data)} sha256 {sha(data)}"]
    if len(known) > 6:
        out.append(f"({len(known) - 6} writes between #1 and the last 5 not shown)")
        known = known[:1] + known[-5:]
    for name, w in known:
        ref = content(w["seed"], w["size"])
        part = data[w["offset"]:w["offset"] + len(ref)]
        if part == ref:
            out.append(f"holds {name} (at {w['offset']}, size {w['size']}) whole")
            continue
        diff = next(k for k in range(0, len(ref), 4096)
                    if part[k:k + 4096] != ref[k:k + 4096])
        blk = part[diff:diff + 4096]
        zeros = ", zeros there" if blk and blk.count(0) == len(blk) else ""
        out.append(f"vs {name} (at {w['offset']}, size {w['size']}): first differing "
                   f"4 KiB block at file offset {w['offset'] + diff}{zeros}")
    return "; ".join(out)


def mixed_ok(data, base, later):
    """None when each byte of data is base's at its offset or one a later write ((offset,
    bytes) pairs) put there; else the first offset where it is neither."""
    for off in range(0, len(data), 4096):
        end = min(off + 4096, len(data))
        block = data[off:end]
        if block == base[off:end]:
            continue
        if any(o <= off and end <= o + len(w) and block == w[off - o:end - o] for o, w in later):
            continue
        for k in range(off, end):
            if data[k] != base[k] and not any(
                    o <= k < o + len(w) and w[k - o] == data[k] for o, w in later):
                return k
    return None


def check_file(top, rel, writes):
    """Returns (kind, None) or (None, violation)."""
    try:
        with open(os.path.join(top, rel), "rb") as f:
            data = f.read()
    except FileNotFoundError:
        data = None
    last_done = max((k for k, w in enumerate(writes) if w["done"]), default=None)
    known = [(f"write #{k + 1} ({'fsynced' if w['done'] else 'not fsynced'}, {w['how']})", w)
             for k, w in enumerate(writes)]
    if writes[0]["how"] == "replace":
        assert all(w["how"] == "replace" for w in writes)
        allowed = writes[last_done:] if last_done is not None else writes
        if data is None:
            if last_done is None:
                return "replaced atomically, never done: missing", None
            return None, f"{rel}: replaced atomically (write #{last_done + 1} done), now missing"
        s = sha(data)
        if last_done is not None and s == writes[last_done]["sha"]:
            return "replaced atomically: the last done content", None
        if any(s == w["sha"] for w in allowed):
            return "replaced atomically: a later content (rename not yet fsynced)", None
        return None, (f"{rel}: replaced atomically, but not one of the contents whole: "
                      + describe(data, known))
    if last_done is None:  # never fsynced: missing or a prefix
        first = writes[0]
        assert first["how"] == "create" and all(w["how"] == "inplace" for w in writes[1:])
        if data is None:
            return "never fsynced: missing", None
        # The content: the writes applied in order.
        want = bytearray()
        for w in writes:
            c = content(w["seed"], w["size"])
            want[w["offset"]:w["offset"] + len(c)] = c
        if len(data) <= len(want) and data == bytes(want[:len(data)]):
            return ("never fsynced: " + ("complete" if len(data) == len(want) else
                                         "empty" if not data else "a prefix")), None
        return None, f"{rel}: never fsynced, not a prefix of its content: " + describe(data, known)
    base_w = writes[last_done]
    later = writes[last_done + 1:]
    assert base_w["offset"] == 0 and all(w["how"] == "inplace" for w in later)
    if data is None:
        return None, f"{rel}: fsynced (write #{last_done + 1}), now missing"
    if not later:
        if sha(data) == base_w["sha"]:
            return "fsynced: intact", None
        return None, (f"{rel}: fsynced (write #{last_done + 1}) and not written since, but "
                      + describe(data, known))
    s = sha(data)
    if s == base_w["sha"]:
        return "fsynced, then unsynced overwrites: the fsynced content", None
    if len(data) != base_w["size"]:
        return None, f"{rel}: overwritten in place, size changed: " + describe(data, known)
    if any(s == w["sha"] and w["offset"] == 0 and w["size"] == len(data) for w in later):
        return "fsynced, then unsynced overwrites: one written content", None
    if len(data) <= INLINE_MAX:
        return None, (f"{rel}: inline file overwritten by one write(2) is neither its fsynced "
                      "nor a written content: " + describe(data, known))
    at = mixed_ok(data, content(base_w["seed"], base_w["size"]),
                  [(w["offset"], content(w["seed"], w["size"])) for w in later])
    if at is not None:
        return None, (f"{rel}: byte at {at} is neither the fsynced one nor one written there "
                      "(garbage): " + describe(data, known))
    return "fsynced, then unsynced overwrites: a mix of fsynced and written bytes", None


def hist_tmp(rel, last):
    """The temporary file of an atomic replace, as a write never fsynced."""
    return dict(last, path=rel + ".tmp", how="create", done=False)


def cmd_verify(top, state):
    hist = histories(state)
    stats, bad = {}, []
    for rel, writes in sorted(hist.items()):
        kind, violation = check_file(top, rel, writes)
        if violation:
            bad.append(violation)
        else:
            stats[kind] = stats.get(kind, 0) + 1
    dirs = {}
    for rel, writes in hist.items():
        d, name = os.path.split(rel)
        dirs.setdefault(d, {})[name] = any(w["done"] for w in writes)
        if writes[0]["how"] == "replace":
            dirs[d][name + ".tmp"] = False
            tmp = hist_tmp(rel, writes[-1])
            kind, violation = check_file(top, rel + ".tmp", [tmp])
            if violation:
                bad.append(violation)
            else:
                stats["temporary file of a replace: " + kind] = stats.get(
                    "temporary file of a replace: " + kind, 0) + 1
    for d, names in sorted(dirs.items()):
        try:
            have = set(os.listdir(os.path.join(top, d)))
        except OSError as e:
            bad.append(f"{d}: cannot list: {e}")
            continue
        lost = sorted(n for n, done in names.items() if done and n not in have)
        extra = sorted(have - set(names))
        if lost:
            bad.append(f"{d}: fsynced names missing: {lost}")
        if extra:
            bad.append(f"{d}: names never written: {extra}")
    for kind in sorted(stats):
        print(f"  {stats[kind]:4d} {kind}")
    for b in bad:
        print(f"VIOLATION {b}")
    print(f"{top}: {len(hist)} files checked, {len(bad)} violations")
    return 1 if bad else 0


def main(argv):
    cmds = {"synced": cmd_synced, "churn": cmd_churn, "fsyncing": cmd_fsyncing,
            "usable": cmd_usable, "verify": cmd_verify}
    if len(argv) == 3 and argv[1] == "fsync-tree":
        return cmd_fsync_tree(argv[2])
    if len(argv) != 4 or argv[1] not in cmds:
        sys.exit(__doc__)
    os.makedirs(argv[3], exist_ok=True)
    return cmds[argv[1]](argv[2], argv[3])


if __name__ == "__main__":
    t0 = time.monotonic()
    rc = main(sys.argv) or 0
    print(f"({sys.argv[1]}: {time.monotonic() - t0:.1f} s)", file=sys.stderr)
    sys.exit(rc)
