#include "mds/service/committer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "common/raft/raft_group.h"
#include "mds/service/mds_state_machine.h"

namespace dfs::mds {

proto::Timespec realtime_now() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
  proto::Timespec t;
  t.set_sec(ns / 1000000000);
  t.set_nsec(static_cast<uint32_t>(ns % 1000000000));
  return t;
}

Committer::Committer(asio::any_io_executor io, asio::thread_pool& pool, MetaStore& store,
                     FsSettings fs, NowFn now, CommitterOptions options)
    : io_(std::move(io)),
      pool_(pool),
      store_(store),
      fs_(std::move(fs)),
      now_(now ? std::move(now) : NowFn(realtime_now)),
      options_(options),
      sync_wake_(io_),
      projected_(store_),
      flight_settled_(io_) {}

Result<uint64_t> Committer::read_last_index() const { return read_counter(store_, kLogIndex); }

void Committer::adopt_last_index(uint64_t index) {
  last_index_ = index;
  durable_index_ = index;  // what a restart finds in the log is on disk by now
}

Status Committer::load() {
  adopt_last_index(DFS_TRY(read_last_index()));
  return ok_status();
}

awaitable<Result<std::string>> Committer::submit(proto::MdsLogEntry entry) {
  auto pending = std::make_shared<Pending>(io_, std::move(entry));
  queue_.push_back(pending);
  if (!writing_) {
    // Posted, not run here: requests that arrive meanwhile join the group.
    writing_ = true;
    if (raft_) {
      spawn_checked(io_, replicate_groups());
    } else {
      asio::post(io_, [this] { write_groups(); });
    }
  }
  co_await pending->done.wait();
  co_return std::move(pending->result);
}

