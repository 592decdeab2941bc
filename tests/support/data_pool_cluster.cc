#include "tests/support/data_pool_cluster.h"

#include "tests/support/doctest_result.h"

namespace dfs::test {
namespace {

std::unique_ptr<client::ObjectClient> boot_data_pool(TestCluster& cluster) {
  INFO("cluster dir " << cluster.dir());
  auto client = cluster.boot_with_pool("data");
  DFS_REQUIRE_OK(client);
  return std::move(*client);
}

}  // namespace

DataPoolCluster::DataPoolCluster() : client(boot_data_pool(cluster)), c(*client) {}

}  // namespace dfs::test
