// glibc malloc tuned for I/O buffers. Every object read, readdirplus reply and frame
// payload is a fresh buffer of 100 KiB to 4 MiB. With glibc's defaults those come from
// mmap (or from a thread arena it trims) and go back to the kernel when freed, so each
// page of every buffer is a new page fault: on a virtual machine with shadow paging
// about 20 us per 4 KiB page, more than copying it. A cold read-back of the rsync tree
// made 52,000 faults in the client alone (docs/bench/history.md, "2026-12-01, late
// evening").
//
// The tuning: one arena (the sbrk heap, shared by all threads; small allocations stay
// per thread in tcache), buffers up to 32 MiB from that heap rather than mmap, freed
// memory kept up to 256 MiB instead of trimmed, the heap grown 64 MiB at a time, and
// the heap backed by transparent huge pages where the kernel offers them (the "madvise"
// or "always" THP modes): one fault per 2 MiB. The client's faults fell to about 700.
//
// The MDS runs on jemalloc instead (linked into dfs-mds; see mds/CMakeLists.txt). Its
// heap is small protobufs, Raft entries and RocksDB memtables, allocated and freed by
// the I/O thread, the pool and RocksDB's threads at once: in glibc's one arena,
// malloc's share of a replica's CPU grew round after round of the same work as the
// heap fragmented (docs/benchmarks.md, "The MDS's allocator"). Any process whose
// allocator is not glibc's (jemalloc linked or preloaded, a sanitizer's) is left as it
// is.
//
// The tunables are read by glibc only at start-up, from the GLIBC_TUNABLES environment
// variable, so tune_allocator() re-executes the program once with them set.
#pragma once

#include <string>

namespace dfs {

// The GLIBC_TUNABLES entries tune_allocator() adds.
std::string allocator_tunables();

// Call first in main(), before any thread starts. If GLIBC_TUNABLES names no
// glibc.malloc tunable yet, sets ours (after any the caller set) and executes the
// program again (its path from /proc/self/exe) with the same arguments: it does not
// return then. It returns at once, doing nothing, when the tunables are there already
// (the second run, or an operator's own choice), when DFS_ALLOCATOR_TUNING=0, and when
// malloc is not glibc's (jemalloc, or a sanitizer build's allocator); and if the exec
// fails, untuned but working.
void tune_allocator(char** argv);

// One line for the start-up log: the allocator, and the malloc tunables in effect or
// why there are none.
const char* allocator_tuning_summary();

}  // namespace dfs