Committer::Group Committer::take_group() {
  Group group;
  size_t bytes = 0;
  while (!queue_.empty() && group.size() < options_.max_group_entries &&
         (group.empty() || bytes < options_.max_group_bytes)) {
    bytes += queue_.front()->entry.ByteSizeLong();
    group.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return group;
}

void Committer::set_raft(raft::RaftGroup* raft, std::function<uint64_t()> last_command_index) {
  raft_ = raft;
  raft_last_command_ = std::move(last_command_index);
  // One group is one Raft command, which must fit the group's command limit.
  options_.max_group_bytes = std::min<size_t>(options_.max_group_bytes, 512u << 10);
}

void Committer::write_groups() {
  while (!queue_.empty()) {
    Group group = take_group();
    uint64_t first = last_index_ + 1;
    // On the I/O thread: applying a group reads cached RocksDB state and appends to the
    // log in the page cache (the fsync is the syncer's, on the pool), tens of µs; a
    // hop to a pool thread and back cost more than that in wake-ups.
    Status written = process(group, first);
    bool logged = false;
    for (auto& p : group) {
      if (p->result && !written) p->result = written.error();
      if (p->result) {
        logged = true;
        last_index_ = std::max(last_index_, p->entry.index());
        count_entry(p->entry);
        applied_.push_back(p);
        if (!options_.reply_after_sync) p->done.set(true);  // the early reply
      } else {
        if (written) ++stats_.failed_entries;
        p->done.set(true);  // nothing logged: nothing to wait for
      }
    }
    if (logged) ++stats_.groups;  // a group whose every entry failed wrote nothing
    if (!written) spdlog::error("metadata group commit failed: {}", written.error().to_string());
    start_syncer();
  }
  writing_ = false;
}

namespace {

// Writes above this go as entries instead (the rank's Raft commands take up to 3 MiB;
// an entry's writes are about its own size, but an op may write more than it carries).
constexpr size_t kMaxWritesBytes = 2u << 20;

// The Raft command of a group that applied on the leader into `writes`, decided on the
// state at Raft index `decided_on`: those writes or, when they are too large, its
// entries that applied.
proto::MdsLogGroup group_command(WriteBatch writes, uint64_t decided_on,
                                 const std::vector<const proto::MdsLogEntry*>& applied) {
  proto::MdsLogGroup command;
  command.set_decided_on(decided_on);
  if (writes.bytes() > kMaxWritesBytes) {
    for (const auto* entry : applied) *command.add_entries() = *entry;
    return command;
  }
  for (auto& op : writes.take_ops()) {
    proto::MdsStoreWrite* w = command.add_writes();
    w->set_key(std::move(op.key));
    if (op.is_delete) {
      w->set_removed(true);
    } else {
      w->set_value(std::move(op.value));
    }
  }
  return command;
}

}  // namespace

awaitable<void> Committer::replicate_groups() {
  while (!queue_.empty()) {
    // After a group that was not replicated, decide again only on the committed state,
    // once every group in flight has settled. Otherwise a few groups may be in flight
    // at once.
    while (void_after_ ? !flights_.empty() : flights_.size() >= kMaxGroupsInFlight) {
      co_await flight_settled_.wait(Duration(100));
    }
    void_after_.reset();
    Group group = take_group();
    auto flight = std::make_shared<Flight>(std::move(group), next_flight_++);
    flights_.push_back(flight);
    // Decided on the committed state with the groups in flight on top, and numbered on
    // from its count of entries: a group this replica proposed as an earlier leader may
    // have committed after all.
    const uint64_t decided_on = projected_command_.value_or(raft_last_command_());
    if (projected_command_) ++stats_.pipelined_groups;
    auto logged = read_counter(projected_, kLogIndex);
    if (!logged) {
      for (auto& p : flight->group) p->result = logged.error();
      flight->early_client = std::string();  // changes nothing: nobody's
      flight->outcome = ok_status();
      settle_flights();
      continue;
    }
    GroupTxn scratch(projected_);  // never written: the state machine writes the store
    apply_group(flight->group, *logged + 1, scratch);
    std::vector<const proto::MdsLogEntry*> applied;
    for (const auto& p : flight->group) {
      if (p->result) applied.push_back(&p->entry);
    }
    if (applied.empty()) {
      flight->early_client = std::string();  // changes nothing: nobody's
      flight->outcome = ok_status();  // nothing to propose; replies in order
      settle_flights();
      continue;
    }
    WriteBatch writes = scratch.batch();
    projected_.add(flight->id, writes);
    flight->proposed = true;
    flight->early_client = sole_early_client(flight->group);
    ++stats_.groups;
    auto appended = std::make_shared<Completion<bool>>(io_);
    spawn_checked(io_, replicate(flight, group_command(std::move(writes), decided_on, applied),
                                 appended));
    // The next group is decided on this one, so it needs this one's Raft index. One that
    // never reached the log voids the groups after it: decide again once they settled.
    if (!co_await appended->wait()) {
      void_after_ = std::min(void_after_.value_or(flight->id), flight->id);
    } else {
      flight->appended = true;
      reply_early_in_order();
    }
  }
  writing_ = false;
}

awaitable<void> Committer::replicate(std::shared_ptr<Flight> flight, proto::MdsLogGroup command,
                                     std::shared_ptr<Completion<bool>> appended) {
  // Named: GCC 12 mishandles non-trivial temporaries in a co_await expression.
  std::string serialized = command.SerializeAsString();
  raft::AppendedFn on_appended = [this, appended](raft::Index index) {
    projected_command_ = index;
    appended->set(true);
  };
  auto replicated = co_await raft_->propose(std::move(serialized), std::move(on_appended));
  appended->set(false);  // failed before it was appended (no-op otherwise)
  if (!replicated) {
    flight->outcome = std::move(replicated).error();
  } else if (replicated->result == MdsStateMachine::kStaleGroup) {
    flight->outcome = make_error(ErrorCode::kUnavailable,
                                 "the group was decided on a state a group of an earlier "
                                 "leader changed; resend");
    // Only a group decided before an earlier leader's group committed is dropped, and a
    // serving leader has applied every group before its term: its groups in flight
    // follow each other in its log, each decided on the one before. Were one dropped
    // anyway, those proposed after it would apply without its writes.
    const bool followed = std::any_of(flights_.begin(), flights_.end(), [&](const auto& f) {
      return f->id > flight->id && f->proposed;
    });
    if (followed) {
      spdlog::critical("metadata group {} was dropped with groups decided on it already "
                       "proposed: they apply without its writes",
                       flight->id);
    }
  } else {
    flight->outcome = ok_status();
  }
  settle_flights();
}

void Committer::set_early_replies(std::function<bool(const proto::MdsLogEntry&)> may_reply_early,
                                  std::function<void(const Error&)> on_early_lost) {
  may_reply_early_ = std::move(may_reply_early);
  on_early_lost_ = std::move(on_early_lost);
}

std::optional<std::string> Committer::sole_early_client(const Group& group) const {
  if (!may_reply_early_) return std::nullopt;
  std::string client;
  for (const auto& p : group) {
    if (!p->result) continue;  // an error changes nothing, and waits for the commit
    const proto::MdsRequestHeader* header = request_header(p->entry);
    if (!header) continue;  // the MDS's own
    const std::string& of = header->reqid().client();
    if (of.empty() || !may_reply_early_(p->entry)) return std::nullopt;
    if (!client.empty() && client != of) return std::nullopt;
    client = of;
  }
  return client;
}

namespace {

// Whether a group's early_client leaves `client` the only client with changes in it.
bool only_of(const std::optional<std::string>& early_client, const std::string& client) {
  return early_client && (early_client->empty() || *early_client == client);
}

}  // namespace

bool Committer::unsettled_only_of(const std::string& client) const {
  // One of the client's groups that is in the log and was not answered early (there was
  // no lease) may yet be decided again after a failover: the client must not see it.
  return std::all_of(flights_.begin(), flights_.end(), [&](const auto& f) {
    return only_of(f->early_client, client) &&
           (f->early_client->empty() || f->replied_early || !f->appended);
  });
}

void Committer::reply_early_in_order() {
  // Only while no other leader can have been elected (the Raft leader lease): a client
  // answered now resends to the next leader in its reconnect phase, ahead of every
  // other client's change. A leader cut off from the others stops answering early
  // before they can elect another.
  if (!raft_->holds_lease()) return;
  std::string client;  // the first with changes in flight
  for (auto& flight : flights_) {
    // A group refused by Raft is lost: neither it nor one after it is answered early.
    const bool failed = flight->outcome && !*flight->outcome;
    if (!flight->early_client || !flight->appended || failed) return;
    if (client.empty()) client = *flight->early_client;
    if (!only_of(flight->early_client, client)) return;
    if (flight->replied_early) continue;
    for (auto& p : flight->group) {
      // Errors wait for the commit: one decided on a group that is then dropped is void.
      // So do the MDS's own entries.
      if (p->done.ready() || !p->result || !request_header(p->entry)) continue;
      // In the log of the leader, and decided on what its client was answered before:
      // a failover loses it only with the leader, and its client then resends it.
      p->done.set(true);
      flight->replied_early = true;
      ++stats_.early_replies;
    }
  }
}

void Committer::settle_flights() {
  while (!flights_.empty() && flights_.front()->outcome) {
    std::shared_ptr<Flight> flight = std::move(flights_.front());
    flights_.pop_front();
    projected_.settle(flight->id);
    Status outcome = *flight->outcome;
    // A group after one that was not replicated was decided on it: one that proposed
    // nothing (every entry failed) is void, its errors too; one that did fails when its
    // predecessor's term ends, or, proposed in the same term, commits after it.
    if (outcome && void_after_ && flight->id > *void_after_ && !flight->proposed) {
      outcome = make_error(ErrorCode::kUnavailable,
                           "the group was decided on a group that was not replicated; resend");
    }
    if (!outcome) void_after_ = std::min(void_after_.value_or(flight->id), flight->id);
    for (auto& p : flight->group) {
      // Every entry of a group not replicated fails retryably, those its op refused as
      // well (refused on a state that may not hold), unless it was answered early.
      if (!outcome) p->result = outcome.error();
      if (p->result) {
        last_index_ = std::max(last_index_, p->entry.index());
        count_entry(p->entry);
        // Committed on a majority: as durable as a replicated rank makes anything.
        for (auto& listener : listeners_) listener(p->entry, p->effects);
      } else if (outcome) {
        ++stats_.failed_entries;
      }
      p->done.set(true);
    }
    if (outcome && flight->proposed) {
      for (auto& listener : group_listeners_) listener();
    }
    durable_index_ = last_index_;
    std::erase_if(settle_waiters_, [&](DurableWaiter& w) {
      if (w.index > flight->id) return false;
      w.done->set(outcome);
      return true;
    });
    if (!outcome) {
      // Not the leader any more, or the group stopped: the entries may still commit, so
      // the indexes are reloaded from the store before this replica leads again.
      spdlog::warn("metadata group not replicated: {}", outcome.error().to_string());
      if (flight->replied_early && on_early_lost_) on_early_lost_(outcome.error());
    }
  }
  if (flights_.empty()) projected_command_.reset();
  // A client's groups held back by another's that settled now may be answered early.
  reply_early_in_order();
  flight_settled_.notify();
}

void Committer::count_entry(const proto::MdsLogEntry& entry) {
  ++stats_.entries;
  const size_t kind = static_cast<size_t>(entry.op_case());
  if (kind < stats_.entries_by_kind.size()) ++stats_.entries_by_kind[kind];
}

void Committer::start_syncer() {
  if (syncing_ || durable_index_ >= last_index_) return;
  syncing_ = true;
  spawn_checked(io_, syncer_loop());
}

awaitable<void> Committer::syncer_loop() {
  // One fsync covers every group written before it started; groups written while it
  // runs wait for the next round.
  while (durable_index_ < last_index_ && sync_failure_) {
    if (durable_waiters_.empty() && !options_.reply_after_sync &&
        options_.sync_delay.count() > 0) {
      co_await sync_wake_.wait(options_.sync_delay);
    }
    uint64_t target = last_index_;
    Status synced = co_await run_blocking(pool_, [this] { return store_.sync(); });
    ++stats_.syncs;
    if (!synced) {
      spdlog::error("metadata log sync failed: {}", synced.error().to_string());
      on_sync_failed(synced.error());
      break;
    }
    on_durable(target);
  }
  syncing_ = false;
}

void Committer::on_durable(uint64_t index) {
  durable_index_ = std::max(durable_index_, index);
  bool told = false;
  while (!applied_.empty() && applied_.front()->entry.index() <= durable_index_) {
    auto p = std::move(applied_.front());
    applied_.pop_front();
    for (auto& listener : listeners_) listener(p->entry, p->effects);
    if (!p->done.ready()) p->done.set(true);
    told = true;
  }
  if (told) {
    for (auto& listener : group_listeners_) listener();
  }
  std::erase_if(durable_waiters_, [&](DurableWaiter& w) {
    if (w.index > durable_index_) return false;
    w.done->set(ok_status());
    return true;
  });
}

void Committer::on_sync_failed(const Error& failure) {
  sync_failure_ = failure;
  for (auto& w : durable_waiters_) w.done->set(failure);
  durable_waiters_.clear();
  // Entries that will never be durable: their objects are never deleted for them, and
  // replies held for durability (reply_after_sync) fail rather than wait forever.
  for (auto& p : applied_) {
    if (p->done.ready()) continue;
    p->result = failure;
    p->done.set(true);
  }
  applied_.clear();
}

awaitable<Status> Committer::wait_durable() {
  if (raft_) {
    if (flights_.empty()) co_return ok_status();
    auto done = std::make_shared<Completion<Status>>(io_);
    settle_waiters_.push_back({flights_.back()->id, done});
    co_return co_await done->wait();
  }
  if (!sync_failure_) co_return sync_failure_;
  if (durable_index_ >= last_index_) co_return ok_status();
  auto done = std::make_shared<Completion<Status>>(io_);
  durable_waiters_.push_back({last_index_, done});
  sync_wake_.notify();
  start_syncer();
  co_return co_await done->wait();
}

Status Committer::decide(Pending& p, GroupTxn& txn, uint64_t index) {
  auto& e = p.entry;
  e.set_index(index);
  const proto::MdsRequestHeader* header = request_header(e);
  // A client that answered the request itself said which time it predicted with.
  *e.mutable_now() = header && header->has_client_time() ? header->client_time() : now_();
  if (entry_allocates_ino(e)) {
    uint64_t next = DFS_TRY(read_counter(txn, kNextIno));
    uint64_t floor = first_ino_of_rank(fs_.rank);
    if (header && header->want_ino() != 0) {
      DFS_TRY_STATUS(check_wanted_ino(txn, header->want_ino(), floor, next));
      e.set_new_ino(header->want_ino());
    } else {
      e.set_new_ino(std::max(next, floor));
    }
    if (e.has_mknod() && !e.has_layout()) *e.mutable_layout() = fs_.default_layout;
  }
  return ok_status();
}

Status Committer::check_wanted_ino(GroupTxn& txn, uint64_t want, uint64_t floor, uint64_t next) {
  // Numbers below the counter were handed out (to this client, by kMdsAllocInos, or
  // used by the MDS itself); one in use must not be taken again.
  if (want < floor || want >= next) {
    return make_error(ErrorCode::kInvalidArgument,
                      "inode number " + std::to_string(want) + " was not handed out");
  }
  if (DFS_TRY(txn.get(inode_key(want)))) {
    return make_error(ErrorCode::kAlreadyExists,
                      "inode number " + std::to_string(want) + " is in use");
  }
  return ok_status();
}

Status Committer::process(Group& group, uint64_t first_index) {
  GroupTxn txn(store_);
  apply_group(group, first_index, txn);
  if (txn.empty()) return ok_status();
  return store_.write(txn.batch(), /*sync=*/false);
}

void Committer::apply_group(Group& group, uint64_t first_index, GroupTxn& txn) {
  uint64_t index = first_index;
  for (auto& p : group) {
    txn.begin_entry();
    auto decided = decide(*p, txn, index);
    if (!decided) {
      p->result = decided.error();
      txn.abort_entry();
      continue;
    }
    p->result = apply_entry(p->entry, fs_, txn, p->effects);
    if (p->result) {
      txn.commit_entry();
      ++index;
    } else {
      txn.abort_entry();
      p->effects = {};
    }
  }
}

}  // namespace dfs::mds
