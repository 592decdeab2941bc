#include "tools/dfs/quorum_status.h"

#include <algorithm>

#include "common/rpc/methods.h"

namespace dfs::cli {

awaitable<QuorumView> gather_quorum(client::ObjectClient& client, proto::StatusReply first,
                                    Duration timeout) {
  QuorumView view;
  std::vector<proto::MonMember> members(first.members().begin(), first.members().end());
  if (members.empty()) {
    proto::MonMember only;
    only.set_name(first.mon_entity());
    members.push_back(only);
  }
  for (const auto& m : members) {
    MonRow row;
    row.name = m.name();
    row.addr = m.addr();
    row.id = m.id();
    proto::StatusReply status;
    if (m.addr().empty()) {
      status = first;
      row.reachable = true;
    } else {
      auto frame = co_await client.messenger().call(m.addr(), rpc::kMonStatus, {}, {}, timeout);
      auto parsed = frame ? rpc::parse_body<proto::StatusReply>(frame->body)
                          : Result<proto::StatusReply>(std::move(frame).error());
      if (parsed) {
        status = std::move(*parsed);
        row.reachable = true;
      } else {
        row.error = parsed.error().to_string();
      }
    }
    if (row.reachable) {
      row.raft = status.raft();
      row.epoch = status.map().epoch();
      if (row.raft.role() == "leader" && row.raft.term() >= view.term) {
        view.term = row.raft.term();
        view.leader = row.name;
        view.leader_id = row.raft.id();
      }
    }
    view.mons.push_back(std::move(row));
  }
  uint64_t commit = 0;
  for (const auto& row : view.mons) {
    if (row.reachable && row.raft.id() == view.leader_id) commit = row.raft.commit();
  }
  for (auto& row : view.mons) {
    if (!row.reachable) continue;
    row.lag = commit > row.raft.applied() ? commit - row.raft.applied() : 0;
    if (!view.leader.empty() && row.raft.term() == view.term &&
        row.raft.leader() == view.leader_id) {
      ++view.in_quorum;
    }
  }
  co_return view;
}

}  // namespace dfs::cli
