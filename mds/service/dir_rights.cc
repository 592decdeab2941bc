#include "mds/service/dir_rights.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace dfs::mds {
namespace {

constexpr Duration kRecallResend{1000};

}  // namespace

DirRights::DirRights(asio::any_io_executor executor, Duration recall_timeout,
                     size_t max_per_session, SendFn send, EvictFn evict, SeqFn next_seq,
                     NowFn now)
    : recall_timeout_(recall_timeout),
      max_per_session_(std::max<size_t>(max_per_session, 1)),
      send_(std::move(send)),
      evict_(std::move(evict)),
      next_seq_(std::move(next_seq)),
      now_(std::move(now)),
      changed_(std::move(executor)) {
  changed_.expires_at(asio::steady_timer::time_point::max());
}

bool DirRights::created(const std::string& client, uint64_t dir, Kind kind) {
  if (auto it = owners_.find(dir); it != owners_.end()) {
    // A resent create: still its own unless a recall of it is under way.
    used(client, dir);
    return it->second.owner == client && it->second.recall_seq == 0;
  }
  Holder& holder = holders_[client];
  holder.lru.push_back(dir);
  Owned owned;
  owned.in_lru = std::prev(holder.lru.end());
  owned.owner = client;
  owned.kind = kind;
  owners_.emplace(dir, std::move(owned));
  ++holder.owned;
  if (kind == Kind::kFile) ++holder.files;
  trim(client);
  return true;
}

void DirRights::used(const std::string& client, uint64_t dir) {
  Holding* held = holding(client, dir);
  if (!held || held->recall_seq != 0) return;
  auto& lru = holders_[client].lru;
  lru.splice(lru.end(), lru, held->in_lru);  // iterators stay valid
}

DirRights::Holding* DirRights::holding(const std::string& holder, uint64_t ino) {
  // An inode another session owns may still be shared by `holder` (a share granted
  // before the ownership): that share is what it holds.
  if (auto it = owners_.find(ino); it != owners_.end() && it->second.owner == holder) {
    return &it->second;
  }
  auto file = shares_.find(ino);
  if (file == shares_.end()) return nullptr;
  auto share = file->second.find(holder);
  return share == file->second.end() ? nullptr : &share->second;
}

void DirRights::trim(const std::string& owner) {
  auto& lru = holders_[owner].lru;
  if (lru.size() <= max_per_session_) return;
  // Down to 7/8 of the bound, so that a mount creating many directories is sent one
  // recall per eighth of the bound rather than one per directory.
  const size_t keep = std::max<size_t>(max_per_session_ - max_per_session_ / 8, 1);
  std::vector<uint64_t> oldest(lru.begin(), std::next(lru.begin(), lru.size() - keep));
  start_recall(owner, std::move(oldest),
               fmt::format("it holds more than {} directories, files and read shares: the least "
                           "recently used go back",
                           max_per_session_),
               /*contested=*/false);
}

bool DirRights::claimed_existing(const std::string& client, uint64_t dir, Kind kind) {
  if (auto it = owners_.find(dir); it != owners_.end()) {
    // Not while a recall of it is under way: the acknowledgement would take it from the
    // mount after this answer told it that it owns it.
    used(client, dir);
    return it->second.owner == client && it->second.recall_seq == 0;
  }
  if (auto it = recalled_at_.find(dir);
      it != recalled_at_.end() && now_() - it->second < kContested) {
    return false;
  }
  // Not while others keep the file's pages; the asker's own share becomes ownership.
  if (shared_by_others(client, dir)) return false;
  if (shares(client, dir)) {
    if (holding(client, dir)->recall_seq != 0) return false;
    drop_share(client, dir);
  }
  return created(client, dir, kind);
}

void DirRights::give_back(const std::string& client, uint64_t dir) {
  auto it = owners_.find(dir);
  if (it != owners_.end() && it->second.owner == client && it->second.recall_seq == 0) {
    disown(it);
  }
}

bool DirRights::contested(uint64_t dir) const {
  auto it = recalled_at_.find(dir);
  return it != recalled_at_.end() && now_() - it->second < kContested;
}

