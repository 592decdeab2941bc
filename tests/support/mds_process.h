// MdsProcess: one dfs-mds daemon (mds.a) beside a TestCluster's monitors and OSDs,
// spawned with the cluster's dfs.conf plus an [mds.a] section (its store and log in the
// cluster's directory). The destructor SIGKILLs it. Drive it from the test's main
// thread, like the TestCluster.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status/status.h"
#include "tests/support/test_cluster.h"

namespace dfs::test {

const char* mds_binary();

class MdsProcess {
 public:
  // Appends the [mds.a] section to the cluster's dfs.conf: a short reclaim grace after
  // a restart (1 s), and `extra_conf` lines ("key = value", e.g. session_timeout_ms).
  explicit MdsProcess(TestCluster& cluster, std::vector<std::string> extra_conf = {});
  ~MdsProcess() { kill(SIGKILL); }
  MdsProcess(const MdsProcess&) = delete;
  MdsProcess& operator=(const MdsProcess&) = delete;

  // Makes the MDS's store (dfs-mds --mkfs). Errors: kInternal with its output.
  Status mkfs();
  // Starts the daemon; it enters the cluster map on its own (clients wait for that).
  Status start();
  // Sends `signal` and waits (up to 10 s) for the daemon to end; nothing when not running.
  void kill(int signal);

 private:
  TestCluster& cluster_;
  pid_t pid_ = -1;
};

}  // namespace dfs::test
