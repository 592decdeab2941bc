// Orphans and the purge queue. An inode whose last link goes stays as an orphan while
// any session holds it open; once none does (and, after a restart, once the reclaim
// grace period has given clients time to re-open their files) a ReleaseOrphans entry
// deletes it and queues its objects. The purge loop removes queued objects in the
// background and logs one PurgedFiles entry per batch of files; its backlog is reported
// by kMdsStatFs. Both log a batch per entry: an rm -rf orphans every file it removes,
// and an entry per file would cost the replicated rank as much again as its unlinks.
//
// The active replica keeps the queued files' inode numbers in memory (purge_queue_),
// read from the store once when it starts serving, added to as release entries become
// durable and cleared when it stands by. The loop reads each file's record by its key:
// scanning the queue in the store would walk the deletion marker of every record purged
// before (they stay until a compaction drops them), thousands per batch after an rm -rf.
#include <spdlog/spdlog.h>

#include <utility>

#include "mds/ops/meta_view.h"
#include "mds/service/mds_service.h"

namespace dfs::mds {
namespace {

constexpr size_t kPurgeBatch = 64;
constexpr size_t kReleaseBatch = 256;  // orphans per ReleaseOrphans entry
constexpr Duration kPurgeIdleWait{30000};
constexpr Duration kPurgeRetryWait{2000};

}  // namespace

void MdsService::start_background() {
  if (background_started_) return;
  background_started_ = true;
  background_running_ = 3;
  spawn_checked(executor_, purge_loop());
  spawn_checked(executor_, housekeeping_loop());
  spawn_checked(executor_, lease_loop());
}

void MdsService::on_entry_durable(const proto::MdsLogEntry& entry, const ApplyEffects& effects) {
  // Purged: nobody holds them open or reaches them by a name any more (a file replaced
  // by a rename, or unlinked while open, was not removed from the rights then).
  auto released = [this](uint64_t ino) {
    orphans_.erase(ino);
    dir_rights_.removed(ino);
  };
  if (entry.has_release()) released(entry.release().ino());
  for (uint64_t ino : entry.release_orphans().inos()) released(ino);
  // Orphans join orphans_ only once every reply of the entries committed with them has
  // run (weigh_orphans): an entry of the same group may open the file (a mount's
  // deferred create and unlink of it, an O_CREAT of the existing name, an open by
  // number), and its reply is what counts that open. Until then nothing may purge them,
  // not even the housekeeping sweep.
  unweighed_orphans_.insert(unweighed_orphans_.end(), effects.orphaned.begin(),
                            effects.orphaned.end());
  if (!effects.purge_queued.empty()) {
    purge_queue_.insert(effects.purge_queued.begin(), effects.purge_queued.end());
    purge_wake_.notify();
  }
}

void MdsService::purge_if_unused(uint64_t ino) {
  if (stopping_ || !serving_) return;
  if (!orphans_.count(ino) || sessions_.open_count(ino) > 0 || purging_orphans_.count(ino)) return;
  if (Clock::now() - started_at_ < options_.reclaim_grace) return;  // housekeeping retries
  purging_orphans_.insert(ino);
  orphans_to_release_.push_back(ino);
  if (!releasing_orphans_) {
    releasing_orphans_ = true;
    ++background_running_;  // idle() waits for it
    spawn_checked(executor_, release_orphans(serving_term_));
  }
}

void MdsService::weigh_orphans() {
  if (unweighed_orphans_.empty()) return;
  spawn_checked(executor_, weigh_after_replies(std::exchange(unweighed_orphans_, {}),
                                               serving_term_));
}

awaitable<void> MdsService::weigh_after_replies(std::vector<uint64_t> inos, raft::Term term) {
  // Posted after the group's replies, which the Committer released before calling us.
  co_await asio::post(executor_, asio::use_awaitable);
  if (!serving_ || serving_term_ != term) co_return;  // the next active replica weighs them
  for (uint64_t ino : inos) {
    orphans_.insert(ino);
    purge_if_unused(ino);
  }
}

bool MdsService::serving_in(raft::Term term) const {
  return !stopping_ && serving_ && serving_term_ == term;
}

bool MdsService::still_unused(uint64_t ino) const {
  return orphans_.count(ino) && sessions_.open_count(ino) == 0;
}

awaitable<void> MdsService::release_orphans(raft::Term term) {
  // Spawned by the first orphan found: let the sweep or group that found it add the
  // rest. One entry in flight at a time: the orphans found meanwhile make the next.
  co_await asio::post(executor_, asio::use_awaitable);
  while (!orphans_to_release_.empty() && serving_in(term)) {
    std::vector<uint64_t> batch;
    size_t taken = 0;
    for (; taken < orphans_to_release_.size() && batch.size() < kReleaseBatch; ++taken) {
      const uint64_t ino = orphans_to_release_[taken];
      if (still_unused(ino)) {
        batch.push_back(ino);
      } else {
        purging_orphans_.erase(ino);  // reopened (a reconnecting client): weighed again
      }
    }
    orphans_to_release_.erase(orphans_to_release_.begin(), orphans_to_release_.begin() + taken);
    if (batch.empty()) continue;
    auto done = co_await submit_release(batch);
    // One file whose record the op refuses must not hold up the others; any other
    // failure (a deposed leader's group) is the sweep's to retry, the batch whole.
    if (!done && done.error().code() == ErrorCode::kCorruption && batch.size() > 1) {
      for (uint64_t ino : batch) {
        if (!serving_in(term)) break;
        if (!still_unused(ino)) continue;  // reopened while the batch was in flight
        std::vector<uint64_t> one{ino};
        (void)co_await submit_release(std::move(one));
      }
    }
    // Failed: the housekeeping sweep, or the next active replica, retries.
    for (uint64_t ino : batch) purging_orphans_.erase(ino);
  }
  // Stopped or deposed: the next active replica weighs its orphans itself.
  for (uint64_t ino : orphans_to_release_) purging_orphans_.erase(ino);
  orphans_to_release_.clear();
  releasing_orphans_ = false;
  --background_running_;
}

awaitable<Status> MdsService::submit_release(std::vector<uint64_t> inos) {
  proto::MdsLogEntry entry;
  entry.mutable_release_orphans()->mutable_inos()->Add(inos.begin(), inos.end());
  auto done = co_await committer_.submit(std::move(entry));
  if (!done) {
    spdlog::warn("{}: purging {} orphan(s) from {:x} failed: {}", entity_, inos.size(),
                 inos.front(), done.error().to_string());
    co_return unexpected(std::move(done).error());
  }
  co_return ok_status();
}

awaitable<void> MdsService::forget_session(std::string client) {
  proto::MdsLogEntry entry;
  entry.mutable_forget_session()->set_client(client);
  auto done = co_await committer_.submit(std::move(entry));
  if (!done) spdlog::warn("forgetting session {} failed: {}", client, done.error().to_string());
}

awaitable<void> MdsService::housekeeping_loop() {
  bool grace_over = false;
  for (;;) {
    co_await housekeeping_wake_.wait(options_.housekeeping_interval);
    if (stopping_) break;
    if (!serving_) continue;  // the active replica keeps house
    sessions_ended(sessions_.expire(Clock::now(), options_.idle_session_expiry));
    // Orphans left over from before a restart (or whose purge failed) are purged once
    // the clients had their chance to reclaim them.
    if (Clock::now() - started_at_ >= options_.reclaim_grace) {
      if (!grace_over)
        spdlog::info("{}: reclaim grace over; {} orphan(s)", entity_, orphans_.size());
      grace_over = true;
      std::vector<uint64_t> candidates(orphans_.begin(), orphans_.end());
      for (uint64_t ino : candidates) purge_if_unused(ino);
    }
  }
  --background_running_;
}

awaitable<void> MdsService::purge_loop() {
  while (!stopping_) {
    if (!serving_) {  // the active replica purges
      co_await purge_wake_.wait(kPurgeRetryWait);
      continue;
    }
    auto purged = co_await purge_batch();
    if (stopping_) break;
    if (!purged) {
      spdlog::warn("{}: purge: {}", entity_, purged.error().to_string());
      co_await purge_wake_.wait(kPurgeRetryWait);
    } else {
      co_await purge_wake_.wait(kPurgeIdleWait);
    }
  }
  --background_running_;
}

Result<std::set<uint64_t>> MdsService::read_purge_queue() const {
  auto queued = DFS_TRY(store_->scan(purge_prefix(), prefix_end(purge_prefix()), SIZE_MAX));
  std::set<uint64_t> inos;
  for (const auto& kv : queued) inos.insert(get_be64(std::string_view(kv.key).substr(1)));
  return inos;
}

std::vector<uint64_t> MdsService::next_purge_batch() const {
  std::vector<uint64_t> batch;
  for (auto it = purge_queue_.begin(); it != purge_queue_.end() && batch.size() < kPurgeBatch;
       ++it) {
    batch.push_back(*it);
  }
  return batch;
}

Result<std::vector<MdsService::QueuedPurge>> MdsService::read_purge_records(
    const std::vector<uint64_t>& inos) const {
  std::vector<QueuedPurge> out;
  for (uint64_t ino : inos) {
    auto raw = DFS_TRY(store_->get(purge_key(ino)));
    QueuedPurge queued;
    queued.ino = ino;
    if (raw && !queued.record.ParseFromString(*raw)) {
      return make_error(ErrorCode::kCorruption, "undecodable purge record");
    }
    queued.found = raw.has_value();
    out.push_back(std::move(queued));
  }
  return out;
}

awaitable<Status> MdsService::purge_batch() {
  // Until deposed (a standby's queue is empty; the next active replica reads its own).
  while (!stopping_ && serving_ && !purge_queue_.empty()) {
    const std::vector<uint64_t> batch = next_purge_batch();
    // `batch` by reference: GCC 12 destroys a closure temporary in a co_await twice.
    auto queued = co_await run_blocking(blocking_, [this, &batch] {
      return read_purge_records(batch);
    });
    if (!queued) co_return unexpected(std::move(queued).error());
    // The files' objects in parallel, then one PurgedFiles for those whose objects went.
    std::vector<uint64_t> inos;
    std::vector<awaitable<Status>> work;
    for (QueuedPurge& file : *queued) {
      if (file.found) {
        inos.push_back(file.ino);
        work.push_back(remove_file_objects(*data_, file.ino, file.record.layout(),
                                           file.record.size()));
      } else {
        purge_queue_.erase(file.ino);  // its PurgedFiles is in already: nothing to remove
      }
    }
    auto results = co_await gather(std::move(work));
    std::vector<uint64_t> purged;
    Status first_error = ok_status();
    for (size_t i = 0; i < inos.size(); ++i) {
      if (results[i]) {
        purged.push_back(inos[i]);
      } else if (first_error) {
        first_error = std::move(results[i]);
      }
    }
    if (!purged.empty()) {
      proto::MdsLogEntry entry;
      entry.mutable_purged_files()->mutable_inos()->Add(purged.begin(), purged.end());
      auto done = co_await committer_.submit(std::move(entry));
      if (!done) co_return unexpected(std::move(done).error());
      for (uint64_t ino : purged) purge_queue_.erase(ino);
    }
    if (!first_error) co_return first_error;
  }
  co_return ok_status();
}

}  // namespace dfs::mds
