#include "mds/service/exclusive_cache.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace dfs::mds {
namespace {

constexpr Duration kRecallResend{1000};

}  // namespace

ExclusiveCache::ExclusiveCache(asio::any_io_executor executor, Duration recall_timeout,
                               SendFn send, EvictFn evict, NowFn now, WallMsFn wall_ms)
    : recall_timeout_(recall_timeout),
      send_(std::move(send)),
      evict_(std::move(evict)),
      now_(std::move(now)),
      wall_ms_(std::move(wall_ms)),
      seq_(seq_base()),
      changed_(std::move(executor)) {
  changed_.expires_at(asio::steady_timer::time_point::max());
}

void ExclusiveCache::wake_waiters() { changed_.cancel(); }

awaitable<ExclusiveCache::Answer> ExclusiveCache::open(const std::string& client, bool wants,
                                                       bool claims) {
  auto now = now_();
  if (!wants) {
    // A mount that never caches (cache=shared) reads and changes what a holder caches
    // and defers just as much: it recalls the right too, and keeps it from being granted
    // while it is there. A holder that re-opens as shared cannot keep the right.
    wanting_.erase(client);
    sharing_.insert(client);
    if (holder_ && holder_ != client) {
      co_await recall_for(client, client + " opened a session (it does not cache)");
    }
    co_return Answer{false, seq_};
  }
  wanting_.insert(client);
  sharing_.erase(client);
  if (holder_ == client) {
    // A reconnect of the holder. Mid-recall it is told to give the right up.
    co_return Answer{!recall_, recall_ ? recall_->seq : seq_};
  }
  if (!holder_ && claims && now < grace_until_) {
    holder_ = client;
    spdlog::info("exclusive caching: {} re-asserted it after the takeover", client);
    if (alone()) co_return Answer{true, next_seq()};
    // Other mounts opened their sessions first and work shared already: what the
    // claimant deferred must reach the MDS now, not when one of them opens again.
    start_recall("other mounts are active after the takeover", now);
    co_return Answer{false, recall_->seq};
  }
  if (holder_) {
    if (!co_await recall_for(client, client + " opened a session")) co_return Answer{false, seq_};
    now = now_();
  }
  if (!holder_ && now >= grace_until_ && alone()) {
    holder_ = client;
    co_return Answer{true, next_seq()};
  }
  co_return Answer{holder_ == client, seq_};
}

awaitable<bool> ExclusiveCache::recall_for(const std::string& client, const std::string& reason) {
  if (!recall_) start_recall(reason, now_());
  const uint64_t generation = generation_;
  while (holder_ && holder_ != client && generation == generation_) {
    co_await changed_.async_wait(use_awaitable_tuple);
  }
  co_return generation == generation_;
}

void ExclusiveCache::start_recall(const std::string& reason, Clock::time_point now) {
  recall_ = Recall{next_seq(), now, now, reason};
  spdlog::info("exclusive caching: recalling it from {} ({})", *holder_, reason);
  send_recall();
}

void ExclusiveCache::send_recall() {
  proto::CacheRightsNotice notice;
  notice.set_exclusive(false);
  notice.set_seq(recall_->seq);
  notice.set_reason(recall_->reason);
  recall_->last_sent = now_();
  if (!send_(*holder_, notice)) {
    spdlog::debug("exclusive caching: {} has no connection for the recall; resending", *holder_);
  }
}

void ExclusiveCache::acknowledged(const std::string& client, uint64_t seq) {
  if (holder_ != client || !recall_ || recall_->seq != seq) return;  // an older or stray ack
  auto took = std::chrono::duration_cast<Duration>(now_() - recall_->started);
  spdlog::info("exclusive caching: {} gave it up after {} ms", client, took.count());
  holder_.reset();
  recall_.reset();
  evicting_holder_ = false;
  wake_waiters();
}

void ExclusiveCache::ended(const std::string& client) {
  wanting_.erase(client);
  sharing_.erase(client);
  if (holder_ == client) {
    holder_.reset();
    recall_.reset();
    evicting_holder_ = false;
    wake_waiters();
  }
  grant_if_alone(now_());
}

void ExclusiveCache::grant_if_alone(Clock::time_point now) {
  if (holder_ || now < grace_until_ || !alone()) return;
  holder_ = *wanting_.begin();
  proto::CacheRightsNotice notice;
  notice.set_exclusive(true);
  notice.set_seq(next_seq());
  notice.set_reason("the only mount now");
  if (send_(*holder_, notice)) {
    spdlog::info("exclusive caching: granted to {}, the only mount now", *holder_);
  } else {
    // It learns at its next session open; until then it caches nothing, which is safe.
    spdlog::info("exclusive caching: granted to {} (not connected: told when it reconnects)",
                 *holder_);
  }
}

void ExclusiveCache::tick(Clock::time_point now) {
  if (recall_ && holder_) {
    if (now - recall_->started >= recall_timeout_) {
      if (!evicting_holder_) {
        evicting_holder_ = true;
        auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - recall_->started);
        evict_(*holder_, "did not give up exclusive caching within " +
                             std::to_string(waited.count()) + " s of its recall (" +
                             recall_->reason + ")");
      }
    } else if (now - recall_->last_sent >= kRecallResend) {
      send_recall();
    }
    return;
  }
  grant_if_alone(now);
}

void ExclusiveCache::begin_grace(Clock::time_point now, Duration grace) {
  grace_until_ = now + grace;
  seq_ = std::max(seq_, seq_base());
}

void ExclusiveCache::end_grace(Clock::time_point now) {
  grace_until_ = std::min(grace_until_, now);
  if (!recall_) grant_if_alone(now);
}

bool ExclusiveCache::held_by_other_than(const std::string& client) const {
  return holder_ && *holder_ != client && (wanting_.count(client) || sharing_.count(client));
}

awaitable<void> ExclusiveCache::given_up_for(const std::string& client) {
  const uint64_t generation = generation_;
  while (held_by_other_than(client) && generation == generation_) {
    co_await changed_.async_wait(use_awaitable_tuple);
  }
}

void ExclusiveCache::clear() {
  wanting_.clear();
  sharing_.clear();
  holder_.reset();
  recall_.reset();
  evicting_holder_ = false;
  ++generation_;
  wake_waiters();
}

}  // namespace dfs::mds
