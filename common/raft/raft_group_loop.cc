// RaftGroupRuntime's Ready loop and ticker: feed queued inputs to the node, take a
// Ready, send its early messages, sync on the pool, send the rest, apply, advance;
// repeat while the node has work.
#include <spdlog/spdlog.h>

#include "common/raft/raft_group_runtime.h"

namespace dfs::raft {

void RaftGroupRuntime::kick() {
  if (running_ || stopped_ || failed_ || !started_) return;
  running_ = true;
  // Spawned (posted), not run inline: inputs arriving in the same turn join the batch.
  spawn_checked(executor_, run(shared_from_this()));
}

awaitable<void> RaftGroupRuntime::tick_loop(std::shared_ptr<RaftGroupRuntime> self) {
  while (!stopped_ && !failed_) {
    ticker_.expires_after(options_.tick_interval);
    co_await ticker_.async_wait(use_awaitable_tuple);
    if (stopped_) break;
    ++pending_ticks_;
    kick();
  }
}

awaitable<void> RaftGroupRuntime::run(std::shared_ptr<RaftGroupRuntime> self) {
  while (!stopped_ && !failed_) {
    feed();
    // A follower that waits for a whole image is served when nothing else is to do too.
    if (!node_.has_ready()) attach_image_if_wanted();
    if (!node_.has_ready()) break;
    Ready rd = node_.ready();
    // A leader's appends go out now and travel while its own fsync runs: a commit
    // waits for the slower of the two instead of both in turn. Queued here, they
    // leave once this coroutine yields to the sync.
    for (const Message& m : rd.early_messages) send(m);
    if (rd.must_sync) {
      // The node stays untouched until advance(): what arrives meanwhile is queued and
      // joins the next Ready, whose one sync covers it all (group commit).
      RaftLogStorage* storage = storage_.get();
      Status synced = co_await run_blocking(pool_, [storage] { return storage->sync(); });
      ++counters_.syncs;
      if (stopped_) break;
      if (!synced) {
        fail(synced.error());
        break;
      }
    }
    handle_ready(rd);
    node_.advance(rd);
    after_advance();
  }
  running_ = false;
  if (stopped_) idle_.set(true);
}

// Everything that arrived since the last round, in the order that keeps it safe:
// time and peers' messages first (they may depose us), then our own proposals.
void RaftGroupRuntime::feed() {
  for (; pending_ticks_ > 0; --pending_ticks_) {
    node_.tick();
    ++ticks_;
    tick_fed_at_.emplace_back(node_.ticks(), Clock::now());
    if (tick_fed_at_.size() > 64) tick_fed_at_.pop_front();
  }
  std::vector<Message> inbox = std::move(inbox_);
  inbox_.clear();
  for (const Message& m : inbox) node_.step(m);
  on_role_change();
  update_lease();
  submit_proposals();
  std::vector<Read> reads = std::move(queued_reads_);
  queued_reads_.clear();
  for (Read& r : reads) issue_read(std::move(r));
  expire_reads();
}

void RaftGroupRuntime::update_lease() {
  lease_until_ = Clock::time_point{};
  std::optional<uint64_t> start = node_.lease_start_tick();
  if (!start) return;
  for (const auto& [tick, fed_at] : tick_fed_at_) {
    if (tick == *start) {
      lease_until_ = fed_at + node_.lease_ticks() * options_.tick_interval;
      return;
    }
  }
}

void RaftGroupRuntime::handle_ready(Ready& rd) {
  for (const Message& m : rd.messages) send(m);
  if (rd.snapshot) {
    sm_.restore(rd.snapshot->meta.index, rd.snapshot->data);
    // Commands inside the image were applied elsewhere: their results are unknown here.
    while (!proposals_.empty() && proposals_.begin()->first <= rd.snapshot->meta.index) {
      proposals_.begin()->second.done->set(
          Error(ErrorCode::kUnavailable, "leadership lost: entry replaced by a snapshot"));
      proposals_.erase(proposals_.begin());
    }
  }
  apply(rd.committed_entries);
  for (const ReadState& rs : rd.read_states) on_read_state(rs);
}

void RaftGroupRuntime::apply(const std::vector<Entry>& entries) {
  for (const Entry& e : entries) {
    std::string result;
    if (e.type == EntryType::kNormal) result = sm_.apply(e.index, e.data);
    ++counters_.applied_entries;
    auto it = proposals_.find(e.index);
    if (it == proposals_.end()) continue;
    if (it->second.term == e.term) {
      it->second.done->set(Applied{e.index, std::move(result)});
    } else {
      it->second.done->set(
          Error(ErrorCode::kUnavailable, "leadership lost: entry overwritten by a new leader"));
    }
    proposals_.erase(it);
  }
}

bool RaftGroupRuntime::attach_image_if_wanted() {
  if (!node_.wants_image()) return false;
  // A follower needs compacted entries, and the log's image only points at the state:
  // one of the whole state as it is now (the storage writes it with the next sync).
  const Index applied = node_.applied_index();
  const auto started = Clock::now();
  std::string image = sm_.full_image(applied);
  const size_t bytes = image.size();
  Status st = node_.attach_image(applied, std::move(image));
  if (!st) {
    spdlog::warn("raft group {}: image for a follower: {}", options_.group_id,
                 st.error().to_string());
  } else {
    spdlog::info("raft group {}: a follower needs compacted entries: made an image of the "
                 "state at index {} ({} bytes) in {} ms", options_.group_id, applied, bytes,
                 std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started)
                     .count());
  }
  return true;
}

