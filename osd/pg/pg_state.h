// PgState: what the OSD keeps in memory for one placement group it holds: the last
// sequence number used in the PG's versions, the newest version it holds (last_update,
// which peering compares across the PG's OSDs), the recent request ids with the
// version each was applied at (for deduplicating resent requests), and, on the
// primary, the acting set the PG was last peered for and the ops in flight in it.
// Rebuilt from the PG log in the ObjectStore when the PG is first touched after a
// start; the peering state starts empty, so a restarted primary peers first.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/proto/osd.pb.h"
#include "osd/store/object_store.h"

namespace dfs::osd {

// Store keys of PG metadata (big-endian numbers, so scans run in version order).
std::string pg_log_prefix(uint32_t pool, uint32_t pg);
std::string pg_log_key(uint32_t pool, uint32_t pg, uint64_t seq);
std::string pg_info_key(uint32_t pool, uint32_t pg);
std::string pg_update_key(uint32_t pool, uint32_t pg);
std::string request_key(const proto::RequestId& reqid);

// Versions order by epoch, then sequence: a later interval's primary writes in a later
// epoch.
bool version_less(const proto::Version& a, const proto::Version& b);

// One member of a PG's acting set as peering saw it: a restarted OSD (new up_from) is a
// new member, which may have missed writes even with the same id.
struct PgMember {
  int32_t osd = 0;
  uint64_t up_from = 0;
  bool operator==(const PgMember&) const = default;
};

class PgState {
 public:
  static constexpr size_t kLogEntriesKept = 2000;

  // Loads from the store (blocking). Errors: kIoError, kCorruption.
  static Result<PgState> load(ObjectStore& store, uint32_t pool, uint32_t pg);

  uint64_t last_seq() const { return last_seq_; }
  uint64_t next_seq() { return ++last_seq_; }
  // A replica learns sequence numbers from its primary.
  void observe_seq(uint64_t seq) { last_seq_ = std::max(last_seq_, seq); }
  // The newest version applied here (or brought here by peering).
  const proto::Version& last_update() const { return last_update_; }
  void observe(const proto::Version& version);
  // Records (in `txn`) that this OSD holds the PG as of `version` (end of peering).
  void activate_to(Transaction& txn, uint32_t pool, uint32_t pg, const proto::Version& version);

  // Primary side: the acting set the PG is active for (empty: not peered since start).
  bool active_for(const std::vector<PgMember>& acting) const { return peered_ && acting == acting_; }
  void set_active(std::vector<PgMember> acting) { acting_ = std::move(acting); peered_ = true; }
  void deactivate() { peered_ = false; }
  // Ops admitted while active; peering waits for them to finish.
  int inflight() const { return inflight_; }
  class OpGuard {
   public:
    explicit OpGuard(PgState* pg) : pg_(pg) { ++pg_->inflight_; }
    OpGuard(OpGuard&& other) noexcept : pg_(std::exchange(other.pg_, nullptr)) {}
    OpGuard& operator=(OpGuard&&) = delete;
    ~OpGuard() { if (pg_) --pg_->inflight_; }
   private:
    PgState* pg_;
  };

  // The version `reqid` was applied at, if it was applied recently.
  std::optional<proto::Version> find(const proto::RequestId& reqid) const;
  void remember(const proto::RequestId& reqid, const proto::Version& version);

  // Adds the PG log entry and PG info for `entry` to `txn`, and trims the oldest entry.
  void log_to(Transaction& txn, uint32_t pool, uint32_t pg, const proto::PgLogEntry& entry) const;

 private:
  uint64_t last_seq_ = 0;
  proto::Version last_update_;
  bool peered_ = false;
  std::vector<PgMember> acting_;
  int inflight_ = 0;
  std::map<std::string, proto::Version> recent_;
  std::deque<std::string> order_;
};

}  // namespace dfs::osd
