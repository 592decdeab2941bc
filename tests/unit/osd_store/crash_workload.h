// The crash test's workload, shared by the test (which verifies) and the child process
// osd_store_crash_child (which applies): generation g is one transaction over a few
// objects, derived only from g and the state at g - 1, mixing appends, overwrites,
// truncates, rewrites and removes so that every dir-store write path is used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "osd/store/object_store.h"

namespace dfs::osd::crashtest {

inline constexpr int kObjects = 5;
inline constexpr uint32_t kPool = 3;
inline constexpr uint32_t kPg = 9;

struct ObjectState {
  std::string data;
  ObjectVersion version;
};

// The content every object must have at generation `gen`.
struct Model {
  uint64_t gen = 0;
  std::vector<std::optional<ObjectState>> objects =
      std::vector<std::optional<ObjectState>>(kObjects);
};

ObjectKey object_key(int index);

// Advances `model` to generation gen + 1 and returns the transaction that does the same.
Transaction next_generation(Model& model);

// Reads a store's state into a model (the store must hold a whole generation).
Result<Model> load_model(ObjectStore& store);

// Empty when the store holds exactly `model`; else what differs.
std::string diff_store(ObjectStore& store, const Model& model);

DirStoreOptions crash_store_options(const std::string& path);

}  // namespace dfs::osd::crashtest
