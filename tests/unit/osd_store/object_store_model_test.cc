// Randomised transactions against a simple in-memory model, and concurrent appliers
// with concurrent readers, on every backend.
#include <doctest/doctest.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "tests/support/seeded_runs.h"
#include "tests/unit/osd_store/store_fixtures.h"

namespace dfs::osd::testing {
namespace {

struct ModelObject {
  std::string data;
  ObjectVersion version;
};
using Model = std::map<ObjectKey, ModelObject>;

// Adds one random op to `t` and applies it to `m`.
void random_op(std::mt19937_64& rng, Model& m, Transaction& t, uint32_t& stamp) {
  ObjectKey key = okey("o" + std::to_string(rng() % 5), static_cast<uint32_t>(rng() % 2));
  auto it = m.find(key);
  uint64_t size = it == m.end() ? 0 : it->second.data.size();
  int kind = static_cast<int>(rng() % 10);
  if (size > 300000) kind = 6;
  if (kind <= 4) {  // write: overwrite, append, gap, aligned; mostly small
    uint64_t off = kind == 0   ? 0
                   : kind == 1 ? size
                   : kind == 2 ? size + rng() % 9000
                   : kind == 3 ? (rng() % (size + 1)) / 4096 * 4096
                               : rng() % (size + 1);
    size_t len = rng() % 4 == 0 ? 65536 + rng() % 100000 : 1 + rng() % 6000;
    std::string data = pattern(len, ++stamp);
    ModelObject& obj = m[key];
    if (obj.data.size() < off + len) obj.data.resize(off + len, '\0');
    obj.data.replace(off, len, data);
    t.write(key, off, std::move(data));
  } else if (kind <= 6) {
    uint64_t n = rng() % (size + 10000);
    m[key].data.resize(n, '\0');
    t.truncate(key, n);
  } else if (kind == 7 && it != m.end()) {
    m.erase(it);
    t.remove(key);
  } else if (kind == 8 && it != m.end()) {
    it->second.version = ObjectVersion{rng() % 100, ++stamp};
    t.set_version(key, it->second.version);
  } else {
    t.put_meta("meta/" + std::to_string(rng() % 4), std::to_string(++stamp));
  }
}

void check_matches(ObjectStore& s, const Model& m) {
  for (uint32_t pg = 0; pg < 2; ++pg) {
    auto listed = s.list(1, pg);
    REQUIRE(listed.has_value());
    auto it = m.lower_bound(okey("", pg));
    for (const auto& [name, info] : *listed) {
      REQUIRE(it != m.end());
      REQUIRE(it->first.name == name);
      CHECK(info.size == it->second.data.size());
      CHECK(info.version == it->second.version);
      REQUIRE(read_ok(s, it->first) == it->second.data);
      ++it;
    }
    CHECK((it == m.end() || it->first.pg != pg));
  }
}

TEST_CASE_TEMPLATE("osd/store: random transactions match a model", T, MemoryBackend, DirBackend,
                   DirDirectBackend) {
  uint64_t seed = dfs::test::replay_seed().value_or(12345);
  INFO("DFS_SEED=", seed);
  std::mt19937_64 rng(seed);
  T b;
  Model model;
  uint32_t stamp = 0;
  for (int round = 0; round < 80; ++round) {
    Transaction t;
    int ops = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < ops; ++i) random_op(rng, model, t, stamp);
    apply_ok(*b.store, std::move(t));
    check_matches(*b.store, model);
    if (round % 30 == 29) {
      b.reopen();
      check_matches(*b.store, model);
    }
  }
}

TEST_CASE_TEMPLATE("osd/store: concurrent appliers and readers", T, MemoryBackend, DirBackend,
                   DirDirectBackend) {
  T b;
  ObjectStore& s = *b.store;
  constexpr int kThreads = 4;
  constexpr int kRounds = 25;
  constexpr uint64_t kSlot = 3000;  // each (thread, round) owns a slot of "shared"
  std::atomic<bool> done{false};
  std::atomic<int> reader_errors{0};
  std::thread reader([&] {
    while (!done.load()) {
      Result<std::string> r = s.read(okey("shared"), 0, UINT64_MAX);
      if (!r && r.error().code() != ErrorCode::kNotFound) reader_errors.fetch_add(1);
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kThreads; ++w) {
    writers.emplace_back([&, w] {
      for (int n = 0; n < kRounds; ++n) {
        Transaction t;
        t.write(okey("shared"), (uint64_t(n) * kThreads + w) * kSlot, pattern(kSlot, w * 1000 + n));
        t.write(okey("own" + std::to_string(w)), uint64_t(n) * 5000,
                pattern(n % 5 == 0 ? 70000 : 5000, w * 1000 + n));
        if (!s.apply(std::move(t))) reader_errors.fetch_add(1000);
      }
    });
  }
  for (std::thread& t : writers) t.join();
  done = true;
  reader.join();
  CHECK(reader_errors.load() == 0);
  std::string shared;
  for (int n = 0; n < kRounds; ++n) {
    for (int w = 0; w < kThreads; ++w) shared += pattern(kSlot, w * 1000 + n);
  }
  CHECK(read_ok(s, okey("shared")) == shared);
  for (int w = 0; w < kThreads; ++w) {
    std::string own;
    for (int n = 0; n < kRounds; ++n) {
      std::string data = pattern(n % 5 == 0 ? 70000 : 5000, w * 1000 + n);
      if (own.size() < n * 5000 + data.size()) own.resize(n * 5000 + data.size(), '\0');
      own.replace(n * 5000, data.size(), data);
    }
    CHECK(read_ok(s, okey("own" + std::to_string(w))) == own);
  }
}

}  // namespace
}  // namespace dfs::osd::testing
