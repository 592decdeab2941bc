// Deterministic test data and a small thread fan-out for integration tests. The bytes
// of an object are a pure function of (seed, size), so a test re-creates what it
// expects instead of keeping every written object in memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace dfs::test {

// `size` pseudo-random bytes determined by `seed` (splitmix64).
std::string object_bytes(uint64_t seed, size_t size);

// Calls fn(i) for every i in [0, count) from `threads` threads, each taking the next
// unclaimed index, and returns when all calls have returned. `fn` must not throw
// (doctest's REQUIRE does): record failures and check them on the calling thread.
void parallel_for(size_t count, int threads, const std::function<void(size_t)>& fn);

// Where the first difference between two byte strings is, for failure messages:
// "sizes 10 and 12" or "first difference at byte 4096 of 8192".
std::string first_difference(const std::string& a, const std::string& b);

}  // namespace dfs::test
