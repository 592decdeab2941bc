#include "mds/service/reconnect_phase.h"

namespace dfs::mds {

ReconnectPhase::ReconnectPhase(asio::any_io_executor executor) : ended_(std::move(executor)) {
  ended_.expires_at(asio::steady_timer::time_point::max());
}

void ReconnectPhase::begin(std::set<std::string> awaited, Clock::time_point deadline) {
  if (awaited.empty()) return;
  awaited_ = std::move(awaited);
  deadline_ = deadline;
  running_ = true;
}

void ReconnectPhase::reconnected(const std::string& client, bool reasserts_locks) {
  if (awaited_.erase(client) && reasserts_locks) locks_awaited_.insert(client);
}

void ReconnectPhase::locks_reasserted(const std::string& client) { locks_awaited_.erase(client); }

bool ReconnectPhase::due(Clock::time_point now) const {
  return running_ && ((awaited_.empty() && locks_awaited_.empty()) || now >= deadline_);
}

void ReconnectPhase::end() {
  running_ = false;
  awaited_.clear();
  locks_awaited_.clear();
  ended_.cancel();
}

awaitable<void> ReconnectPhase::wait() {
  while (running_) co_await ended_.async_wait(use_awaitable_tuple);
}

}  // namespace dfs::mds
