// One simulated FUSE client: a ClientCaps for its current session, plus what a real
// client keeps under those rights (cached versions, buffered changes, mutations in
// flight). Each step runs its timers and, while faults last, one random use of the file
// system: ask for rights, read, write, flush, release. Reads check what the rights
// promise: a cached version is current, and no other client holds a buffered change.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "common/caps/client_caps.h"
#include "tests/sim/caps/sim_world.h"

namespace dfs::caps::sim {

struct SimStats {
  uint64_t events = 0;
  uint64_t grants = 0;
  uint64_t revokes = 0;
  uint64_t evictions = 0;
  uint64_t cached_reads = 0;
  uint64_t buffered_writes = 0;
  uint64_t sync_writes = 0;
  uint64_t mutations = 0;
  uint64_t refused_writes = 0;  // by the fence
  uint64_t client_crashes = 0;
  uint64_t pauses = 0;
  uint64_t mds_crashes = 0;
};

class SimClient;

// What a client step may touch besides itself.
struct ClientContext {
  TimeMs now = 0;
  std::mt19937_64* rng = nullptr;
  SimNetwork* net = nullptr;
  SimStorage* storage = nullptr;
  const std::vector<InodeInfo>* inodes = nullptr;
  const std::vector<SimClient>* clients = nullptr;
  SimStats* stats = nullptr;
  uint32_t mds_incarnation = 0;
  bool quiet = false;  // healing: no new wants, writes or mutations
  std::function<void(std::string)> violation;
  std::function<void(std::string)> log;
};

class SimClient {
 public:
  SimClient(int index, ClientCapsOptions options, TimeMs session_timeout_ms)
      : index_(index), options_(options), session_timeout_ms_(session_timeout_ms) {}

  int index() const { return index_; }
  bool running() const { return caps_ != nullptr; }
  bool paused(TimeMs now) const { return now < paused_until_; }
  SessionId session() const { return session_; }
  const ClientCaps* caps() const { return caps_.get(); }
  bool buffers(Ino ino, Domain d) const;
  // Evicted or refused by the MDS: the simulation opens it a new session.
  bool needs_new_session() const { return needs_new_session_; }
  // Nothing left to settle: no unanswered want, mutation or recall.
  bool settled() const;

  void start(SessionId s, TimeMs lease_until);
  void crash();
  void pause_until(TimeMs t) { paused_until_ = t; }

  // A message for this client; ignored unless addressed to its current session, and
  // held back while it is paused.
  void deliver(ClientContext& cx, const Delivery& d);
  void step(ClientContext& cx);

 private:
  struct Local {
    std::array<std::optional<uint64_t>, kDomains> cache;  // version read under the cache right
    std::array<int, kDomains> dirty{};                    // changes buffered under excl
  };
  struct Mutation {
    Ino ino = 0;
    InodeKind kind = InodeKind::kFile;
    Domain domain = Domain::kAttr;
    TimeMs sent_at = 0;
  };

  void handle(ClientContext& cx, const ToClient& m);
  void on_lease_reply(ClientContext& cx, const LeaseReply& r, uint32_t incarnation);
  void timers(ClientContext& cx);
  void act(ClientContext& cx);
  void ask(ClientContext& cx, const InodeInfo& inode);
  void read(ClientContext& cx, const InodeInfo& inode, Domain d);
  void write(ClientContext& cx, const InodeInfo& inode, Domain d);
  void give_back(ClientContext& cx, Ino ino, Rights bits);
  void flush(ClientContext& cx, Ino ino, Rights bits);
  void settle_recalls(ClientContext& cx, bool all);
  void send(ClientContext& cx, ToMds m);
  void send_outbox(ClientContext& cx);

  int index_;
  ClientCapsOptions options_;
  TimeMs session_timeout_ms_;
  SessionId session_ = 0;
  std::unique_ptr<ClientCaps> caps_;
  std::map<Ino, Local> local_;
  std::map<uint64_t, Mutation> mutations_;
  uint64_t next_mutation_ = 1;
  std::deque<Delivery> inbox_;  // arrived while paused
  TimeMs paused_until_ = 0;
  TimeMs next_renew_ = 0;
  uint32_t reconnected_to_ = 0;  // the MDS instance this session reconnected to
  TimeMs reconnect_sent_ = 0;
  bool reconnect_answered_ = true;
  bool needs_new_session_ = false;
};

}  // namespace dfs::caps::sim
