// PgState: what the OSD keeps in memory for one placement group it holds: the last
// sequence number used in the PG's versions and the recent request ids with the
// version each was applied at (for deduplicating resent requests). Rebuilt from the
// PG log in the ObjectStore when the PG is first touched after a start.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>

#include "common/proto/osd.pb.h"
#include "osd/store/object_store.h"

namespace dfs::osd {

// Store keys of PG metadata (big-endian numbers, so scans run in version order).
std::string pg_log_prefix(uint32_t pool, uint32_t pg);
std::string pg_log_key(uint32_t pool, uint32_t pg, uint64_t seq);
std::string pg_info_key(uint32_t pool, uint32_t pg);
std::string request_key(const proto::RequestId& reqid);

class PgState {
 public:
  static constexpr size_t kLogEntriesKept = 2000;

  // Loads from the store (blocking). Errors: kIoError, kCorruption.
  static Result<PgState> load(ObjectStore& store, uint32_t pool, uint32_t pg);

  uint64_t last_seq() const { return last_seq_; }
  uint64_t next_seq() { return ++last_seq_; }
  // A replica learns sequence numbers from its primary.
  void observe_seq(uint64_t seq) { last_seq_ = std::max(last_seq_, seq); }

  // The version `reqid` was applied at, if it was applied recently.
  std::optional<proto::Version> find(const proto::RequestId& reqid) const;
  void remember(const proto::RequestId& reqid, const proto::Version& version);

  // Adds the PG log entry and PG info for `entry` to `txn`, and trims the oldest entry.
  void log_to(Transaction& txn, uint32_t pool, uint32_t pg, const proto::PgLogEntry& entry) const;

 private:
  uint64_t last_seq_ = 0;
  std::map<std::string, proto::Version> recent_;
  std::deque<std::string> order_;
};

}  // namespace dfs::osd
