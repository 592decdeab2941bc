#!/usr/bin/env python3
"""Races between mounts of one file system, for two_mounts_test.sh and three_mounts_test.sh.

Each racer says it is ready ($WORK/WHAT-ready.WHO) and starts when $WORK/WHAT-go appears,
so that the racers on all mounts start together.

  mount_races.py excl WHO DIR COUNT WORK
      O_CREAT|O_EXCL of f0..f{COUNT-1} in DIR; a won name gets "WHO NAME\\n". Writes
      $WORK/excl-result.WHO: "won NAME", "lost NAME" (EEXIST) or "error NAME WHY".
  mount_races.py append WHO PATH COUNT WORK
      COUNT records of 64 bytes ("WHO NNNNNN www...\\n"), each one write(2) to PATH opened
      O_APPEND.
  mount_races.py churn WHO DIR SECONDS WORK
      for SECONDS, creates, renames and unlinks names "WHO-NNNNNN" in DIR (a few at a
      time), leaving the names that were there before alone.
  mount_races.py list WHO DIR SECONDS WORK
      for SECONDS, lists DIR over and over. The names in DIR when it starts ("stable",
      untouched by the churners) must be in every listing exactly once, and no name may
      be listed twice.
  mount_races.py check-excl WORK COUNT WHO...
      every name won by exactly one racer, lost (EEXIST) by all the others, no other error.
  mount_races.py check-winners WORK DIR WHO...
      DIR holds every won name with its winner's bytes.
  mount_races.py check-log PATH COUNT WHO...
      PATH holds every racer's COUNT records, none torn, each racer's in its order.
Each check prints what it found and exits 1 on a problem.
"""
import os
import re
import sys
import time


def wait_for_go(what, who, work):
    open(f"{work}/{what}-ready.{who}", "w").close()
    deadline = time.time() + 30
    while not os.path.exists(f"{work}/{what}-go"):
        if time.time() > deadline:
            sys.exit(f"{who}: never told to go")
        time.sleep(0.001)


def excl(who, d, count, work):
    wait_for_go("excl", who, work)
    out = []
    for i in range(count):
        name = f"f{i}"
        try:
            fd = os.open(os.path.join(d, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            out.append(f"lost {name}")
            continue
        except OSError as e:
            out.append(f"error {name} {e.strerror}")
            continue
        try:
            os.write(fd, f"{who} {name}\n".encode())
            os.close(fd)
        except OSError as e:
            out.append(f"error {name} writing: {e.strerror}")
            continue
        out.append(f"won {name}")
    with open(f"{work}/excl-result.{who}", "w") as f:
        f.write("\n".join(out) + "\n")
    return 0


def append(who, path, count, work):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    wait_for_go("append", who, work)
    for i in range(count):
        record = f"{who} {i:06d} ".ljust(63, who.lower()) + "\n"
        if os.write(fd, record.encode()) != 64:
            sys.exit(f"{who}: short write of record {i}")
    os.close(fd)
    return 0


def churn(who, d, seconds, work):
    wait_for_go("churn", who, work)
    deadline = time.time() + seconds
    made, i = [], 0
    while time.time() < deadline:
        name = os.path.join(d, f"{who}-{i:06d}")
        i += 1
        open(name, "w").close()
        if i % 3 == 0:
            os.rename(name, name + "-renamed")
            name += "-renamed"
        made.append(name)
        if len(made) > 20:  # keep about 20 of ours present, dropping the oldest
            os.unlink(made.pop(0))
    for name in made:
        os.unlink(name)
    print(f"{who}: {i} names created and removed")
    return 0


def listing(who, d, seconds, work):
    stable = set(os.listdir(d))
    wait_for_go("churn", who, work)
    deadline = time.time() + seconds
    listings, problems = 0, []
    while time.time() < deadline and len(problems) < 10:
        names = os.listdir(d)
        listings += 1
        counted = {}
        for n in names:
            counted[n] = counted.get(n, 0) + 1
        twice = sorted(n for n, c in counted.items() if c > 1)
        missing = sorted(stable - counted.keys())
        if twice or missing:
            problems.append(f"listing {listings}: {len(missing)} stable names missing "
                            f"{missing[:5]}, {len(twice)} names listed twice {twice[:5]}")
    print(f"{who}: {listings} listings of {len(stable)} stable names and the churn")
    for p in problems:
        print(p)
    return 1 if problems else 0


def results(work, racers):
    """name -> {who: "won" | "lost" | "error ..."}"""
    by_name = {}
    for who in racers:
        for line in open(f"{work}/excl-result.{who}").read().splitlines():
            what, name, *why = line.split(" ", 2)
            by_name.setdefault(name, {})[who] = what if what != "error" else "error " + " ".join(why)
    return by_name


def check_excl(work, count, racers):
    by_name = results(work, racers)
    problems = []
    for i in range(count):
        name = f"f{i}"
        outcome = by_name.get(name, {})
        winners = [w for w, o in outcome.items() if o == "won"]
        others = {w: o for w, o in outcome.items() if o not in ("won", "lost")}
        if len(winners) != 1 or others or len(outcome) != len(racers):
            problems.append(f"{name}: {outcome}")
    won = {w: sum(1 for o in by_name.values() if o.get(w) == "won") for w in racers}
    print("names won: " + ", ".join(f"{w} {n}" for w, n in won.items()))
    for p in problems[:10]:
        print(p)
    if problems:
        print(f"{len(problems)} names not won by exactly one racer with EEXIST for the others")
    return 1 if problems else 0


def check_winners(work, d, racers):
    bad = []
    for name, outcome in sorted(results(work, racers).items()):
        for who, o in outcome.items():
            if o != "won":
                continue
            try:
                got = open(os.path.join(d, name)).read()
            except OSError as e:
                got = f"<{e.strerror}>"
            if got != f"{who} {name}\n":
                bad.append(f"{name}, won by {who}, reads {got!r}")
    for b in bad[:5]:
        print(b)
    if bad:
        print(f"{len(bad)} files read other bytes than their winner's")
    return 1 if bad else 0


def check_log(path, count, racers):
    data = open(path, "rb").read()
    problems = []
    if len(data) != len(racers) * count * 64:
        problems.append(f"{len(data)} bytes, not {len(racers) * count * 64}")
    seen = {w: [] for w in racers}
    for k in range(len(data) // 64):
        rec = data[k * 64:(k + 1) * 64].decode(errors="replace")
        m = re.fullmatch(r"([A-Z]) (\d{6}) ([a-z]*)\n", rec)
        if not m or m.group(1) not in seen or set(m.group(3)) - {m.group(1).lower()}:
            problems.append(f"record {k} is torn: {rec!r}")
            continue
        seen[m.group(1)].append(int(m.group(2)))
    for who, nums in seen.items():
        if nums != list(range(count)):
            problems.append(f"{who}: {len(nums)} records, {len(set(nums))} distinct, "
                            f"in order: {nums == sorted(nums)}")
    for p in problems[:10]:
        print(p)
    return 1 if problems else 0


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "excl":
        return excl(args[0], args[1], int(args[2]), args[3])
    if cmd == "append":
        return append(args[0], args[1], int(args[2]), args[3])
    if cmd == "churn":
        return churn(args[0], args[1], float(args[2]), args[3])
    if cmd == "list":
        return listing(args[0], args[1], float(args[2]), args[3])
    if cmd == "check-excl":
        return check_excl(args[0], int(args[1]), args[2:])
    if cmd == "check-winners":
        return check_winners(args[0], args[1], args[2:])
    if cmd == "check-log":
        return check_log(args[0], int(args[1]), args[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
