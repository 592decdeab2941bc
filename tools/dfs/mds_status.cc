#include "tools/dfs/mds_status.h"

#include <map>

#include "common/rpc/methods.h"

namespace dfs::cli {

awaitable<std::vector<MdsRow>> gather_mds(client::ObjectClient& client, const ClusterMap& map,
                                         Duration timeout) {
  std::vector<MdsRow> rows;
  std::map<uint32_t, uint64_t> leader_commit;  // per rank
  for (const auto& m : map.proto().mds()) {
    MdsRow row;
    row.name = m.name();
    row.addr = m.addr();
    row.rank = m.rank();
    row.up = m.up();
    row.active = map.mds_for_rank(m.rank()) == &m;
    row.leader_term = m.leader_term();
    auto frame = co_await client.messenger().call(m.addr(), rpc::kMdsRaftStatus, {}, {}, timeout);
    auto parsed = frame ? rpc::parse_body<proto::MonRaftStatus>(frame->body)
                        : Result<proto::MonRaftStatus>(std::move(frame).error());
    if (parsed) {
      row.replicated = true;
      row.raft = std::move(*parsed);
      if (row.raft.role() == "leader") leader_commit[row.rank] = row.raft.commit();
    } else if (parsed.error().code() != ErrorCode::kUnknownMethod) {
      row.error = parsed.error().to_string();
    }
    rows.push_back(std::move(row));
  }
  for (auto& row : rows) {
    uint64_t commit = leader_commit[row.rank];
    if (row.replicated && commit > row.raft.applied()) row.lag = commit - row.raft.applied();
  }
  co_return rows;
}

}  // namespace dfs::cli
