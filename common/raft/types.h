// Plain value types of the Raft library: identifiers, log entries, hard state,
// configurations and snapshots. No behaviour beyond encoding; shared by the core,
// storage implementations and the application.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dfs::raft {

using NodeId = uint64_t;
using Term = uint64_t;
using Index = uint64_t;

inline constexpr NodeId kNoNode = 0;  // node ids start at 1

enum class EntryType : uint8_t {
  kNormal = 0,      // application command
  kNoop = 1,        // appended by a new leader so that it commits an entry of its term
  kConfChange = 2,  // data is an encoded ConfState: the full new voter set
};

struct Entry {
  Term term = 0;
  Index index = 0;
  EntryType type = EntryType::kNormal;
  std::string data;

  bool operator==(const Entry&) const = default;
};

// Size used for batching limits: payload plus a fixed per-entry overhead.
inline uint64_t entry_bytes(const Entry& e) { return e.data.size() + 24; }

// Voting members. Sorted, no duplicates.
struct ConfState {
  std::vector<NodeId> voters;

  bool contains(NodeId id) const;
  size_t quorum() const { return voters.size() / 2 + 1; }
  bool operator==(const ConfState&) const = default;
};

// What must survive a crash for a vote and a commit index to stay valid.
struct HardState {
  Term term = 0;
  NodeId vote = kNoNode;
  Index commit = 0;

  bool operator==(const HardState&) const = default;
};

struct SnapshotMeta {
  Index index = 0;  // last entry covered; 0 means "no snapshot"
  Term term = 0;    // term of that entry
  ConfState conf;   // configuration as of `index`

  bool operator==(const SnapshotMeta&) const = default;
};

// The application's state-machine image at `meta.index`, as opaque bytes.
struct Snapshot {
  SnapshotMeta meta;
  std::string data;
};

enum class ConfChangeKind : uint8_t { kAddNode, kRemoveNode };

// One server at a time (Raft thesis, section 4.1).
struct ConfChange {
  ConfChangeKind kind = ConfChangeKind::kAddNode;
  NodeId node = kNoNode;
};

// Fixed-width little-endian list of ids; the entry carries the whole new set so that
// truncating a log can recompute the configuration from what remains.
std::string encode_conf_state(const ConfState& conf);
std::optional<ConfState> decode_conf_state(std::string_view bytes);

// `conf` with `change` applied, or nullopt when the change is a no-op (adding a
// member, removing a non-member).
std::optional<ConfState> apply_conf_change(const ConfState& conf, const ConfChange& change);

}  // namespace dfs::raft
