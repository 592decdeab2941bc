// What integration tests write and how they verify it: an ObjectSpec describes an
// object's expected bytes (a seeded full write plus later partial writes), and the
// checks read objects back through the primary or from every up replica. Blocking;
// the checks fan out over threads through the client's blocking API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client-fuse/libdfs/object_client.h"

namespace dfs::test {

struct Patch {
  uint64_t offset = 0;
  uint64_t seed = 0;
  size_t size = 0;
};

struct ObjectSpec {
  std::string name;
  uint64_t seed = 0;
  size_t size = 0;             // of the initial write_full
  std::vector<Patch> patches;  // partial writes applied after it, in order

  // The bytes the object must hold: object_bytes(seed, size) with every patch applied
  // (a patch past the end extends the object, the gap reading as zeros).
  std::string content() const;
};

// Writes the spec (write_full, then each patch). Errors: the client's.
Status write_spec(client::ObjectClient& client, const std::string& pool, const ObjectSpec& spec);

// Writes every spec (write_spec) from `threads` threads. Returns one line per failed
// write (empty when all succeeded).
std::vector<std::string> write_objects(client::ObjectClient& client, const std::string& pool,
                                       const std::vector<ObjectSpec>& specs, int threads = 8);

// Reads every object through its primary and compares it with its spec; also checks
// stat's size. Returns one line per problem (empty when all match).
std::vector<std::string> verify_objects(client::ObjectClient& client, const std::string& pool,
                                        const std::vector<ObjectSpec>& specs, int threads = 8);

// Reads every object from each up OSD of its PG (ObjectClient::read_from_osd) and
// compares each copy with its spec. `min_replicas`: fewer up OSDs in a PG's acting set
// is a problem too. Returns one line per problem.
std::vector<std::string> verify_replicas(client::ObjectClient& client, const std::string& pool,
                                         const std::vector<ObjectSpec>& specs, size_t min_replicas,
                                         int threads = 8);

// "N problems:\n" and the first `max` lines, for failure messages.
std::string summarize(const std::vector<std::string>& problems, size_t max = 20);

}  // namespace dfs::test