bool DirRights::recalled_within(uint64_t ino, Duration within) const {
  auto owned = recalled_at_.find(ino);
  auto shared = shares_recalled_at_.find(ino);
  return (owned != recalled_at_.end() && now_() - owned->second < within) ||
         (shared != shares_recalled_at_.end() && now_() - shared->second < within);
}

bool DirRights::owns(const std::string& client, uint64_t dir) const {
  auto it = owners_.find(dir);
  return it != owners_.end() && it->second.owner == client;
}

void DirRights::reasserted(const std::string& client, const std::vector<uint64_t>& dirs,
                           const std::vector<uint64_t>& files,
                           const std::vector<uint64_t>& read_files) {
  size_t taken = 0, files_taken = 0, shares_taken = 0;
  for (uint64_t dir : dirs) {
    // Not beside a share another session re-asserted first (a directory's names are
    // shared like a file's pages).
    if (owners_.count(dir) == 0 && shares_.count(dir) == 0 && created(client, dir)) ++taken;
  }
  for (uint64_t file : files) {
    if (owners_.count(file) == 0 && shares_.count(file) == 0 &&
        created(client, file, Kind::kFile)) {
      ++files_taken;
    }
  }
  for (uint64_t file : read_files) {
    if (!shares(client, file) && shared(client, file)) ++shares_taken;
  }
  if (taken + files_taken + shares_taken > 0) {
    spdlog::info("directory rights: {} re-asserted {} directories, {} files and {} read shares",
                 client, taken, files_taken, shares_taken);
  }
}

void DirRights::disown(std::unordered_map<uint64_t, Owned>::iterator it) {
  auto holder = holders_.find(it->second.owner);
  if (holder != holders_.end()) {
    if (it->second.recall_seq == 0) holder->second.lru.erase(it->second.in_lru);
    if (it->second.kind == Kind::kFile) --holder->second.files;
    --holder->second.owned;
    forget_if_empty(holder);
  }
  owners_.erase(it);
}

void DirRights::forget_if_empty(std::unordered_map<std::string, Holder>::iterator holder) {
  if (holder->second.owned == 0 && holder->second.shared == 0) holders_.erase(holder);
}

void DirRights::removed(uint64_t dir) {
  std::vector<std::string> readers;
  if (auto file = shares_.find(dir); file != shares_.end()) {
    for (const auto& [reader, share] : file->second) readers.push_back(reader);
  }
  for (const auto& reader : readers) drop_share(reader, dir);
  auto it = owners_.find(dir);
  const bool owned = it != owners_.end();
  if (owned) disown(it);
  if (owned || !readers.empty()) changed_.cancel();  // a claim waiting for it goes on
}

bool DirRights::shared(const std::string& client, uint64_t file) {
  if (owners_.count(file) > 0) return false;
  auto& readers = shares_[file];
  if (auto it = readers.find(client); it != readers.end()) {
    // Not while a recall of it is under way: its acknowledgement would end the share
    // after this answer told the mount that it holds it.
    used(client, file);
    return it->second.recall_seq == 0;
  }
  Holder& holder = holders_[client];
  holder.lru.push_back(file);
  Holding share;
  share.in_lru = std::prev(holder.lru.end());
  readers.emplace(client, share);
  ++holder.shared;
  trim(client);
  return true;
}

bool DirRights::shares(const std::string& client, uint64_t file) const {
  auto it = shares_.find(file);
  return it != shares_.end() && it->second.count(client) > 0;
}

bool DirRights::shared_by_others(const std::string& client, uint64_t file) const {
  auto it = shares_.find(file);
  if (it == shares_.end()) return false;
  return it->second.size() > it->second.count(client);
}

void DirRights::unshare(const std::string& client, uint64_t file) {
  if (!shares(client, file)) return;
  drop_share(client, file);
  changed_.cancel();  // a claim waiting for this share's recall goes on
}

void DirRights::drop_share(const std::string& reader, uint64_t file) {
  auto readers = shares_.find(file);
  auto share = readers->second.find(reader);
  auto holder = holders_.find(reader);
  if (holder != holders_.end()) {
    if (share->second.recall_seq == 0) holder->second.lru.erase(share->second.in_lru);
    --holder->second.shared;
    forget_if_empty(holder);
  }
  readers->second.erase(share);
  if (readers->second.empty()) shares_.erase(readers);
}

