// Client sessions of the MDS: which files each client holds open (so an unlinked file
// lives until its last close) and the replies to its recent mutating requests (so a
// resent request gets the original answer instead of running twice). In memory only:
// after an MDS restart clients re-open their files within the reclaim grace period.
// Owned by the MdsService on its I/O thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/rpc/connection.h"
#include "common/rpc/completion.h"

namespace dfs::mds {

// One remembered request: its reply once it finished.
struct DedupSlot {
  explicit DedupSlot(asio::any_io_executor ex) : reply(std::move(ex)) {}
  Completion<Result<rpc::Reply>> reply;
};

struct Session {
  std::string client;
  uint64_t id = 0;  // numbers the session in tables keyed by integers (the lock table)
  std::map<uint64_t, uint32_t> opens;  // ino -> opens by this client
  std::weak_ptr<rpc::Connection> connection;
  Clock::time_point last_seen{};
  // Lease: a client that said it renews (SessionRequest.renews) is evicted when it has
  // not renewed for the session timeout. Others (the CLI, old clients) are not.
  bool renewing = false;
  Clock::time_point last_renew{};
  bool evicting = false;  // its fence is being committed
  // The store records it (RecordSession): a later active MDS awaits it after a takeover.
  bool recorded = false;
  // Its client keeps each mutation until it learns it is safe and resends it after a
  // failover (requests with kFlagMayReplyEarly): a replicated rank may answer it early.
  bool keeps_early_replies = false;
  std::map<uint64_t, std::shared_ptr<DedupSlot>> requests;  // by seq
};

class SessionTable {
 public:
  explicit SessionTable(size_t max_remembered = 1024) : max_remembered_(max_remembered) {}

  // The client's session (created on first use), marked seen now over `conn`.
  Session& touch(const std::string& client, const rpc::ConnectionPtr& conn, Clock::time_point now);

  // The slot of request `seq`: `fresh` true when it was not known (the caller runs the
  // request and sets the slot's reply), else the remembered one (await its reply).
  std::shared_ptr<DedupSlot> remember(Session& s, uint64_t seq, asio::any_io_executor ex,
                                      bool& fresh);

  // Forgets request `seq` of `client` (no-op if unknown): a request that failed for a
  // passing reason is run again when resent, not answered with the same failure.
  void forget(const std::string& client, uint64_t seq);

  void add_open(Session& s, uint64_t ino);
  // Drops one open of `ino` by the session (no-op if it holds none). Returns true when
  // nobody holds the inode open any more.
  bool release(Session& s, uint64_t ino);
  uint32_t open_count(uint64_t ino) const;
  // Whether a session other than `client`'s holds `ino` open.
  bool opened_by_others(const std::string& client, uint64_t ino) const;
  // How many opens of `ino` `client`'s session holds.
  uint32_t opens_by(const std::string& client, uint64_t ino) const;
  // The sessions other than `client`'s that hold `ino` open.
  std::vector<std::string> other_openers(const std::string& client, uint64_t ino) const;

  // A reply remembered in the store (after a restart): a resend of `seq` gets it. Seq
  // kSessionRecordSeq is the record of the session itself: it marks it `recorded`.
  void preload(const std::string& client, uint64_t seq, std::string reply_body,
               asio::any_io_executor ex, Clock::time_point now);

  struct Expired {
    std::vector<std::string> clients;  // sessions that ended
    std::vector<uint64_t> ids;         // and their Session::id
    std::vector<uint64_t> unused;      // inodes nobody holds open any more
  };
  // Ends sessions not seen for `timeout` whose connection is gone.
  Expired expire(Clock::time_point now, Duration timeout);
  // Ends one session now (an eviction), whatever its state. No-op for an unknown one.
  Expired end(const std::string& client);

  // Moves every session's last renewal `by` later (the MDS could not read renewals).
  void extend_leases(Duration by) {
    for (auto& [client, s] : sessions_) s.last_renew += by;
  }
  // Renewing sessions that have not renewed for `timeout` and are not being evicted.
  std::vector<std::string> overdue(Clock::time_point now, Duration timeout) const;
  Session* find(const std::string& client);
  const std::map<std::string, Session>& all() const { return sessions_; }

  size_t size() const { return sessions_.size(); }
  // Forgets every session (a replica that stops leading: its successor has its own).
  void clear() {
    sessions_.clear();
    open_counts_.clear();
  }

 private:
  // Takes the session's opens off the totals; inodes nobody holds open go to `unused`.
  void drop_opens(const Session& s, std::vector<uint64_t>& unused);

  size_t max_remembered_;
  uint64_t next_id_ = 1;
  std::map<std::string, Session> sessions_;
  std::unordered_map<uint64_t, uint32_t> open_counts_;  // ino -> opens by all sessions
};

}  // namespace dfs::mds
