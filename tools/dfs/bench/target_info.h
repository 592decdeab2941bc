// What a report's figures are of: the file system behind each target and, for a dfs
// mount, how its cluster keeps the metadata (one MDS, or a Raft group of replicas per
// rank), so that a reader knows which configuration was measured. Here the parsing and
// the wording (pure); asking the cluster is the dfs tool's (bench_cmd.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dfs::bench {

struct MountEntry {
  std::string mountpoint;
  std::string fstype;  // "ext4", "fuse.dfs"
  std::string source;  // a dfs mount's: "mon1,mon2,mon3:/subdir"
};

// The mount `path` is on, from the text of /proc/self/mountinfo: the last-mounted of
// the longest mount points that are `path` or one of its parents. `path` must be
// absolute and canonical. nullopt: no line matches.
std::optional<MountEntry> mount_of(const std::string& mountinfo, const std::string& path);

// One MDS of the cluster map, as `dfs status` finds it.
struct MetadataReplica {
  std::string name;  // "mds.a"
  uint32_t rank = 0;
  bool replicated = false;  // it answered with a Raft state
  std::string role;         // its Raft role when replicated: "leader", "follower", ...
  std::string error;        // why it did not answer, when it did not
};

// How the metadata is kept, one clause per rank, e.g. "rank 0 replicated by a Raft
// group of 3 MDS (mds.b leading; mds.a, mds.c following), the default" or "rank 0 on
// one MDS (mds.a) with its own log, not replicated (the default is 3 replicas)".
std::string describe_metadata(const std::vector<MetadataReplica>& replicas);

}  // namespace dfs::bench