awaitable<void> DirRights::claim_shares(const std::string& client, std::vector<uint64_t> inos,
                                        std::string reason) {
  const uint64_t generation = generation_;
  for (;;) {
    std::map<std::string, std::vector<uint64_t>> to_recall;
    bool waiting = false;
    for (uint64_t ino : inos) {
      auto readers = shares_.find(ino);
      if (readers == shares_.end()) continue;
      for (const auto& [reader, share] : readers->second) {
        if (reader == client) continue;
        waiting = true;
        if (share.recall_seq == 0) to_recall[reader].push_back(ino);
      }
    }
    if (!waiting) co_return;
    for (auto& [reader, recalled] : to_recall) {
      for (uint64_t ino : recalled) shares_recalled_at_[ino] = now_();
      start_recall(reader, std::move(recalled), reason, /*contested=*/false);
    }
    co_await changed_.async_wait(use_awaitable_tuple);
    if (generation != generation_) co_return;
  }
}

bool DirRights::others_own_any(const std::string& client) const {
  // A handful of sessions; shares alone do not count (no touch recalls them).
  return std::any_of(holders_.begin(), holders_.end(), [&client](const auto& kv) {
    return kv.first != client && kv.second.owned > 0;
  });
}

bool DirRights::conflicts(const std::string& client, const std::vector<uint64_t>& inos) const {
  for (uint64_t ino : inos) {
    auto it = owners_.find(ino);
    if (it != owners_.end() && it->second.owner != client) return true;
  }
  return false;
}

awaitable<void> DirRights::claim(const std::string& client, std::vector<uint64_t> inos,
                                 std::string reason) {
  const uint64_t generation = generation_;
  for (;;) {
    std::map<std::string, std::vector<uint64_t>> to_recall;
    bool waiting = false;
    for (uint64_t ino : inos) {
      auto it = owners_.find(ino);
      if (it == owners_.end() || it->second.owner == client) continue;
      waiting = true;
      if (it->second.recall_seq == 0) {
        to_recall[it->second.owner].push_back(ino);  // a name twice: start_recall takes it once
      } else {
        recalled_at_[ino] = now_();  // under a recall for the bound: contested all the same
      }
    }
    if (!waiting) co_return;
    for (auto& [owner, dirs] : to_recall) start_recall(owner, std::move(dirs), reason);
    co_await changed_.async_wait(use_awaitable_tuple);
    if (generation != generation_) co_return;
  }
}

void DirRights::start_recall(const std::string& owner, std::vector<uint64_t> dirs,
                             std::string reason, bool contested) {
  Recall recall;
  recall.seq = next_seq_();
  recall.started = now_();
  auto& lru = holders_[owner].lru;
  for (uint64_t dir : dirs) {
    Holding& held = *holding(owner, dir);
    if (held.recall_seq != 0) continue;  // named twice, or under a recall already
    lru.erase(held.in_lru);  // on its way out: no longer among what the bound counts
    held.recall_seq = recall.seq;
    if (contested) recalled_at_[dir] = recall.started;
    recall.dirs.push_back(dir);
  }
  if (recall.dirs.empty()) return;
  recall.reason = std::move(reason);
  std::string which;
  for (size_t i = 0; i < recall.dirs.size() && i < 8; ++i) {
    which += fmt::format("{}{:#x}", i ? ", " : "", recall.dirs[i]);
  }
  if (recall.dirs.size() > 8) which += ", ...";
  spdlog::info("directory rights: recalling {} owned or shared inode{} ({}) from {} ({})",
               recall.dirs.size(), recall.dirs.size() == 1 ? "" : "s", which, owner,
               recall.reason);
  auto& list = recalls_[owner];
  list.push_back(std::move(recall));
  send(owner, list.back());
}

