// The source of randomness injected into a RaftNode (election timeouts only). Seeded
// implementations make runs reproducible; the simulation hands each node its own.
// TODO(#4): replace by common/env's Random once that interface exists.
#pragma once

#include <cstdint>

namespace dfs::raft {

class Random {
 public:
  virtual ~Random() = default;
  virtual uint64_t next_u64() = 0;

  // Uniform in [lo, hi). Requires: lo < hi.
  uint64_t uniform(uint64_t lo, uint64_t hi) { return lo + next_u64() % (hi - lo); }
};

// splitmix64: tiny, fast, and good enough for timeouts and fault schedules.
class SplitMixRandom final : public Random {
 public:
  explicit SplitMixRandom(uint64_t seed) : state_(seed) {}
  uint64_t next_u64() override {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

}  // namespace dfs::raft
