// Elapsed wall-clock time for the figures integration tests report ("cluster up again
// 4.2 s after the crash"). Measurement only: waits and deadlines use TestCluster's
// timeouts.
#pragma once

#include <chrono>

namespace dfs::test {

// Seconds from `start` to now on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace dfs::test
