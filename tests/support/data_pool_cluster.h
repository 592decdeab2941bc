// DataPoolCluster: the start of most object-tier integration tests, as a doctest
// fixture (TEST_CASE_FIXTURE): a booted TestCluster with a pool "data" (size 3,
// min_size 2, 64 PGs) and a client of the test's own. Construction REQUIREs each step,
// so a cluster that does not come up fails the test case there, naming its directory.
// Drive it from the test's main thread, as TestCluster.
#pragma once

#include <memory>

#include "client-fuse/libdfs/object_client.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {

struct DataPoolCluster {
  DataPoolCluster();

  TestCluster cluster;
  std::unique_ptr<client::ObjectClient> client;
  client::ObjectClient& c;  // *client, under the short name the tests use
};

}  // namespace dfs::test
