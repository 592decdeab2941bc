"""Port blocks for a tools/dfs-dev cluster started by a benchmark (fsbench, mds_failover).

dfs-dev puts monitors at P..P+2, OSDs at P+10.. and MDS replicas at P+100..; blocks are
200 apart. They are taken below the kernel's ephemeral port range: a port in that range
may be the local end of any outgoing connection at any moment (the cluster's own daemons
make many), and a daemon that wants to listen on it then fails to start.
"""
import random
import socket

BLOCK_OFFSETS = (0, 1, 2, 10, 11, 12, 100, 101, 102)


def ephemeral_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_block(first=20000):
    """A base port P whose whole dfs-dev block is free, or None."""
    blocks = max(1, (ephemeral_start() - first - 200) // 200)
    for _ in range(200):
        base = first + random.randrange(blocks) * 200
        try:
            for offset in BLOCK_OFFSETS:
                with socket.socket() as s:
                    s.bind(("127.0.0.1", base + offset))
            return base
        except OSError:
            continue
    return None