void DirRights::send(const std::string& owner, Recall& recall) {
  proto::CacheRightsNotice notice;
  notice.set_exclusive(false);
  notice.set_seq(recall.seq);
  notice.set_reason(recall.reason);
  for (uint64_t dir : recall.dirs) notice.add_dirs(dir);
  recall.last_sent = now_();
  if (!send_(owner, notice)) {
    spdlog::debug("directory rights: {} has no connection for the recall; resending", owner);
  }
}

void DirRights::acknowledged(const std::string& client, uint64_t seq) {
  auto list = recalls_.find(client);
  if (list == recalls_.end()) return;
  auto& recalls = list->second;
  auto it = std::find_if(recalls.begin(), recalls.end(),
                         [seq](const Recall& r) { return r.seq == seq; });
  if (it == recalls.end()) return;  // an older or stray ack
  for (uint64_t dir : it->dirs) {
    auto owned = owners_.find(dir);
    if (owned != owners_.end() && owned->second.owner == client &&
        owned->second.recall_seq == seq) {
      disown(owned);
    } else if (const Holding* share = holding(client, dir); share && share->recall_seq == seq) {
      drop_share(client, dir);
    }
  }
  auto took = std::chrono::duration_cast<Duration>(now_() - it->started);
  spdlog::info("directory rights: {} gave up {} inode{} after {} ms", client, it->dirs.size(),
               it->dirs.size() == 1 ? "" : "s", took.count());
  recalls.erase(it);
  if (recalls.empty()) recalls_.erase(list);
  changed_.cancel();
}

void DirRights::ended(const std::string& client) {
  recalls_.erase(client);
  if (holders_.erase(client) == 0) return;
  for (auto it = owners_.begin(); it != owners_.end();) {
    it = it->second.owner == client ? owners_.erase(it) : std::next(it);
  }
  for (auto it = shares_.begin(); it != shares_.end();) {
    it->second.erase(client);
    it = it->second.empty() ? shares_.erase(it) : std::next(it);
  }
  changed_.cancel();
}

void DirRights::tick(Clock::time_point now) {
  std::vector<std::pair<std::string, std::string>> evictions;  // after the loop: they end sessions
  for (auto& [owner, recalls] : recalls_) {
    for (auto& recall : recalls) {
      if (now - recall.started >= recall_timeout_) {
        if (!recall.evicting) {
          recall.evicting = true;
          auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - recall.started);
          evictions.emplace_back(owner, "did not give up directories or files within " +
                                            std::to_string(waited.count()) +
                                            " s of their recall (" + recall.reason + ")");
        }
      } else if (now - recall.last_sent >= kRecallResend) {
        send(owner, recall);
      }
    }
  }
  for (auto& [owner, reason] : evictions) evict_(owner, reason);
  std::erase_if(recalled_at_, [now](const auto& kv) { return now - kv.second >= kContested; });
  std::erase_if(shares_recalled_at_,
                [now](const auto& kv) { return now - kv.second >= kShareHoldOff; });
}

void DirRights::clear() {
  owners_.clear();
  shares_.clear();
  holders_.clear();
  recalls_.clear();
  recalled_at_.clear();
  shares_recalled_at_.clear();
  ++generation_;
  changed_.cancel();
}

size_t DirRights::owned_by(const std::string& client) const {
  auto it = holders_.find(client);
  return it == holders_.end() ? 0 : it->second.owned;
}

size_t DirRights::files_owned_by(const std::string& client) const {
  auto it = holders_.find(client);
  return it == holders_.end() ? 0 : it->second.files;
}

size_t DirRights::shared_by(const std::string& client) const {
  auto it = holders_.find(client);
  return it == holders_.end() ? 0 : it->second.shared;
}

size_t DirRights::kept_by(const std::string& client) const {
  auto it = holders_.find(client);
  return it == holders_.end() ? 0 : it->second.lru.size();
}

std::optional<Clock::time_point> DirRights::recall_due(const std::string& client) const {
  auto it = recalls_.find(client);
  if (it == recalls_.end() || it->second.empty()) return std::nullopt;
  return it->second.front().started + recall_timeout_;  // oldest first
}

uint64_t DirRights::pending_recall(const std::string& client) const {
  auto it = recalls_.find(client);
  return it == recalls_.end() || it->second.empty() ? 0 : it->second.back().seq;
}

}  // namespace dfs::mds
