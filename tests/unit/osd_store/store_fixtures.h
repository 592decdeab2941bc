// Fixtures for the osd/store tests: a temporary directory, one fixture type per
// ObjectStore backend (for TEST_CASE_TEMPLATE), and small helpers.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "osd/store/object_store.h"
#include "tests/support/temp_dir.h"

namespace dfs::osd::testing {

// A directory named dfs-test-XXXXXX; see tests/support/temp_dir.h.
using TempDir = test::TempDir;

inline ObjectKey okey(std::string name, uint32_t pg = 1, uint32_t pool = 1) {
  return ObjectKey{pool, pg, std::move(name)};
}

// Deterministic, position-dependent bytes: a shifted window never matches by accident.
inline std::string pattern(size_t n, uint32_t seed) {
  std::string out(n, '\0');
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<char>(x);
  }
  return out;
}

// The error text of a failed result, or "" (safe to evaluate on success, which
// doctest does for messages under -s).
template <class T>
std::string why(const Result<T>& r) {
  return r ? std::string() : r.error().to_string();
}

inline void apply_ok(ObjectStore& store, Transaction txn) {
  Status st = store.apply(std::move(txn));
  REQUIRE_MESSAGE(st.has_value(), why(st));
}

inline std::string read_ok(ObjectStore& store, const ObjectKey& key, uint64_t offset = 0,
                           uint64_t length = UINT64_MAX) {
  Result<std::string> r = store.read(key, offset, length);
  REQUIRE_MESSAGE(r.has_value(), why(r));
  return std::move(r).value();
}

struct MemoryBackend {
  std::unique_ptr<ObjectStore> store = make_memory_store();
  static constexpr bool kDurable = false;
  void reopen() {}
};

// The dir backend; by default as configured in production (small writes journaled,
// 4 KiB checksum blocks).
struct DirBackend {
  static constexpr bool kDurable = true;
  TempDir dir;
  std::unique_ptr<ObjectStore> store;
  uint32_t block_bytes;
  uint32_t deferred_max_bytes;

  explicit DirBackend(uint32_t block = 4096, uint32_t deferred = 64 * 1024)
      : block_bytes(block), deferred_max_bytes(deferred) {
    reopen(/*create=*/true);
  }
  DirStoreOptions options() const {
    DirStoreOptions o;
    o.path = dir.path();
    o.checksum_block_bytes = block_bytes;
    o.deferred_max_bytes = deferred_max_bytes;
    o.wal_prefill_bytes = 1 << 20;  // small: cheap to make, and writes outgrow it
    return o;
  }
  void reopen(bool create = false) {
    store.reset();
    DirStoreOptions o = options();
    o.create = create;
    Result<std::unique_ptr<ObjectStore>> opened = open_dir_store(o);
    REQUIRE_MESSAGE(opened.has_value(), why(opened));
    store = std::move(opened).value();
  }
};

// The dir backend writing every eligible write straight to files, with 512-byte
// checksum blocks: exercises the fresh/direct paths and many-block checksums.
struct DirDirectBackend : DirBackend {
  DirDirectBackend() : DirBackend(512, 0) {}
};

}  // namespace dfs::osd::testing
