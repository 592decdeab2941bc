#include "tests/support/test_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/process.h"

namespace dfs::test {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// Binds a loopback socket to port 0 with SO_REUSEADDR and returns it with its port. The
// socket never listens: the daemon given the port binds beside it (the daemons' servers
// set SO_REUSEADDR too), while the kernel hands the port to no other bind to port 0 and
// no outgoing connection. Held for the cluster's life, it keeps a daemon's port its own
// while the daemon starts and while it is down: a port closed before its daemon listened
// could be handed to a test running in parallel, whose daemon then answered in our
// daemon's place. (Only a bind to this very port with SO_REUSEADDR could still take it:
// the daemons' metrics listen on free ports instead, see write_conf.)
std::pair<int, uint16_t> reserve_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int on = 1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("reserving a loopback port");
    std::abort();
  }
  return {fd, ntohs(addr.sin_port)};
}

// True once something accepts TCP connections at 127.0.0.1:port.
bool accepts_connections(const std::string& address) {
  auto colon = address.rfind(':');
  int port = std::stoi(address.substr(colon + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/dfs-it-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  return tmpl;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string tail(const std::string& text, size_t count) {
  auto lines = lines_of(text);
  std::string out;
  for (size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i) {
    out += "    " + lines[i] + "\n";
  }
  return out;
}

}  // namespace

const char* mon_binary() { return DFS_MON_BIN; }
const char* osd_binary() { return DFS_OSD_BIN; }
const char* cli_binary() { return DFS_CLI_BIN; }

TestCluster::TestCluster(ClusterOptions options)
    : options_(std::move(options)), dir_(make_temp_dir()), conf_path_(dir_ + "/dfs.conf") {
  auto add = [this](std::string name, std::vector<std::string> argv) {
    auto [fd, port] = reserve_port();
    Daemon d;
    d.name = name;
    d.argv = std::move(argv);
    d.addr = "127.0.0.1:" + std::to_string(port);
    d.port_hold = fd;
    daemons_.emplace(std::move(name), std::move(d));
  };
  for (int i = 0; i < options_.mons; ++i) {
    std::string name = mon_name(i);
    add(name, {mon_binary(), "-c", conf_path_, "-i", name.substr(4)});
  }
  for (int id = 0; id < options_.osds; ++id) {
    add(osd_name(id), {osd_binary(), "-c", conf_path_, "-i", std::to_string(id)});
  }
  write_conf();
}

TestCluster::~TestCluster() {
  admin_.reset();
  bool failing = std::uncaught_exceptions() > 0;
  for (auto& [name, d] : daemons_) {
    if (d.pid < 0) continue;
    ::kill(d.pid, SIGKILL);
    auto status = wait_for_exit(d.pid, milliseconds(10000));
    if (!status)
      std::fprintf(stderr, "TestCluster: %s (pid %d) did not die\n", name.c_str(), d.pid);
    d.pid = -1;
  }
  for (auto& [name, d] : daemons_) ::close(d.port_hold);
  if (failing) dump_logs_for_failure();
  if (std::getenv("DFS_KEEP_TEST_DIR")) {
    std::fprintf(stderr, "TestCluster: kept %s\n", dir_.c_str());
    return;
  }
  // In the background: with `mount -o discard` freeing a GiB of blocks takes seconds.
  // The shell exits at once; rm, reparented to init, finishes on its own.
  auto rm = spawn_process({{"/bin/sh", "-c", "rm -rf -- \"$0\" &", dir_}, "", "", false});
  if (rm && wait_for_exit(*rm, milliseconds(10000))) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void TestCluster::write_conf() {
  std::ofstream out(conf_path_);
  out << "# Written by dfs::test::TestCluster\n"
      << "[global]\n"
      << "fsid = " << fsid() << "\n"
      << "mon_addrs = ";
  auto mons = mon_addrs();
  for (size_t i = 0; i < mons.size(); ++i) out << (i ? "," : "") << mons[i];
  // Metrics on any free port: the default, RPC port + 1000, may be a port another test's
  // cluster holds for one of its daemons.
  out << "\n"
      << "metrics_addr = 127.0.0.1:0\n"
      << "log_level = "
      << (std::getenv("DFS_TEST_LOG_LEVEL") ? std::getenv("DFS_TEST_LOG_LEVEL")
                                            : options_.log_level)
      << "\n";
  for (const auto& line : options_.extra_conf) out << line << "\n";
  for (int i = 0; i < options_.mons; ++i) {
    std::string name = mon_name(i);
    out << "\n[" << name << "]\n"
        << "addr = " << daemons_.at(name).addr << "\n"
        << "data = " << dir_ << "/" << name << "\n"
        << "log_file = " << dir_ << "/" << name << ".log\n"
        << "osd_heartbeat_grace = " << options_.osd_heartbeat_grace_s << "\n"
        << "mon_osd_min_down_reporters = " << options_.mon_osd_min_down_reporters << "\n"
        << "mon_osd_down_out_interval = " << options_.mon_osd_down_out_interval_s << "\n";
    if (options_.mon_snapshot_every > 0) {
      out << "mon_snapshot_every = " << options_.mon_snapshot_every << "\n";
    }
  }
  for (int id = 0; id < options_.osds; ++id) {
    std::string name = osd_name(id);
    out << "\n[" << name << "]\n"
        << "addr = " << osd_addr(id) << "\n"
        << "host = host" << id << "\n"
        << "weight = 1.0\n"
        << "data = " << dir_ << "/" << name << "\n"
        << "log_file = " << dir_ << "/" << name << ".log\n";
    if (options_.osd_deep_scrub_interval_s) {
      out << "osd_deep_scrub_interval = " << *options_.osd_deep_scrub_interval_s << "\n";
    }
  }
}

std::string TestCluster::fsid() const { return std::filesystem::path(dir_).filename().string(); }

std::vector<std::string> TestCluster::mon_addrs() const {
  std::vector<std::string> out;
  for (int i = 0; i < options_.mons; ++i) out.push_back(daemons_.at(mon_name(i)).addr);
  return out;
}

TestCluster::Daemon& TestCluster::daemon(const std::string& name) {
  auto it = daemons_.find(name);
  if (it == daemons_.end()) {
    std::fprintf(stderr, "TestCluster: no daemon named %s\n", name.c_str());
    std::abort();  // a typo in a test
  }
  return it->second;
}

std::vector<std::string> TestCluster::daemon_names() const {
  std::vector<std::string> names;
  for (const auto& [name, d] : daemons_) names.push_back(name);
  return names;
}

Status TestCluster::mkfs(Daemon& d) {
  auto argv = d.argv;
  argv.push_back("--mkfs");
  auto result = run_command(argv, dir_, milliseconds(60000));
  if (!result) return unexpected(std::move(result).error());
  if (result->exit_code != 0) {
    return make_error(ErrorCode::kInternal, d.name + " --mkfs failed: " + result->describe());
  }
  return ok_status();
}

Status TestCluster::boot(Duration timeout) {
  for (auto& [name, d] : daemons_) DFS_TRY_STATUS(mkfs(d));
  DFS_TRY_STATUS(start(daemon_names()));
  return wait_osds_up(options_.osds, timeout);
}

Result<int> TestCluster::add_osd(Duration timeout) {
  int id = options_.osds;
  auto [fd, port] = reserve_port();
  Daemon d;
  d.name = osd_name(id);
  d.argv = {osd_binary(), "-c", conf_path_, "-i", std::to_string(id)};
  d.addr = "127.0.0.1:" + std::to_string(port);
  d.port_hold = fd;
  Daemon& added = daemons_.emplace(d.name, std::move(d)).first->second;
  ++options_.osds;
  write_conf();
  DFS_TRY_STATUS(mkfs(added));
  DFS_TRY_STATUS(start(added.name));
  DFS_TRY_STATUS(wait_osds_up(options_.osds, timeout));
  return id;
}

Result<std::unique_ptr<client::ObjectClient>> TestCluster::boot_with_pool(const std::string& pool,
                                                                          uint32_t pg_num,
                                                                          Duration op_timeout) {
  DFS_TRY_STATUS(boot());
  DFS_TRY_STATUS(create_pool(pool, 3, 2, pg_num));
  return client(op_timeout);
}

Status TestCluster::start(const std::string& name) {
  Daemon& d = daemon(name);
  DFS_TRY_STATUS(spawn(d));
  return wait_listening(d);
}

Status TestCluster::start(const std::vector<std::string>& names) {
  for (const auto& name : names) DFS_TRY_STATUS(spawn(daemon(name)));
  for (const auto& name : names) DFS_TRY_STATUS(wait_listening(daemon(name)));
  return ok_status();
}

Status TestCluster::spawn(Daemon& d) {
  if (is_running(d.name)) return make_error(ErrorCode::kInvalidArgument, d.name + " is running");
  std::string out = dir_ + "/" + d.name + ".out";
  pid_t pid = DFS_TRY(spawn_process({d.argv, out, out, true}));
  d.pid = pid;
  d.killed_by_test = false;
  return ok_status();
}

// Ready once it listens; a daemon that dies on start is reported here. Whether it runs is
// asked after the probe, so that a daemon that died is never taken for listening.
Status TestCluster::wait_listening(Daemon& d) {
  auto deadline = SteadyClock::now() + milliseconds(15000);
  for (;;) {
    bool listening = accepts_connections(d.addr);
    if (!is_running(d.name)) {
      return make_error(ErrorCode::kInternal, d.name + " " + d.last_exit + " on start; output:\n" +
                                                  read_file(dir_ + "/" + d.name + ".out") +
                                                  "log:\n" + tail(log_of(d.name), 20));
    }
    if (listening) return ok_status();
    if (SteadyClock::now() > deadline) {
      return make_error(ErrorCode::kTimeout, d.name + " does not listen on " + d.addr);
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
}

Status TestCluster::kill(const std::string& name, int signal) {
  Daemon& d = daemon(name);
  if (!is_running(name)) return make_error(ErrorCode::kNotFound, name + " is not running");
  ::kill(d.pid, signal);
  if (signal != SIGKILL && signal != SIGTERM && signal != SIGINT) return ok_status();
  auto status = wait_for_exit(d.pid, milliseconds(10000));
  if (!status) {
    ::kill(d.pid, SIGKILL);
    status = wait_for_exit(d.pid, milliseconds(10000));
  }
  d.last_exit = status ? describe_wait_status(*status) : "did not die";
  d.pid = -1;
  d.killed_by_test = true;
  return ok_status();
}

bool TestCluster::is_running(const std::string& name) {
  Daemon& d = daemon(name);
  if (d.pid < 0) return false;
  int status = 0;
  if (::waitpid(d.pid, &status, WNOHANG) == d.pid) {
    d.last_exit = describe_wait_status(status);
    d.pid = -1;
    return false;
  }
  return true;
}

std::string TestCluster::exit_status_of(const std::string& name) const {
  return daemons_.at(name).last_exit;
}

Result<client::ObjectClient*> TestCluster::admin() {
  if (!admin_) {
    admin_ = DFS_TRY(client());
  }
  return admin_.get();
}

Result<std::unique_ptr<client::ObjectClient>> TestCluster::client(Duration op_timeout) {
  client::ClientOptions options;
  options.mon_addrs = mon_addrs();
  options.fsid = fsid();
  options.name = "test";
  options.op_timeout = op_timeout;
  options.attempt_timeout = std::min(op_timeout, Duration(20000));
  options.connect_timeout = Duration(15000);
  return client::ObjectClient::connect(options);
}

Status TestCluster::wait_osds_up(int n, Duration timeout) {
  client::ObjectClient* c = DFS_TRY(admin());
  auto deadline = SteadyClock::now() + timeout;
  std::string last;
  for (;;) {
    ClusterMap map = c->map_snapshot();
    std::vector<int32_t> up;
    for (const auto& osd : map.proto().osds()) {
      if (osd.up()) up.push_back(osd.id());
    }
    last = "map epoch " + std::to_string(map.epoch()) + " has " + std::to_string(up.size()) +
           " OSDs up";
    if (static_cast<int>(up.size()) >= n) {
      bool all_answer = true;
      for (int32_t id : up) {
        auto df = c->run(c->osd_statfs(id));
        if (!df) {
          all_answer = false;
          last += "; osd." + std::to_string(id) + " does not answer: " + df.error().to_string();
          break;
        }
      }
      if (all_answer) return ok_status();
    }
    if (SteadyClock::now() > deadline) {
      return make_error(ErrorCode::kTimeout,
                        "waiting for " + std::to_string(n) + " OSDs up: " + last);
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
}

Status TestCluster::wait_osd_down(int id, Duration timeout) {
  client::ObjectClient* c = DFS_TRY(admin());
  auto deadline = SteadyClock::now() + timeout;
  while (c->map_snapshot().is_up(id)) {
    if (SteadyClock::now() > deadline) {
      return make_error(ErrorCode::kTimeout, "osd." + std::to_string(id) + " still up after " +
                                                 std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  return ok_status();
}

Status TestCluster::create_pool(const std::string& name, uint32_t size, uint32_t min_size,
                                uint32_t pg_num) {
  client::ObjectClient* c = DFS_TRY(admin());
  proto::MapCommand command;
  auto* create = command.mutable_create_pool();
  create->set_name(name);
  create->set_size(size);
  create->set_min_size(min_size);
  create->set_pg_num(pg_num);
  auto epoch = c->run(c->mon_command(command));
  if (!epoch) return unexpected(std::move(epoch).error().with_context("creating pool " + name));
  return ok_status();
}

std::string TestCluster::log_of(const std::string& name) const {
  return read_file(dir_ + "/" + name + ".log");
}

std::vector<std::string> TestCluster::bad_log_lines(const std::string& name) {
  std::vector<std::string> bad;
  for (auto& line : lines_of(log_of(name))) {
    if (line.find(" critical ") != std::string::npos || line.find("bug:") != std::string::npos) {
      bad.push_back(line);
    }
  }
  // The daemon's own stdout/stderr: allocator aborts and sanitizer reports land there.
  for (auto& line : lines_of(read_file(dir_ + "/" + name + ".out"))) {
    if (line.find("AddressSanitizer") != std::string::npos ||
        line.find("runtime error:") != std::string::npos ||
        line.find("double free") != std::string::npos ||
        line.find("terminate called") != std::string::npos) {
      bad.push_back(line);
    }
  }
  return bad;
}

Status TestCluster::check_healthy() {
  std::string problems;
  for (auto& [name, d] : daemons_) {
    if (!d.killed_by_test && !is_running(name)) {
      problems += name + " died: " + d.last_exit + "\n" + tail(log_of(name), 10) +
                  tail(read_file(dir_ + "/" + name + ".out"), 10);
    }
    for (const auto& line : bad_log_lines(name)) problems += name + ": " + line + "\n";
  }
  if (problems.empty()) return ok_status();
  return make_error(ErrorCode::kInternal, "cluster in " + dir_ + " unhealthy:\n" + problems);
}

void TestCluster::dump_logs_for_failure() {
  std::fprintf(stderr, "TestCluster: test failed; cluster directory %s%s\n", dir_.c_str(),
               std::getenv("DFS_KEEP_TEST_DIR") ? "" : " (set DFS_KEEP_TEST_DIR=1 to keep it)");
  for (const auto& [name, d] : daemons_) {
    std::fprintf(stderr, "--- last lines of %s.log ---\n%s", name.c_str(),
                 tail(log_of(name), 15).c_str());
  }
}

}  // namespace dfs::test
