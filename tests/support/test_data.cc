#include "tests/support/test_data.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace dfs::test {

std::string object_bytes(uint64_t seed, size_t size) {
  std::string out(size, '\0');
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t v = next();
    std::memcpy(out.data() + i, &v, 8);
  }
  if (i < size) {
    uint64_t v = next();
    std::memcpy(out.data() + i, &v, size - i);
  }
  return out;
}

void parallel_for(size_t count, int threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < std::max(threads, 1); ++t) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < count; i = next++) fn(i);
    });
  }
  for (auto& w : workers) w.join();
}

std::string first_difference(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) {
    return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  }
  auto mismatch = std::mismatch(a.begin(), a.end(), b.begin());
  if (mismatch.first == a.end()) return "identical";
  return "first difference at byte " + std::to_string(mismatch.first - a.begin()) + " of " +
         std::to_string(a.size());
}

}  // namespace dfs::test
