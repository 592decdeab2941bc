#include "mds/service/committer.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "common/raft/raft_group.h"
#include "mds/service/speculation.h"
#include "mds/store/keys.h"

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
      sync_wake_(io_) {}

Status Committer::load() {
  if (raft_) {
    // A replica leading again: groups it wrote early in an earlier term and that are not
    // in the log now (everything committed before this term is applied by now).
    size_t undone = DFS_TRY(roll_back_store(store_, *ledger_, /*sync=*/false));
    if (undone > 0) spdlog::warn("undid {} uncommitted group(s) of an earlier term", undone);
  }
  last_index_ = DFS_TRY(read_counter(store_, kLogIndex));
  durable_index_ = last_index_;  // what a restart finds in the log is on disk by now
  // New inode numbers start a gap above any the previous leader (or this process before
  // a restart) may have handed out in replies that were then lost: a client resending
  // such a create gets its number back (decide()), and no other create can have taken
  // it meanwhile.
  uint64_t next = DFS_TRY(read_counter(store_, kNextIno));
  uint64_t floor = (uint64_t(fs_.rank) << kRankShift) | 2;  // 1 is the root
  ino_floor_ = std::max(next, floor) + kTakeoverInoGap;
  deposed_ = false;
  return ok_status();
}

awaitable<Result<std::string>> Committer::submit(proto::MdsLogEntry entry) {
  auto pending = std::make_shared<Pending>(io_, std::move(entry));
  queue_.push_back(pending);
  if (!writing_) {
    // Posted, not run here: requests that arrive meanwhile join the group.
    writing_ = true;
    if (raft_) {
      asio::post(io_, [this] { replicate_groups(); });
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

void Committer::set_raft(raft::RaftGroup* raft, UndoLedger* ledger) {
  raft_ = raft;
  ledger_ = ledger;
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
    ++stats_.groups;
    for (auto& p : group) {
      if (p->result && !written) p->result = written.error();
      if (p->result) {
        last_index_ = std::max(last_index_, p->entry.index());
        ++stats_.entries;
        applied_.push_back(p);
        if (!options_.reply_after_sync) p->done.set(true);  // the early reply
      } else {
        if (written) ++stats_.failed_entries;
        p->done.set(true);  // nothing logged: nothing to wait for
      }
    }
    if (!written) spdlog::error("metadata group commit failed: {}", written.error().to_string());
    start_syncer();
  }
  writing_ = false;
}

void Committer::replicate_groups() {
  while (!queue_.empty()) {
    Group group = take_group();
    auto status = raft_->status();
    Status written = ok_status();
    if (deposed_ || status.role != raft::Role::kLeader) {
      written = Error(ErrorCode::kUnavailable, "this replica does not lead the rank any more");
    } else {
      written = speculate(group, last_index_ + 1, status.term);
    }
    ++stats_.groups;
    Written out{status.term, {}};
    for (auto& p : group) {
      if (p->result && !written) p->result = written.error();
      if (p->result) {
        last_index_ = std::max(last_index_, p->entry.index());
        ++stats_.entries;
        out.entries.push_back(p);
      } else if (written) {
        ++stats_.failed_entries;
      }
      p->done.set(true);  // the early reply, or the entry's error
    }
    if (!written) spdlog::warn("metadata group not written: {}", written.error().to_string());
    if (!out.entries.empty()) unproposed_.push_back(std::move(out));
  }
  writing_ = false;
  if (!proposing_ && !unproposed_.empty()) {
    proposing_ = true;
    spawn_checked(io_, propose_loop());
  }
}

Status Committer::speculate(Group& group, uint64_t first_index, uint64_t term) {
  GroupTxn txn(store_);
  apply_group(group, first_index, txn);
  if (txn.empty()) return ok_status();
  WriteBatch batch = txn.batch();
  DFS_TRY_STATUS(add_undo_record(store_, term, first_index, batch));
  DFS_TRY_STATUS(store_.write(batch, /*sync=*/false));
  ledger_->add(first_index, term);
  return ok_status();
}

awaitable<void> Committer::propose_loop() {
  // One proposal in flight: the groups written meanwhile go together in the next, so a
  // Raft round (and its fsyncs and messages) is shared by everything written during
  // the one before, as the single MDS's syncer shares one fsync.
  constexpr size_t kMaxCommandBytes = 2u << 20;  // the Raft group takes up to 3 MiB
  while (!unproposed_.empty() && !deposed_) {
    proto::MdsLogGroup command;
    command.set_speculated_term(unproposed_.front().term);
    Group logged;
    size_t bytes = 0;
    while (!unproposed_.empty() && unproposed_.front().term == command.speculated_term()) {
      auto& next = unproposed_.front();
      size_t more = 0;
      for (const auto& p : next.entries) more += p->entry.ByteSizeLong();
      if (!logged.empty() && bytes + more > kMaxCommandBytes) break;
      bytes += more;
      for (auto& p : next.entries) {
        *command.add_entries() = p->entry;
        logged.push_back(std::move(p));
      }
      unproposed_.pop_front();
    }
    uint64_t last = command.entries(command.entries_size() - 1).index();
    auto replicated = co_await raft_->propose(command.SerializeAsString());
    if (!replicated) {
      on_not_committed(last, replicated.error());
      break;
    }
    // Committed on a majority: as durable as a replicated rank makes anything.
    for (auto& p : logged) {
      for (auto& listener : listeners_) listener(p->entry, p->effects);
    }
    on_durable(last);
  }
  proposing_ = false;
}

void Committer::on_not_committed(uint64_t last, const Error& why) {
  if (deposed_) return;
  deposed_ = true;
  spdlog::warn("metadata groups up to index {} not committed ({}); undoing every group not "
               "known committed, this replica stops serving",
               last, why.to_string());
  // Those that still commit come back through the log, applied like any entry; those
  // never proposed are gone, and their clients resend them to the next leader.
  unproposed_.clear();
  auto undone = roll_back_store(store_, *ledger_, /*sync=*/false);
  if (!undone) spdlog::error("undoing uncommitted groups failed: {}", undone.error().to_string());
  Error lost(ErrorCode::kUnavailable, "the rank's leader changed before the change committed");
  for (auto& w : durable_waiters_) w.done->set(lost);
  durable_waiters_.clear();
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
  while (!applied_.empty() && applied_.front()->entry.index() <= durable_index_) {
    auto p = std::move(applied_.front());
    applied_.pop_front();
    for (auto& listener : listeners_) listener(p->entry, p->effects);
    if (!p->done.ready()) p->done.set(true);
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
  // Entries that will never be durable: their objects are never deleted for them.
  applied_.clear();
}

awaitable<Status> Committer::wait_durable() {
  if (raft_) {
    // Committed is durable; the proposals' completions advance durable_index_.
    if (deposed_) {
      co_return Error(ErrorCode::kUnavailable, "this replica does not lead the rank any more");
    }
    if (durable_index_ >= last_index_) co_return ok_status();
    auto done = std::make_shared<Completion<Status>>(io_);
    durable_waiters_.push_back({last_index_, done});
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
  *e.mutable_now() = now_();
  if (entry_allocates_ino(e)) {
    uint64_t next = DFS_TRY(read_counter(txn, kNextIno));
    uint64_t floor = (uint64_t(fs_.rank) << kRankShift) | 2;  // 1 is the root
    uint64_t ino = std::max({next, floor, ino_floor_});
    uint64_t want = e.has_mknod() ? e.mknod().header().want_ino() : e.symlink().header().want_ino();
    if (want != 0) {
      // A create resent after a failover or restart, whose lost first execution handed
      // out `want`: below this leader's gap, so no create of ours took it, unless the
      // first execution did commit after all and another create has it now.
      bool free = want >= floor && want < ino_floor_ && (want >> kRankShift) == fs_.rank &&
                  !DFS_TRY(txn.get(inode_key(want)));
      if (free) {
        ino = want;
      } else {
        spdlog::warn("a resent create asked for inode {:#x}, which is not free; it gets {:#x}",
                     want, ino);
      }
    }
    e.set_new_ino(ino);
    if (e.has_mknod() && !e.has_layout()) *e.mutable_layout() = fs_.default_layout;
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
