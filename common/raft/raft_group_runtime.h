// RaftGroupRuntime: the state behind a RaftGroup, shared (shared_ptr) with the
// coroutines that run for it (the Ready loop, the ticker, one sender per peer), so that
// a coroutine resuming after the group was destroyed finds `stopped_` set instead of
// freed memory. Internal to raft_group*.cc; everything runs on `executor_`.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/rpc/completion.h"
#include "common/raft/raft_group.h"

namespace dfs::raft {

class RaftGroupRuntime : public std::enable_shared_from_this<RaftGroupRuntime> {
 public:
  RaftGroupRuntime(asio::any_io_executor executor, asio::thread_pool& pool,
                   rpc::Messenger& messenger, std::unique_ptr<RaftLogStorage> storage,
                   StateMachine& sm, RaftGroupOptions options);

  void start();
  void shutdown();  // fails pending operations with kCancelled; idempotent
  awaitable<void> wait_idle();

  awaitable<Result<Applied>> propose(std::string command, AppendedFn appended);
  awaitable<Status> read();
  void receive(Message m);
  RaftGroupStatus status() const;
  bool holds_lease() const { return !stopped_ && !failed_ && Clock::now() < lease_until_; }
  void set_peer_address(NodeId id, std::string address) { options_.peers[id] = std::move(address); }
  uint64_t group_id() const { return options_.group_id; }

 private:
  using ProposalDone = std::shared_ptr<Completion<Result<Applied>>>;
  using ReadDone = std::shared_ptr<Completion<Status>>;
  struct QueuedProposal {
    std::string command;
    ProposalDone done;
    AppendedFn appended;
  };
  struct Proposal {
    Term term;
    ProposalDone done;
  };
  struct Read {
    ReadDone done;
    uint64_t issued_tick;
  };
  struct PeerQueue {
    std::deque<std::string> frames;  // encoded envelopes
    bool sending = false;
  };

  // The loop (raft_group_loop.cc).
  void kick();
  awaitable<void> run(std::shared_ptr<RaftGroupRuntime> self);
  awaitable<void> tick_loop(std::shared_ptr<RaftGroupRuntime> self);
  void feed();
  void handle_ready(Ready& rd);
  void apply(const std::vector<Entry>& entries);
  void after_advance();
  // With images_on_demand: makes and attaches a whole image if a follower waits for one.
  // Returns whether it did. Only between Readys (the state is at the node's applied).
  bool attach_image_if_wanted();
  void on_role_change();
  // Sets lease_until_ from the node's lease (RaftNode::lease_start_tick).
  void update_lease();
  void fail(const Error& error);

  // Operations (raft_group_ops.cc).
  Error not_leader() const;
  void submit_proposals();
  void issue_read(Read read);
  void on_read_state(const ReadState& rs);
  void complete_reads();
  void expire_reads();
  void fail_lost_proposals();
  void fail_all(const Error& error);

  // Sending (raft_group_send.cc).
  void send(const Message& m);
  awaitable<void> sender(std::shared_ptr<RaftGroupRuntime> self, NodeId to);

  asio::any_io_executor executor_;
  asio::thread_pool& pool_;
  rpc::Messenger& messenger_;
  std::unique_ptr<RaftLogStorage> storage_;
  StateMachine& sm_;
  RaftGroupOptions options_;
  SplitMixRandom random_;
  RaftNode node_;
  asio::steady_timer ticker_;
  Completion<bool> idle_;  // set when stopped and the loop has exited

  bool started_ = false;
  bool stopped_ = false;
  bool running_ = false;  // the Ready loop is active (possibly waiting for a sync)
  std::optional<Error> failed_;

  // Inputs that arrived since the node was last fed (the loop feeds them all at once,
  // never between ready() and advance()).
  int pending_ticks_ = 0;
  std::vector<Message> inbox_;
  std::vector<QueuedProposal> queued_proposals_;
  std::vector<Read> queued_reads_;

  std::map<Index, Proposal> proposals_;      // appended, waiting to be applied
  std::map<uint64_t, Read> confirming_;      // read_index issued, by context
  std::multimap<Index, Read> read_waiting_;  // confirmed, waiting for applied >= index
  uint64_t next_read_context_ = 1;
  uint64_t ticks_ = 0;
  // When each recent tick was fed to the node (its tick count, the time): at or before
  // any message of that tick left.
  std::deque<std::pair<uint64_t, Clock::time_point>> tick_fed_at_;
  // The node's leader lease in real time: from when the tick it started at was fed,
  // lease_ticks() tick intervals. Ticks that came late only make it shorter.
  Clock::time_point lease_until_{};
  Role last_role_ = Role::kFollower;
  Term last_term_ = 0;

  // The applied index a compaction is for, while the state machine makes it durable.
  std::optional<Index> compaction_target_;
  std::map<NodeId, PeerQueue> peer_queues_;
  RaftGroupStatus counters_;  // only the counter fields are kept up to date
};

}  // namespace dfs::raft
