#include "tests/unit/raft/raft_group_fixture.h"

#include <sstream>

namespace dfs::raft::testing {

std::string KvStateMachine::apply(Index index, std::string_view command) {
  REQUIRE(index > applied);
  applied = index;
  size_t eq = command.find('=');
  std::string key(command.substr(0, eq));
  std::string value(eq == std::string_view::npos ? "" : command.substr(eq + 1));
  std::string previous = kv.count(key) ? kv[key] : "";
  kv[key] = value;
  return previous;
}

std::string KvStateMachine::snapshot(Index /*applied*/) {
  std::string out;
  for (const auto& [k, v] : kv) out += k + "=" + v + "\n";
  return out;
}

void KvStateMachine::restore(Index index, std::string_view image) {
  kv.clear();
  std::istringstream in{std::string(image)};
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  applied = index;
  max_restored = std::max(max_restored, index);
}

TestNode::TestNode(NodeId id, std::string dir, std::string address)
    : id_(id), dir_(std::move(dir)) {
  rpc::ConnectionOptions conn{"raft." + std::to_string(id), rpc::make_none_authenticator()};
  pool_ = std::make_unique<asio::thread_pool>(1);
  server_ = std::make_unique<rpc::RpcServer>(io_.get_executor(), conn);
  router_ = std::make_unique<RaftRouter>(*server_);
  messenger_ = std::make_unique<rpc::Messenger>(io_.get_executor(), rpc::MessengerOptions{conn});
  auto bound = server_->listen(address);
  REQUIRE_MESSAGE(bound.has_value(), bound.error().to_string());
  address_ = *bound;
}

void TestNode::start(std::map<NodeId, std::string> peers, RaftGroupOptions options,
                     ConfState initial) {
  db_ = open_db(dir_);
  auto storage = RocksStorage::open(db_.get(), "raft/0000000000000001/", std::move(initial));
  REQUIRE_MESSAGE(storage.has_value(), storage.error().to_string());
  options.group_id = 1;
  options.raft.id = id_;
  options.peers = std::move(peers);
  group_ = std::make_unique<RaftGroup>(io_.get_executor(), *pool_, *messenger_, *router_,
                                       std::move(*storage), sm_, options);
  group_->start();
  work_.emplace(io_.get_executor());
  thread_ = std::thread([this] { io_.run(); });
}

TestNode::~TestNode() {
  // A crash: the I/O thread just stops. Then the pool finishes any sync in flight
  // before the DB under it closes; the group's coroutines die with the io_context.
  io_.stop();
  if (thread_.joinable()) thread_.join();
  pool_->join();
  group_.reset();
  router_.reset();
  messenger_.reset();
  server_.reset();
  db_.reset();
}

}  // namespace dfs::raft::testing
