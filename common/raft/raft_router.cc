#include "common/raft/raft_router.h"

#include <spdlog/spdlog.h>

#include "common/raft/raft_codec.h"
#include "common/rpc/methods.h"

namespace dfs::raft {

RaftRouter::RaftRouter(rpc::RpcServer& server) : table_(std::make_shared<Table>()) {
  server.handle(rpc::kRaftMessage,
                [table = table_](rpc::ConnectionPtr conn,
                                 rpc::Frame frame) -> awaitable<Result<rpc::Reply>> {
                  Result<Envelope> env = decode_envelope(frame.body);
                  if (!env) {
                    ++table->dropped;
                    spdlog::warn("dropping raft message from {}: {}", conn->peer_address(),
                                 env.error().to_string());
                    co_return env.error();
                  }
                  auto it = table->groups.find(env->group);
                  if (it == table->groups.end()) {
                    // A group not (or no longer) hosted here: peers retry on their own.
                    ++table->dropped;
                    co_return make_error(ErrorCode::kNotFound, "no raft group here");
                  }
                  it->second(std::move(env->message));
                  co_return rpc::Reply{};
                });
}

RaftRouter::~RaftRouter() { table_->groups.clear(); }

void RaftRouter::add(uint64_t group, Deliver deliver) {
  table_->groups[group] = std::move(deliver);
}

void RaftRouter::remove(uint64_t group) { table_->groups.erase(group); }

uint64_t RaftRouter::dropped() const { return table_->dropped; }

}  // namespace dfs::raft
