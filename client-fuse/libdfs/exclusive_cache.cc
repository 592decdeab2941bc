// FileClient: exclusive caching and owned directories as rights the MDS grants and
// recalls (docs/capabilities.md, "Exclusive caching" and "Directory rights"). Every
// fast path asks alone(ino); exclusive_ is set only by the MDS's grant (a session reply
// or a pushed notice), owned directories only by their creation, and both are cleared
// the moment a recall arrives, before anything is pushed, so that nothing new is
// deferred or buffered under them while the old is flushed.
#include <spdlog/spdlog.h>

#include <utility>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/libdfs/file_state.h"
#include "common/rpc/methods.h"

namespace dfs::client {

void FileClient::on_mds_push(const rpc::Frame& frame) {
  if (frame.header.method == rpc::kMdsEvicted) {
    on_evicted_notice(frame);
    return;
  }
  auto notice = rpc::parse_body<proto::CacheRightsNotice>(frame.body);
  if (!notice) return;
  if (notice->dirs_size() > 0) {
    on_dirs_recalled({notice->dirs().begin(), notice->dirs().end()}, notice->seq(),
                     notice->reason());
    return;
  }
  on_cache_rights(notice->exclusive(), notice->seq(), notice->reason(), false);
}

void FileClient::on_dirs_recalled(const std::vector<Ino>& dirs, uint64_t seq,
                                  const std::string& reason) {
  // Applied whatever its seq: giving a directory up is always safe, and the MDS waits
  // for the answer (a resent recall of directories given up already is answered too).
  bool dropped = owned_.give_up(dirs);
  if (dropped) {
    for (Ino dir : dirs) dirs_.forget(dir);
    ++setattr_calls_;  // listings fetched ahead are stale
  }
  if (giving_up_) {
    acks_pending_.push_back(seq);
    invalidate_again_ |= dropped;
    return;
  }
  spawn_checked(executor(), give_up_rights(seq, reason, false, dropped));
}

void FileClient::on_cache_rights(bool exclusive, uint64_t seq, const std::string& reason,
                                 bool from_session_reply) {
  // A session reply answers our own open and is the MDS's word at that moment; a pushed
  // notice counts only if it is newer than what we applied (a late grant must not undo
  // a recall that overtook it).
  if (!from_session_reply && seq <= cache_seq_) return;
  cache_seq_ = std::max(cache_seq_, seq);
  if (exclusive) {
    if (stopping_ || !options_.exclusive || exclusive_) return;
    // During a give-up (the MDS may grant again as soon as it has the acknowledgement),
    // the grant is taken up once the give-up is over.
    grant_waiting_ = true;
    grant_reason_ = reason;
    take_grant_when_quiet();
    return;
  }
  grant_waiting_ = false;
  if (!exclusive_ && !giving_up_) {
    // Nothing to give up; a pushed recall of a right we never applied is still answered.
    if (!from_session_reply) spawn_checked(executor(), give_up_rights(seq, reason, false, false));
    return;
  }
  if (giving_up_) {
    // The running give-up answers it with a round of its own.
    invalidate_again_ |= exclusive_;
    exclusive_ = false;
    acks_pending_.push_back(seq);
    return;
  }
  exclusive_ = false;  // from here on nothing is deferred, buffered or answered locally
  spawn_checked(executor(), give_up_rights(seq, reason, true, true));
}

void FileClient::forget_exact_knowledge() {
  if (owned_.size() == 0) {
    known_.clear();
    dirs_.clear();
  } else {
    std::erase_if(known_, [this](const auto& kv) { return !owned_.covers(kv.first); });
    dirs_.retain_if([this](uint64_t dir) { return owned_.owns(dir); });
  }
  ++setattr_calls_;  // listings fetched ahead are stale
}

void FileClient::take_grant_when_quiet() {
  if (!grant_waiting_ || exclusive_ || giving_up_ || stopping_ || lease_lapsed_) return;
  for (const auto& [ino, st] : states_) {
    if (st->handles > 0 || st->has_unrecorded_writes()) return;  // asked again at its release
  }
  grant_waiting_ = false;
  forget_exact_knowledge();  // learned while shared
  if (on_exclusive_) on_exclusive_();
  exclusive_ = true;
  spdlog::info("exclusive caching granted by the MDS ({}): deferring, writing behind and "
               "caching as the only mount",
               grant_reason_);
}

awaitable<void> FileClient::give_up_rights(uint64_t seq, std::string reason, bool was_exclusive,
                                           bool dropped) {
  giving_up_ = true;
  acks_pending_ = {seq};
  invalidate_again_ = dropped;
  auto started = Clock::now();
  if (was_exclusive) {
    spdlog::info("exclusive caching recalled by the MDS ({}): pushing what was deferred",
                 reason);
  } else if (dropped) {
    spdlog::info("owned directories recalled by the MDS ({}): pushing what was deferred",
                 reason);
  }
  // Each round answers the recalls that had arrived when it began. A recall arriving
  // meanwhile may have stopped rights under which changes were deferred after the
  // round's pushes began: it gets a round of its own before it is acknowledged.
  while (!acks_pending_.empty()) {
    std::vector<uint64_t> answering = std::move(acks_pending_);
    acks_pending_.clear();
    // The kernel's dirty pages first: they come back through write() (synchronous
    // where the right went), and its cached names and attributes go.
    if (std::exchange(invalidate_again_, false) && kernel_invalidator_ && !stopping_) {
      co_await kernel_invalidator_();
    }
    // Deferred changes, write-behind, buffered file data and sizes.
    Status pushed = co_await sync_all();
    if (!pushed) {
      spdlog::warn("giving up caching rights: pushing failed: {} (reported at the next sync)",
                   pushed.error().to_string());
      if (!deferred_error_) deferred_error_ = pushed.error();
    }
    // An operation that checked the right before the recall and resumed since may have
    // deferred one more change: it goes too, before the acknowledgement.
    for (int round = 0; round < 3 && (!deferred_ops_.empty() || !attr_queue_.empty() ||
                                      mds_.deferred_pending());
         ++round) {
      (void)co_await sync_metadata();
    }
    forget_exact_knowledge();  // it may change under us from now on
    for (auto& [ino, st] : states_) {
      if (!alone(ino)) st->readahead.clear();
    }
    // Closed files kept lingering go now (their MDS opens included).
    std::vector<std::shared_ptr<FileState>> lingering;
    for (auto& [ino, st] : states_) {
      if (st->handles == 0 && !st->dirty() && !alone(ino)) lingering.push_back(st);
    }
    for (auto& st : lingering) co_await drop_state(st);
    proto::CacheAckRequest ack;
    for (uint64_t s : answering) ack.add_seqs(s);
    auto acked = co_await mds_.call<proto::CacheAckReply>(rpc::kMdsCacheAck, ack, Creds{}, false);
    if (!acked) {
      spdlog::warn("acknowledging a recall of caching rights: {}", acked.error().to_string());
    }
  }
  giving_up_ = false;
  if (was_exclusive) {
    spdlog::info("exclusive caching given up in {} ms; this mount now asks the MDS (shared) "
                 "outside the {} directories it owns",
                 std::chrono::duration_cast<Duration>(Clock::now() - started).count(),
                 owned_.size());
  } else if (dropped) {
    spdlog::info("owned directories given up in {} ms; {} still owned",
                 std::chrono::duration_cast<Duration>(Clock::now() - started).count(),
                 owned_.size());
  }
  take_grant_when_quiet();  // granted again meanwhile (the other mount left)
}

awaitable<void> FileClient::lease_watch_loop() {
  constexpr Duration kTick(200);
  // After this process was paused (SIGSTOP, a stalled host), its renewal goes out now
  // too: its answer (a longer lease, or the news of an eviction, which drops the right
  // its own way without pushing anything) is given this long before the lease counts
  // as lapsed. Acting at once would have the kernel write back dirty pages through a
  // session the MDS may have evicted meanwhile.
  constexpr Duration kAfterPause(1000);
  lease_timer_ = std::make_shared<asio::steady_timer>(executor());
  auto timer = lease_timer_;
  auto last_tick = Clock::now();
  auto patient_until = last_tick;
  while (!stopping_) {
    timer->expires_after(kTick);
    co_await timer->async_wait(use_awaitable_tuple);
    const auto now = Clock::now();
    if (now - last_tick > kTick + kAfterPause) patient_until = now + kAfterPause;
    last_tick = now;
    if (stopping_ || (!exclusive_ && owned_.size() == 0) || lease_lapsed_ || giving_up_ ||
        now < mds_.lease_expires() || now < patient_until) {
      continue;
    }
    lease_lapsed_ = true;  // owned directories are suspended until a renewal
    exclusive_ = false;  // nothing more is answered, deferred or buffered here alone
    forget_exact_knowledge();
    for (auto& [ino, st] : states_) st->readahead.clear();
    spdlog::warn("the MDS has not answered a renewal for most of the session timeout: this "
                 "mount stops caching and deferring until it does (what it deferred stays "
                 "queued)");
    if (kernel_invalidator_) spawn_checked(executor(), kernel_invalidator_());
  }
}

void FileClient::on_renewed(const proto::RenewReply& reply) {
  if (!lease_lapsed_) return;
  lease_lapsed_ = false;
  if (reply.dirs_recall() != 0 && owned_.size() > 0) {
    // A recall of owned directories is under way and has not reached this mount: they
    // all stay given up (the recall, resent until answered, is answered then).
    spdlog::info("the MDS answers again; the {} owned directories stay given up (a recall "
                 "is under way)",
                 owned_.size());
    owned_.clear();
  }
  // Anything newer than what this mount applied (a recall under way, a grant) comes as
  // a pushed notice, which is resent until answered.
  if (!reply.exclusive() || reply.cache_seq() != cache_seq_) {
    spdlog::info("the MDS answers again; exclusive caching stays given up (the MDS moved on)");
    return;
  }
  grant_waiting_ = true;
  grant_reason_ = "the lease renewed, the right unchanged";
  take_grant_when_quiet();
}

}  // namespace dfs::client
