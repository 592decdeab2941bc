#include "client-fuse/mount/daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "client-fuse/fuse/channel.h"
#include "client-fuse/fuse/ops.h"
#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/vfs/vfs.h"
#include "common/config/config.h"
#include "common/daemon/allocator_tuning.h"
#include "common/log/log.h"

namespace dfs::mount {
namespace {

// After a stop signal: how long the cluster may stay silent before what the mount
// still holds is given up. A stop must end well before systemd's SIGKILL, and a
// cluster that answers keeps taking what is left.
constexpr Duration kStopGrace{2000};

// libfuse's own messages go to our log; its last error explains a failed mount.
std::mutex fuse_log_mu;
std::string last_fuse_error;  // guarded by fuse_log_mu

void log_from_libfuse(enum fuse_log_level level, const char* fmt, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  std::string line(buf);
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (level <= FUSE_LOG_ERR) {
    spdlog::error("libfuse: {}", line);
    std::lock_guard<std::mutex> lock(fuse_log_mu);
    last_fuse_error = line;
  } else if (level <= FUSE_LOG_NOTICE) {
    spdlog::info("libfuse: {}", line);
  } else {
    spdlog::debug("libfuse: {}", line);
  }
}

// CPUs this process may run on (its affinity mask, as taskset or a cgroup sets it).
unsigned usable_cpus() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<unsigned>(CPU_COUNT(&set));
}

std::string fuse_error_suffix() {
  std::lock_guard<std::mutex> lock(fuse_log_mu);
  return last_fuse_error.empty() ? std::string() : ": " + last_fuse_error;
}

// How the serving process tells the waiting parent (or, in the foreground, the
// terminal) how the mount went: one line, then silence.
class Reporter {
 public:
  Reporter(int fd, const char* program) : fd_(fd), program_(program) {}

  void ok() { send("ok"); }
  void fail(const std::string& message) {
    if (done_) return;
    spdlog::error("{}", message);
    send("error " + message);
  }

 private:
  void send(const std::string& line) {
    if (done_) return;
    done_ = true;
    if (fd_ < 0) {
      if (line != "ok") std::fprintf(stderr, "%s: %s\n", program_, line.substr(6).c_str());
      return;
    }
    std::string msg = line + "\n";
    // A parent that went away cannot be told; nothing else to do then.
    [[maybe_unused]] ssize_t n = ::write(fd_, msg.data(), msg.size());
    ::close(fd_);
    fd_ = -1;
  }

