#include "client-fuse/libdfs/cache_rights.h"

#include <algorithm>
#include <utility>

namespace dfs::client {

void CacheRights::KernelScope::add(KernelScope other) {
  files.insert(files.end(), other.files.begin(), other.files.end());
  everything = everything || other.everything;
  if (everything) {
    inos.clear();
    return;
  }
  inos.insert(inos.end(), other.inos.begin(), other.inos.end());
}

std::optional<CacheRights::GiveUp> CacheRights::exclusive_notice(bool exclusive, uint64_t seq,
                                                                 bool from_session_reply,
                                                                 std::string reason) {
  if (!from_session_reply && seq <= cache_seq_) return std::nullopt;
  cache_seq_ = std::max(cache_seq_, seq);
  ++generation_;
  if (exclusive) {
    if (stopped_ || !want_exclusive_ || exclusive_) return std::nullopt;
    grant_waiting_ = true;
    grant_reason_ = std::move(reason);
    return std::nullopt;
  }
  grant_waiting_ = false;
  if (from_session_reply && !exclusive_) {
    // The MDS's word that this session does not cache alone, which it knew: nothing to
    // answer. Its seq is the MDS's newest, and may be that of a recall of owned
    // directories still on its way here; acknowledging it would give them up unseen.
    return std::nullopt;
  }
  if (giving_up_) {
    // The running give-up answers it with a round of its own.
    if (exclusive_) invalidate_next_.add(KernelScope::all());
    push_next_ = push_next_ || exclusive_;
    exclusive_ = false;
    acks_pending_.push_back(seq);
    return std::nullopt;
  }
  if (!exclusive_ && !lapsed_exclusive_) {
    // Nothing to give up; a pushed recall of a right never applied is still answered.
    if (from_session_reply) return std::nullopt;
    return start_give_up(seq, GiveUp{}, {}, /*push=*/false);
  }
  // Held, or held when the lease lapsed (what was deferred under it is still queued).
  exclusive_ = false;  // from here on nothing is deferred, buffered or answered alone
  lapsed_exclusive_ = false;
  return start_give_up(seq, GiveUp{.was_exclusive = true, .dropped = true, .pushes = true},
                       KernelScope::all(), /*push=*/true);
}

CacheRights::DirsRecall CacheRights::dirs_recalled(const std::vector<uint64_t>& dirs,
                                                   uint64_t seq, bool changes_pending) {
  DirsRecall out;
  ++ownership_epoch_;
  ++generation_;
  KernelScope scope;
  std::vector<uint64_t> created;
  // Only when every inode it names is only shared here, and no change on its way names
  // one, does the give-up push nothing: one the MDS counts as this mount's and the
  // mount does not know as its own yet (a grant still settling) may have changes on
  // their way as well, and a directory owned after it was shared is both.
  const bool pushes =
      changes_pending || !std::all_of(dirs.begin(), dirs.end(), [this](uint64_t ino) {
        return owned_.shares(ino) && !owned_.covers(ino);
      });
  out.dropped = owned_.give_up(dirs, &created, &scope.files);
  if (out.dropped) {
    // The recalled inodes, and the files created in recalled directories (their names
    // there go with the directory's, so the kernel drops their inodes unless open).
    scope.inos = dirs;
    scope.inos.insert(scope.inos.end(), created.begin(), created.end());
  }
  if (giving_up_) {
    acks_pending_.push_back(seq);
    invalidate_next_.add(std::move(scope));
    push_next_ = push_next_ || pushes;
    return out;
  }
  out.start = start_give_up(
      seq, GiveUp{.was_exclusive = false, .dropped = out.dropped, .pushes = pushes},
      std::move(scope), pushes);
  return out;
}

bool CacheRights::own_claimed(uint64_t dir, uint64_t epoch_asked) {
  if (epoch_asked != ownership_epoch_) return false;
  owned_.own(dir);
  ++generation_;
  return true;
}

bool CacheRights::own_file_claimed(uint64_t file, uint64_t epoch_asked) {
  if (epoch_asked != ownership_epoch_) return false;
  owned_.own_file(file);
  ++generation_;
  return true;
}

bool CacheRights::share_claimed(uint64_t ino, uint64_t epoch_asked, bool regular) {
  if (epoch_asked != ownership_epoch_) return false;
  owned_.share(ino, regular);
  return true;
}

CacheRights::GiveUp CacheRights::start_give_up(uint64_t seq, GiveUp give_up,
                                               KernelScope scope, bool push) {
  giving_up_ = true;
  acks_pending_ = {seq};
  invalidate_next_ = std::move(scope);
  push_next_ = push;
  return give_up;
}

std::optional<CacheRights::Round> CacheRights::next_round() {
  if (acks_pending_.empty()) {
    giving_up_ = false;
    return std::nullopt;
  }
  return Round{std::exchange(acks_pending_, {}), std::exchange(invalidate_next_, {}),
               std::exchange(push_next_, false)};
}

bool CacheRights::take_grant(bool quiet) {
  if (!grant_waiting_ || exclusive_ || giving_up_ || stopped_ || lease_lapsed_ || !quiet) {
    return false;
  }
  grant_waiting_ = false;
  exclusive_ = true;
  ++generation_;
  return true;
}

bool CacheRights::lapse() {
  if (!holds_any() || lease_lapsed_ || giving_up_) return false;
  lease_lapsed_ = true;  // owned directories are suspended until a renewal
  ++generation_;
  lapsed_exclusive_ = exclusive_;
  exclusive_ = false;
  return true;
}

CacheRights::Renewal CacheRights::renewed(bool mds_says_exclusive, uint64_t mds_cache_seq,
                                          bool dirs_recall_pending) {
  Renewal out;
  if (!lease_lapsed_) return out;
  out.was_lapsed = true;
  lease_lapsed_ = false;
  ++generation_;
  if (dirs_recall_pending && owned_.size() > 0) {
    // The recall, resent until answered, has not reached this mount yet: which of them
    // it names is unknown here, so they all go (it is answered when it arrives).
    out.dirs_dropped = owned_.size();
    out.invalidate.files = owned_.files_cached();
    out.invalidate.inos = out.invalidate.files;
    for (uint64_t ino : owned_.shared()) out.invalidate.inos.push_back(ino);  // names too
    owned_.clear();
  }
  // Anything newer than what this mount applied (a recall, a grant) comes as a pushed
  // notice, resent until answered.
  if (!mds_says_exclusive || mds_cache_seq != cache_seq_ || !want_exclusive_ || stopped_) {
    out.exclusive_lost = std::exchange(lapsed_exclusive_, false);
    return out;
  }
  lapsed_exclusive_ = false;
  grant_waiting_ = true;
  grant_reason_ = "the lease renewed, the right unchanged";
  out.exclusive_back = true;
  return out;
}

std::optional<CacheRights::KernelScope> CacheRights::evicted() {
  std::optional<KernelScope> scope;
  if (holds_any()) {
    scope = KernelScope::all();
    scope->files = owned_.files_cached();
  }
  ++ownership_epoch_;
  ++generation_;
  exclusive_ = false;
  owned_.clear();
  grant_waiting_ = false;
  lease_lapsed_ = false;  // the new session's reply decides
  lapsed_exclusive_ = false;
  return scope;
}

}  // namespace dfs::client
