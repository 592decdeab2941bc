#include "tests/support/mds_process.h"

#include <csignal>
#include <fstream>

#include "tests/support/process.h"

namespace dfs::test {

const char* mds_binary() { return DFS_MDS_BIN; }

MdsProcess::MdsProcess(TestCluster& cluster, std::vector<std::string> extra_conf)
    : cluster_(cluster) {
  std::ofstream conf(cluster.conf_path(), std::ios::app);
  conf << "\n[mds.a]\naddr = 127.0.0.1:0\ndata = " << cluster.dir()
       << "/mds.a\nlog_file = " << cluster.dir() << "/mds.a.log\nreclaim_grace_ms = 1000\n";
  for (const auto& line : extra_conf) conf << line << "\n";
}

Status MdsProcess::mkfs() {
  auto r = run_command({mds_binary(), "-c", cluster_.conf_path(), "-i", "a", "--mkfs"},
                       cluster_.dir(), std::chrono::seconds(30));
  if (!r) return r.error();
  if (r->exit_code != 0) return make_error(ErrorCode::kInternal, r->describe());
  return ok_status();
}

Status MdsProcess::start() {
  auto pid = spawn_process({{mds_binary(), "-c", cluster_.conf_path(), "-i", "a"},
                            cluster_.dir() + "/mds.a.out",
                            cluster_.dir() + "/mds.a.out"});
  if (!pid) return pid.error();
  pid_ = *pid;
  return ok_status();
}

void MdsProcess::kill(int signal) {
  if (pid_ <= 0) return;
  ::kill(pid_, signal);
  (void)wait_for_exit(pid_, std::chrono::seconds(10));
  pid_ = -1;
}

}  // namespace dfs::test
