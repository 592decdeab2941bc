#include "mds/service/sessions.h"

#include <algorithm>

#include "mds/store/keys.h"

namespace dfs::mds {

Session& SessionTable::touch(const std::string& client, const rpc::ConnectionPtr& conn,
                             Clock::time_point now) {
  auto& s = sessions_[client];
  if (s.client.empty()) {
    s.client = client;
    s.id = next_id_++;
    s.last_renew = now;
  }
  if (conn) s.connection = conn;
  s.last_seen = now;
  return s;
}

void SessionTable::forget(const std::string& client, uint64_t seq) {
  auto it = sessions_.find(client);
  if (it != sessions_.end()) it->second.requests.erase(seq);
}

std::shared_ptr<DedupSlot> SessionTable::remember(Session& s, uint64_t seq,
                                                  asio::any_io_executor ex, bool& fresh) {
  auto it = s.requests.find(seq);
  if (it != s.requests.end()) {
    fresh = false;
    return it->second;
  }
  fresh = true;
  auto slot = std::make_shared<DedupSlot>(std::move(ex));
  s.requests.emplace(seq, slot);
  // Forget the oldest finished requests beyond the bound (a client resends only
  // requests it has not had an answer to, which are recent).
  for (auto old = s.requests.begin();
       s.requests.size() > max_remembered_ && old != s.requests.end();) {
    if (old->second->reply.ready()) {
      old = s.requests.erase(old);
    } else {
      ++old;
    }
  }
  return slot;
}

void SessionTable::add_open(Session& s, uint64_t ino) {
  ++s.opens[ino];
  ++open_counts_[ino];
}

bool SessionTable::release(Session& s, uint64_t ino) {
  auto it = s.opens.find(ino);
  if (it == s.opens.end()) return open_count(ino) == 0;
  if (--it->second == 0) s.opens.erase(it);
  auto total = open_counts_.find(ino);
  if (total != open_counts_.end() && --total->second == 0) {
    open_counts_.erase(total);
    return true;
  }
  return false;
}

uint32_t SessionTable::open_count(uint64_t ino) const {
  auto it = open_counts_.find(ino);
  return it == open_counts_.end() ? 0 : it->second;
}

uint32_t SessionTable::opens_by(const std::string& client, uint64_t ino) const {
  auto it = sessions_.find(client);
  if (it == sessions_.end()) return 0;
  auto opened = it->second.opens.find(ino);
  return opened == it->second.opens.end() ? 0 : opened->second;
}

bool SessionTable::opened_by_others(const std::string& client, uint64_t ino) const {
  return open_count(ino) > opens_by(client, ino);
}

std::vector<std::string> SessionTable::other_openers(const std::string& client,
                                                     uint64_t ino) const {
  std::vector<std::string> openers;
  if (open_count(ino) == 0) return openers;
  for (const auto& [other, s] : sessions_) {
    if (other != client && s.opens.count(ino) > 0) openers.push_back(other);
  }
  return openers;
}

void SessionTable::preload(const std::string& client, uint64_t seq, std::string reply_body,
                           asio::any_io_executor ex, Clock::time_point now) {
  auto& s = touch(client, nullptr, now);
  if (seq == kSessionRecordSeq) {
    s.recorded = true;
    return;
  }
  auto slot = std::make_shared<DedupSlot>(std::move(ex));
  slot->reply.set(rpc::Reply{std::move(reply_body), {}});
  s.requests[seq] = std::move(slot);
}

SessionTable::Expired SessionTable::expire(Clock::time_point now, Duration timeout) {
  Expired expired;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    auto& s = it->second;
    auto conn = s.connection.lock();
    if (conn && conn->is_open()) s.last_seen = now;
    if (now - s.last_seen < timeout || s.evicting) {
      ++it;
      continue;
    }
    drop_opens(s, expired.unused);
    expired.clients.push_back(it->first);
    expired.ids.push_back(s.id);
    it = sessions_.erase(it);
  }
  return expired;
}

SessionTable::Expired SessionTable::end(const std::string& client) {
  Expired ended;
  auto it = sessions_.find(client);
  if (it == sessions_.end()) return ended;
  drop_opens(it->second, ended.unused);
  ended.clients.push_back(client);
  ended.ids.push_back(it->second.id);
  sessions_.erase(it);
  return ended;
}

void SessionTable::drop_opens(const Session& s, std::vector<uint64_t>& unused) {
  for (const auto& [ino, count] : s.opens) {
    auto total = open_counts_.find(ino);
    if (total == open_counts_.end()) continue;
    total->second -= std::min(total->second, count);
    if (total->second == 0) {
      open_counts_.erase(total);
      unused.push_back(ino);
    }
  }
}

std::vector<std::string> SessionTable::overdue(Clock::time_point now, Duration timeout) const {
  std::vector<std::string> late;
  for (const auto& [client, s] : sessions_) {
    if (s.renewing && !s.evicting && now - s.last_renew >= timeout) late.push_back(client);
  }
  return late;
}

Session* SessionTable::find(const std::string& client) {
  auto it = sessions_.find(client);
  return it == sessions_.end() ? nullptr : &it->second;
}

}  // namespace dfs::mds
