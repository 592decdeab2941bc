// TestCluster: a real dfs cluster for integration tests: one dfs-mon (or a quorum of
// several: mon.a, mon.b, ...) and N dfs-osd processes on loopback, each OSD its own
// CRUSH host, with their stores and logs in a fresh temporary directory (kept when
// DFS_KEEP_TEST_DIR is set). The destructor SIGKILLs and reaps every daemon it started.
// Not thread-safe: drive it from the test's main thread (daemons are tied to the thread
// that spawned them).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client-fuse/libdfs/object_client.h"
#include "common/status/status.h"
#include "tests/support/doctest_result.h"

namespace dfs::test {

struct ClusterOptions {
  int osds = 3;
  int mons = 1;  // monitors mon.a, mon.b, ... forming one Raft quorum
  int mon_snapshot_every = 0;  // compact the monitors' log this often; 0: their default
  // Short failure detection, so degraded tests run in seconds.
  double osd_heartbeat_grace_s = 6;
  int mon_osd_min_down_reporters = 2;
  double mon_osd_down_out_interval_s = 600;  // a down OSD is marked out after this
  // The OSDs' scheduled deep scrub of each PG (osd_deep_scrub_interval); unset: theirs.
  std::optional<double> osd_deep_scrub_interval_s;
  // Extra `key = value` lines for [global] (every daemon reads them).
  std::vector<std::string> extra_conf;
  std::string log_level = "info";  // $DFS_TEST_LOG_LEVEL overrides it
};

// Paths of the binaries under test (from the build).
const char* mon_binary();
const char* osd_binary();
const char* cli_binary();

class TestCluster {
 public:
  // Makes the directory, picks free ports and writes dfs.conf; starts nothing.
  explicit TestCluster(ClusterOptions options = {});
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // mkfs of every daemon, starts them all and waits until every OSD is up and answers.
  // Errors: kInternal (a daemon failed to create its store or to start), kTimeout.
  Status boot(Duration timeout = Duration(30000));
  // The start of an object test: boot(), a pool of size 3 and min_size 2, then a new
  // client(op_timeout). DataPoolCluster is the doctest fixture for the usual settings.
  // Errors: those of boot(), create_pool() and client().
  Result<std::unique_ptr<client::ObjectClient>> boot_with_pool(
      const std::string& pool, uint32_t pg_num = 64, Duration op_timeout = Duration(60000));

  // Adds osd.N (N: the next id) on a new CRUSH host hostN with weight 1, makes its
  // store and starts it; returns once the map has it up. Errors: those of boot().
  Result<int> add_osd(Duration timeout = Duration(30000));
  // Sends `signal` to a daemon ("mon.a", "osd.1"). SIGKILL/SIGTERM/SIGINT also wait
  // for it to end (SIGTERM: up to 10 s, then SIGKILL) and reap it.
  // Errors: kNotFound (unknown or not running).
  Status kill(const std::string& name, int signal = SIGKILL);
  // Starts a stopped daemon with its existing store and waits until it listens.
  // Errors: kInvalidArgument (it runs), kInternal (it died), kTimeout.
  Status start(const std::string& name);
  // Starts several daemons at once (as after a power cut), then waits for each.
  Status start(const std::vector<std::string>& names);
  // Reaps the daemon if it ended; false then (its fate is in exit_status_of()).
  bool is_running(const std::string& name);
  std::string exit_status_of(const std::string& name) const;

  // Waits until at least `n` OSDs are up in the map and each of those answers a
  // statfs request. Errors: kTimeout (with what the map said last).
  Status wait_osds_up(int n, Duration timeout = Duration(30000));
  // Waits until the map marks osd `id` down. Errors: kTimeout.
  Status wait_osd_down(int id, Duration timeout = Duration(30000));

  // Errors: those of ObjectClient::mon_command.
  Status create_pool(const std::string& name, uint32_t size = 3, uint32_t min_size = 2,
                     uint32_t pg_num = 64);

  // A new client connected to the cluster's monitor.
  Result<std::unique_ptr<client::ObjectClient>> client(Duration op_timeout = Duration(60000));

  // The admin client the cluster uses itself (created on first use).
  Result<client::ObjectClient*> admin();

  // Every daemon that should be running is, and no log holds a "critical" or "bug:"
  // line. Errors: kInternal naming each problem.
  Status check_healthy();
  // Lines of `name`'s log containing "critical" or "bug:".
  std::vector<std::string> bad_log_lines(const std::string& name);

  std::string log_of(const std::string& name) const;
  const std::string& conf_path() const { return conf_path_; }
  const std::string& dir() const { return dir_; }
  // The cluster's fsid in dfs.conf (its directory's name); its clients send it.
  std::string fsid() const;
  const std::string& mon_addr() const { return daemons_.at("mon.a").addr; }
  std::vector<std::string> mon_addrs() const;
  static std::string mon_name(int index) { return std::string("mon.") + char('a' + index); }
  std::string osd_addr(int id) const { return daemons_.at(osd_name(id)).addr; }
  int osd_count() const { return options_.osds; }
  std::vector<std::string> daemon_names() const;
  static std::string osd_name(int id) { return "osd." + std::to_string(id); }

 private:
  struct Daemon {
    std::string name;
    std::vector<std::string> argv;  // without --mkfs
    std::string addr;
    int port_hold = -1;     // a socket bound to addr's port for the cluster's life
    pid_t pid = -1;         // -1: not running
    std::string last_exit;  // how it last ended
    bool killed_by_test = false;
  };

  Status mkfs(Daemon& daemon);
  Status spawn(Daemon& daemon);
  Status wait_listening(Daemon& daemon);
  void write_conf();
  void dump_logs_for_failure();
  Daemon& daemon(const std::string& name);

  ClusterOptions options_;
  std::string dir_;
  std::string conf_path_;
  std::map<std::string, Daemon> daemons_;
  std::unique_ptr<client::ObjectClient> admin_;
};

}  // namespace dfs::test