  int fd_;
  const char* program_;
  bool done_ = false;
};

std::string default_log_file(const MountOptions& o) {
  if (!o.log_file.empty()) return o.log_file;
  if (o.foreground) return {};  // stderr
  std::string dir = ::geteuid() == 0 ? "/var/log/dfs" : "";
  if (dir.empty()) return "/dev/null";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return dir + "/client." + o.name + ".log";
}

// The cluster to mount: its monitors and the fsid they must have.
struct ClusterToMount {
  std::vector<std::string> mon_addrs;
  std::string fsid;  // empty: any cluster at mon_addrs
};

// Monitors from the source, else from the config file (conf=, $DFS_CONF or
// /etc/dfs/dfs.conf); the fsid from fsid=, else from that config file. A source that
// names the monitors needs no config file: without one (or with one that cannot be
// read, unless conf= names it) the mount checks no fsid.
Result<ClusterToMount> cluster_to_mount(const MountOptions& o) {
  ClusterToMount cluster{o.source.mon_addrs, o.fsid};
  std::string path = resolve_config_path(o.conf);
  auto config = Config::load_file(path);
  if (!config) {
    if (!o.source.mon_addrs.empty() && o.conf.empty()) return cluster;
    if (!o.source.mon_addrs.empty()) return unexpected(std::move(config).error());
    return unexpected(std::move(config).error().with_context(
        "the source names no monitor, so they come from " + path));
  }
  if (cluster.fsid.empty()) cluster.fsid = config->get_or("global", "fsid", "");
  if (cluster.mon_addrs.empty()) {
    cluster.mon_addrs = split_list(config->get_or("global", "mon_addrs", ""));
    if (cluster.mon_addrs.empty()) {
      return make_error(ErrorCode::kInvalidArgument, "no mon_addrs in " + path);
    }
  }
  return cluster;
}

client::FileClientOptions client_options(const MountOptions& o, ClusterToMount cluster) {
  client::FileClientOptions c;
  c.objects.mon_addrs = std::move(cluster.mon_addrs);
  c.objects.fsid = std::move(cluster.fsid);
  c.objects.name = o.name;
  c.objects.op_timeout = Duration(o.op_timeout_s * 1000ull);
  c.objects.attempt_timeout = std::min(c.objects.op_timeout, Duration(20000));
  c.objects.connect_timeout = Duration(o.mount_timeout_s * 1000ull);
  c.readahead_bytes = o.readahead_bytes;
  c.readdir_inline_max = o.listing_data_bytes;
  c.prefetch_listings = o.prefetch_listings;
  c.write_behind_bytes = o.write_behind_bytes;
  c.data_ahead_bytes = o.data_ahead_bytes;
  c.exclusive = o.exclusive;
  return c;
}

// Everything after the fork: connect, mount, serve. Returns the exit status.
int serve(const MountOptions& o, Reporter& reporter) {
  auto cluster = cluster_to_mount(o);
  if (!cluster) {
    reporter.fail(cluster.error().to_string());
    return 1;
  }
  const std::vector<std::string> mons = cluster->mon_addrs;
  auto client = client::FileClient::connect(client_options(o, std::move(*cluster)));
  if (!client) {
    reporter.fail(client.error().to_string());
    return 1;
  }
  client::Creds creds;
  creds.uid = ::geteuid();
  creds.gid = ::getegid();
  auto root = (*client)->run((*client)->resolve(creds, o.source.subdir));
  if (!root) {
    reporter.fail("subdirectory " + o.source.subdir + ": " + root.error().to_string());
    return 1;
  }
  if (!S_ISDIR(root->mode())) {
    reporter.fail("subdirectory " + o.source.subdir + " is not a directory");
    return 1;
  }
  vfs::VfsOptions vo;
  for (bool alone : {true, false}) {
    vfs::KernelTimeouts& t = alone ? vo.alone : vo.shared;
    t.entry = mount::kernel_cache_seconds(o.entry_timeout, alone);
    t.attr = mount::kernel_cache_seconds(o.attr_timeout, alone);
    t.negative = mount::kernel_cache_seconds(o.negative_timeout, alone);
  }
  // What the kernel was told while this mount held exclusive caching must expire before
  // the MDS could evict this mount, paused or cut off, and let another one change it: the
  // kernel answers from its cache without asking this process. A reply goes out under a
  // lease renewed every quarter of the session timeout, and the MDS evicts a silent
  // session a whole timeout after its last renewal: half the timeout is safely before.
  if (double horizon = (*client)->session().session_timeout_ms() / 2000.0; horizon > 0) {
    for (double* t : {&vo.alone.entry, &vo.alone.attr, &vo.alone.negative}) {
      *t = std::min(*t, horizon);
    }
    spdlog::info("the kernel caches names {} s, attributes {} s, missing names {} s while "
                 "this mount caches alone (at most half the MDS's session timeout)",
                 vo.alone.entry, vo.alone.attr, vo.alone.negative);
  }
  vo.writeback_cache = o.writeback_cache;
  // The Vfs maps the kernel's root to the mounted directory.
  client::FileClient& fc = **client;
  vfs::Vfs vfs(fc, vo, root->ino());

  fuse::FuseContext ctx;
  ctx.vfs = &vfs;
  ctx.options.writeback_cache = o.writeback_cache;
  ctx.options.posix_acl = o.posix_acl;
  ctx.options.splice = o.splice;
  ctx.options.handle_killpriv = o.handle_killpriv;
  ctx.options.prefill_max_bytes = o.prefill_bytes;
  ctx.on_init = [&reporter] { reporter.ok(); };

  std::vector<std::string> args = {"dfs-fuse"};
  if (o.debug) args.push_back("-d");
  args.push_back("-o");
  MountOptions shown = o;  // /proc/mounts names the monitors even when the config did
  if (o.source.mon_addrs.empty()) {
    std::string names;
    for (const auto& m : mons) names += (names.empty() ? "" : ",") + m;
    shown.source_text = names + o.source_text;
  }
  args.push_back(fuse_mount_options(shown, ::geteuid() == 0));
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  fuse_args fargs = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  fuse_lowlevel_ops ops = fuse::make_ops();
  if (!o.debug) fuse_set_log_func(log_from_libfuse);  // -d: libfuse traces to stderr
  fuse_session* se = fuse_session_new(&fargs, &ops, sizeof ops, &ctx);
  if (!se) {
    reporter.fail("libfuse rejected the mount options " + args.back() + fuse_error_suffix());
    return 1;
  }
  ctx.session = se;
  fuse::install_kernel_invalidator(ctx);
  int rc = 1;
  // A reply to a kernel that went away must not kill us (signals that end the mount
  // are the channel's: see channel.h).
  ::signal(SIGPIPE, SIG_IGN);
  if (fuse_session_mount(se, o.mountpoint.c_str()) != 0) {
    reporter.fail("cannot mount on " + o.mountpoint + fuse_error_suffix());
  } else {
    if (o.handle_killpriv) ctx.killpriv_v2.install(se);
    spdlog::info("mounted {} on {} as client.{}", o.source_text, o.mountpoint, o.name);
    // A signal asks the daemon to stop: no more waiting op_timeout on a silent cluster.
    auto stop_soon = [&fc] { fc.objects().stop_retrying_after(kStopGrace); };
    Status served = fc.run(fuse::serve_fuse_channel(
        se, std::chrono::microseconds(mount::busy_poll_us_for(o.busy_poll_us, usable_cpus())),
        stop_soon));
    if (!served) spdlog::error("{}", served.error().to_string());
    // No more notifications to a session being torn down.
    fc.run([](fuse::FuseContext* c) -> awaitable<void> {
      c->session = nullptr;
      co_return;
    }(&ctx));
    rc = served ? 0 : 1;
    fuse_session_unmount(se);
    while (ctx.notifiers > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    spdlog::info("unmounted {}", o.mountpoint);
  }
  fuse_session_destroy(se);  // runs destroy(): pushes what is buffered
  auto flushed = fc.run(fc.shutdown());
  if (!flushed) {
    spdlog::error("final flush failed: {}", flushed.error().to_string());
    rc = 1;
  }
  reporter.fail("the file system daemon stopped before the mount was live");
  return rc;
}

Status check_mountpoint(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return make_error(ErrorCode::kNotFound, "mount point " + path + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return make_error(ErrorCode::kNotDirectory, "mount point " + path + " is not a directory");
  }
  return ok_status();
}

// Waits for the child's one line. Returns the exit status for the parent.
int wait_for_child(pid_t child, int fd, const MountOptions& o, const char* program) {
  std::string line;
  int budget_ms = static_cast<int>(o.mount_timeout_s) * 2000 + 15000;
  pollfd p{fd, POLLIN, 0};
  while (line.find('\n') == std::string::npos) {
    int ready = ::poll(&p, 1, budget_ms);
    if (ready <= 0) {
      ::kill(child, SIGTERM);
      std::fprintf(stderr, "%s: the mount did not come up in time\n", program);
      return 1;
    }
    char buf[512];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    line.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (line.rfind("ok", 0) == 0) return 0;
  int status = 0;
  ::waitpid(child, &status, 0);
  if (line.rfind("error ", 0) == 0) {
    line = line.substr(6);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    std::fprintf(stderr, "%s: %s\n", program, line.c_str());
  } else {
    std::fprintf(stderr, "%s: the file system daemon exited before mounting (see %s)\n", program,
                 default_log_file(o).c_str());
  }
  return 1;
}

}  // namespace

int run_mount(const MountOptions& options, const char* program) {
  if (auto ok = check_mountpoint(options.mountpoint); !ok) {
    std::fprintf(stderr, "%s: %s\n", program, ok.error().context().c_str());
    return 1;
  }
  int fds[2] = {-1, -1};
  if (!options.foreground) {
    // Fork before any thread exists; the child reports back through the pipe.
    if (::pipe(fds) != 0) {
      std::perror(program);
      return 1;
    }
    pid_t child = ::fork();
    if (child < 0) {
      std::perror(program);
      return 1;
    }
    if (child > 0) {
      ::close(fds[1]);
      return wait_for_child(child, fds[0], options, program);
    }
    ::close(fds[0]);
    ::setsid();
    if (::chdir("/") != 0) return 1;
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, STDIN_FILENO);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      if (null > STDERR_FILENO) ::close(null);
    }
  }
  LogOptions log;
  log.name = "client." + options.name;
  log.file = default_log_file(options);
  log.level = options.debug ? "debug" : options.log_level;
  if (auto logging = init_logging(log); !logging) {
    log.file = "/dev/null";
    ignore_error(init_logging(log), "no log is better than no mount");
  }
  spdlog::info("{}", allocator_tuning_summary());
  Reporter reporter(fds[1], program);
  return serve(options, reporter);
}

}  // namespace dfs::mount
