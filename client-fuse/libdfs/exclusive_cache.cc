// FileClient: exclusive caching and owned directories as rights the MDS grants and
// recalls (docs/capabilities.md, "Exclusive caching" and "Directory rights"). What is
// held and the rules of giving it back are CacheRights's; this file does what its
// answers ask: push what was deferred and buffered, have the kernel drop its caches,
// acknowledge, and watch the lease.
#include <spdlog/spdlog.h>

#include <algorithm>
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
  // A give-up that pushes nothing acknowledges ahead of the changes on their way
  // (acknowledge()): those naming a recalled inode must go first.
  const bool changes_pending = std::any_of(dirs.begin(), dirs.end(), [this](Ino ino) {
    return touched_.touched(ino) || known_.attrs_pending(ino);
  });
  CacheRights::DirsRecall recall = rights_.dirs_recalled(dirs, seq, changes_pending);
  if (recall.dropped) {
    for (Ino dir : dirs) dirs_.forget(dir);
    ++setattr_calls_;  // listings kept for reuse are stale
    walk_.forget_listings();
  }
  if (recall.start) spawn_checked(executor(), give_up_rights(*recall.start, reason));
}

void FileClient::on_cache_rights(bool exclusive, uint64_t seq, const std::string& reason,
                                 bool from_session_reply) {
  auto give_up = rights_.exclusive_notice(exclusive, seq, from_session_reply, reason);
  if (give_up) spawn_checked(executor(), give_up_rights(*give_up, reason));
  take_grant_when_quiet();  // a grant is taken up now if nothing stops it
}

bool FileClient::asks_to_own(Ino parent) const {
  return options_.exclusive && !stopping_ && !rights_.lease_lapsed() && !alone(parent);
}

void FileClient::owned_granted(Ino ino, Granted what, uint64_t epoch) {
  // No answer from before the grant can still arrive: owned at once.
  if (mds_.calls_running() == 0) {
    take_owned(ino, what, epoch);
    return;
  }
  spawn_checked(executor(), settle_owned(ino, what, epoch, mds_.answers_mark()));
}

awaitable<void> FileClient::settle_owned(Ino ino, Granted what, uint64_t epoch, uint64_t mark) {
  co_await mds_.answers_settled(mark);
  if (!stopping_) take_owned(ino, what, epoch);
}

void FileClient::take_owned(Ino ino, Granted what, uint64_t epoch) {
  bool dir = what == Granted::kDirectory;
  if (!(dir ? rights_.own_claimed(ino, epoch) : rights_.own_file_claimed(ino, epoch))) return;
  spdlog::debug("{} {:#x} is owned by this mount from now on ({} owned)",
                dir ? "directory" : "file", ino, rights_.owned().size());
}

void FileClient::forget_exact_knowledge() {
  const OwnedDirs& owned = rights_.owned();
  if (owned.size() == 0) {
    known_.clear();
    dirs_.clear();
  } else {
    known_.retain_if([&owned](Ino ino) { return owned.covers(ino); });
    dirs_.retain_if([&owned](uint64_t dir) { return owned.owns(dir); });
  }
  ++setattr_calls_;  // listings kept for reuse are stale
  walk_.forget_listings();
}

void FileClient::take_grant_when_quiet() {
  if (!rights_.grant_waiting()) return;
  bool quiet = !files_.any_state([](const FileState& st) {
    return st.handles > 0 || st.has_unrecorded_writes();
  });  // if not, asked again at the last release
  if (!rights_.take_grant(quiet)) return;
  forget_exact_knowledge();  // learned while shared
  if (on_exclusive_) on_exclusive_();
  spdlog::info("exclusive caching granted by the MDS ({}): deferring, writing behind and "
               "caching as the only mount",
               rights_.grant_reason());
}

