// The wall clock in milliseconds since the Unix epoch: for what is recorded or compared
// across processes and restarts (fence times, sequence bases), never for timeouts,
// which use the steady Clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace dfs {

inline uint64_t wall_clock_ms() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace dfs
