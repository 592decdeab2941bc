#include "mds/service/committer.h"

#include <spdlog/spdlog.h>

#include <chrono>

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
      options_(options) {}

Status Committer::load() {
  last_index_ = DFS_TRY(read_counter(store_, kLogIndex));
  return ok_status();
}

awaitable<Result<std::string>> Committer::submit(proto::MdsLogEntry entry) {
  auto pending = std::make_shared<Pending>(io_, std::move(entry));
  queue_.push_back(pending);
  if (!writing_) {
    writing_ = true;
    spawn_checked(io_, writer_loop());
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

awaitable<void> Committer::writer_loop() {
  while (!queue_.empty()) {
    Group group = take_group();
    uint64_t first = last_index_ + 1;
    // The pool task owns the group's entries until it returns; nothing else touches
    // them meanwhile (their submitters wait on `done`).
    Status written =
        co_await run_blocking(pool_, [this, &group, first] { return process(group, first); });
    ++stats_.groups;
    for (auto& p : group) {
      if (p->result && !written) p->result = written.error();
      if (p->result) {
        last_index_ = std::max(last_index_, p->entry.index());
        ++stats_.entries;
        for (auto& listener : listeners_) listener(p->entry, p->effects);
      } else if (written) {
        ++stats_.failed_entries;
      }
    }
    if (!written) spdlog::error("metadata group commit failed: {}", written.error().to_string());
    for (auto& p : group) p->done.set(true);
  }
  writing_ = false;
}

Status Committer::decide(Pending& p, GroupTxn& txn, uint64_t index) {
  auto& e = p.entry;
  e.set_index(index);
  *e.mutable_now() = now_();
  if (entry_allocates_ino(e)) {
    uint64_t next = DFS_TRY(read_counter(txn, kNextIno));
    uint64_t floor = (uint64_t(fs_.rank) << kRankShift) | 2;  // 1 is the root
    e.set_new_ino(std::max(next, floor));
    if (e.has_mknod() && !e.has_layout()) *e.mutable_layout() = fs_.default_layout;
  }
  return ok_status();
}

Status Committer::process(Group& group, uint64_t first_index) {
  GroupTxn txn(store_);
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
  if (txn.empty()) return ok_status();
  return store_.write(txn.batch(), /*sync=*/true);
}

}  // namespace dfs::mds