awaitable<void> FileClient::give_up_rights(CacheRights::GiveUp give_up, std::string reason) {
  auto started = Clock::now();
  if (give_up.was_exclusive) {
    spdlog::info("exclusive caching recalled by the MDS ({}): pushing what was deferred",
                 reason);
  } else if (give_up.dropped && rights_.exclusive()) {
    spdlog::info("owned directories or files recalled by the MDS ({}): exclusive caching "
                 "covers them still, nothing to push",
                 reason);
  } else if (give_up.dropped && give_up.pushes) {
    spdlog::info("owned directories or files recalled by the MDS ({}): pushing what was deferred",
                 reason);
  } else if (give_up.dropped) {
    spdlog::debug("read shares recalled by the MDS ({})", reason);
  }
  // Each round answers the recalls that had arrived when it began. A recall arriving
  // meanwhile may have stopped rights under which changes were deferred after the
  // round's pushes began: it gets a round of its own before it is acknowledged.
  while (auto round = rights_.next_round()) {
    // Still holding exclusive caching, the mount is alone on everything: directories
    // recalled for the MDS's bound take nothing from it, and are acknowledged at once.
    // (A recall of exclusive caching stops it before its round begins.)
    if (rights_.exclusive()) {
      co_await acknowledge(round->answering, /*behind_changes=*/false);
      continue;
    }
    // The kernel's dirty pages first: they come back through write() (synchronous
    // where the right went), and its cached names and attributes go: all of them for
    // exclusive caching, those of the recalled directories and their files otherwise.
    if (!round->invalidate.empty() && kernel_invalidator_ && !stopping_) {
      if (round->push) {
        co_await kernel_invalidator_(std::move(round->invalidate));
      } else {
        co_await invalidate_shared(std::move(round->invalidate));
      }
    }
    // Deferred changes, write-behind, buffered file data and sizes (nothing was
    // deferred or buffered under shares alone).
    if (round->push) {
      Status pushed = co_await push_all();
      if (!pushed) {
        // What failed is reported by the fsync of the files concerned (a failed
        // writeback or deferred change), and by the unmount.
        spdlog::warn("giving up caching rights: pushing failed: {} (reported at the next sync)",
                     pushed.error().to_string());
        deferred_errors_.note(pushed.error(), {});
      }
      // An operation that checked the right before the recall and resumed since may
      // have deferred one more change: it goes too, before the acknowledgement.
      for (int i = 0; i < 3 && (known_.attrs_queued() || mds_.deferred_queue().pending());
           ++i) {
        (void)co_await sync_metadata();
      }
    }
    forget_exact_knowledge();  // it may change under us from now on
    for (auto& [ino, st] : files_.states()) {
      if (alone(ino)) continue;
      st->others_may_write();
    }
    // Closed files kept lingering go now (their MDS opens included), so that the mount
    // that asked may be given them. A round that pushed nothing releases them after
    // its acknowledgement instead, without waiting: a release outside owned
    // directories is a call of its own, which waits for this mount's batches in flight.
    auto lingering = files_.states_where([this](const FileState& st) {
      return st.handles == 0 && !st.dirty() && !alone(st.ino);
    });
    if (round->push) {
      for (auto& st : lingering) co_await drop_state(st);
      co_await acknowledge(round->answering, /*behind_changes=*/true);
    } else {
      co_await acknowledge(round->answering, /*behind_changes=*/false);
      for (auto& st : lingering) drop_soon(st);
    }
  }
  const auto took_ms = std::chrono::duration_cast<Duration>(Clock::now() - started).count();
  if (give_up.was_exclusive) {
    spdlog::info("exclusive caching given up in {} ms; this mount now asks the MDS (shared) "
                 "outside the {} directories it owns",
                 took_ms, rights_.owned().size());
  } else if (give_up.dropped && give_up.pushes) {
    spdlog::info("owned directories or files given up in {} ms; {} still owned", took_ms,
                 rights_.owned().size());
  }
  take_grant_when_quiet();  // granted again meanwhile (the other mount left)
}

awaitable<void> FileClient::invalidate_shared(CacheRights::KernelScope scope) {
  auto done = std::make_shared<AsyncEvent>();
  spawn_checked(executor(), [](FileClient* self, CacheRights::KernelScope scope,
                               std::shared_ptr<AsyncEvent> done) -> awaitable<void> {
    co_await self->kernel_invalidator_(std::move(scope));
    done->set();
  }(this, std::move(scope), done));
  asio::steady_timer patience(executor(), kSharedInvalidationPatience);
  for (;;) {
    if (done->is_set()) co_return;
    if (patience.expiry() <= asio::steady_timer::clock_type::now()) break;
    asio::steady_timer tick(executor(), Duration(5));
    co_await tick.async_wait(use_awaitable_tuple);
  }
  spdlog::info("a recall of read shares is acknowledged before the kernel dropped what it "
               "kept: a request of this mount holds the directory (it ends once that one is "
               "answered)");
}

awaitable<void> FileClient::acknowledge(const std::vector<uint64_t>& seqs, bool behind_changes) {
  proto::CacheAckRequest ack;
  for (uint64_t s : seqs) ack.add_seqs(s);
  // A round that pushed nothing answers alone, ahead of this mount's deferred changes
  // queued or in flight: none of them was made under what it gives up. Behind a batch
  // of them the acknowledgement could wait forever: a batch waits at the MDS for
  // another mount's recall, and that mount's give-up may wait for a change of its own
  // that waits for this very acknowledgement.
  Result<proto::CacheAckReply> acked;
  if (behind_changes) {
    acked = co_await mds_.call<proto::CacheAckReply>(rpc::kMdsCacheAck, ack, Creds{}, false);
  } else {
    acked = co_await mds_.call_alone<proto::CacheAckReply>(rpc::kMdsCacheAck, ack, Creds{}, false);
  }
  if (!acked) {
    spdlog::warn("acknowledging a recall of caching rights: {}", acked.error().to_string());
  }
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
    if (stopping_ || now < mds_.lease_expires() || now < patient_until) continue;
    if (!rights_.lapse()) continue;  // nothing held, or lapsed or being given up already
    forget_exact_knowledge();
    for (auto& [ino, st] : files_.states()) st->readahead.clear();
    spdlog::warn("the MDS has not answered a renewal for most of the session timeout: this "
                 "mount stops caching and deferring until it does (what it deferred stays "
                 "queued)");
    if (kernel_invalidator_) {
      spawn_checked(executor(), kernel_invalidator_(CacheRights::KernelScope::all()));
    }
  }
}

void FileClient::on_renewed(const proto::RenewReply& reply) {
  CacheRights::Renewal renewal =
      rights_.renewed(reply.exclusive(), reply.cache_seq(), reply.dirs_recall() != 0);
  if (!renewal.was_lapsed) return;
  if (renewal.dirs_dropped > 0) {
    spdlog::info("the MDS answers again; the {} owned directories and files stay given up "
                 "(a recall is under way)",
                 renewal.dirs_dropped);
  }
  if (!renewal.invalidate.empty() && kernel_invalidator_ && !stopping_) {
    // The lapse had the kernel drop what it could; the files' sizes it trusts go too.
    spawn_checked(executor(), kernel_invalidator_(std::move(renewal.invalidate)));
  }
  if (renewal.exclusive_lost) {
    spdlog::info("the MDS answers again; exclusive caching stays given up (the MDS moved on)");
  }
  take_grant_when_quiet();
}

}  // namespace dfs::client