void RaftGroupRuntime::after_advance() {
  complete_reads();
  if (attach_image_if_wanted()) return;
  const Index applied = node_.applied_index();
  // A transfer in progress would start over with a newer image.
  if (options_.snapshot_every == 0 || node_.sending_snapshot()) return;
  // Only a pointer may stand for the state at an earlier index: the application's state
  // is past it, and skips the entries it comes again.
  const uint64_t keep = options_.raft.images_on_demand ? options_.snapshot_keep : 0;
  const Index snap = storage_->snapshot().meta.index;
  if (compaction_target_ && *compaction_target_ - keep <= snap) {
    compaction_target_.reset();  // a snapshot installed meanwhile is past it
  }
  if (!compaction_target_) {
    if (applied < snap + options_.snapshot_every + keep) return;
    compaction_target_ = applied;
  }
  // With images_on_demand the state machine makes the state at the target durable
  // without holding this thread (a store's flush takes tens of ms), and the compaction
  // follows at a later advance; a whole image is taken at once.
  const Index target = *compaction_target_;
  if (options_.raft.images_on_demand && !sm_.make_durable(target)) return;
  compaction_target_.reset();
  // The storage writes the image with the next Ready's sync.
  Status st = node_.compact(target - keep, sm_.snapshot(target));
  if (!st) {
    spdlog::warn("raft group {}: compaction: {}", options_.group_id, st.error().to_string());
  }
}

void RaftGroupRuntime::on_role_change() {
  if (node_.role() == last_role_ && node_.term() == last_term_) return;
  if (node_.role() == Role::kLeader && last_role_ != Role::kLeader) {
    spdlog::info("raft group {}: node {} is leader at term {}", options_.group_id,
                 options_.raft.id, node_.term());
  } else if (last_role_ == Role::kLeader && node_.role() != Role::kLeader) {
    spdlog::info("raft group {}: node {} lost leadership at term {}", options_.group_id,
                 options_.raft.id, node_.term());
  }
  last_role_ = node_.role();
  last_term_ = node_.term();
  fail_lost_proposals();
}

void RaftGroupRuntime::fail(const Error& error) {
  // A failed sync is fatal for the node: its log can no longer be trusted to be durable.
  spdlog::critical("raft group {}: node {} stops: {}", options_.group_id, options_.raft.id,
                   error.to_string());
  failed_ = error;
  ticker_.cancel();
  fail_all(error);
}

}  // namespace dfs::raft
