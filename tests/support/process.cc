#include "tests/support/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace dfs::test {
namespace {

const char* kSetpriv = "/usr/bin/setpriv";

bool have_setpriv() {
  static const bool found = ::access(kSetpriv, X_OK) == 0;
  return found;
}

// posix_spawn_file_actions_t with RAII.
class FileActions {
 public:
  FileActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;

  void redirect(int fd, const std::string& path) {
    // The path must outlive posix_spawn: keep our own copy.
    paths_.push_back(path.empty() ? "/dev/null" : path);
    int flags = path.empty() ? O_WRONLY : O_WRONLY | O_CREAT | O_APPEND;
    ::posix_spawn_file_actions_addopen(&actions_, fd, paths_.back().c_str(), flags, 0644);
  }
  void redirect_stdin_null() {
    ::posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
  std::vector<std::string> paths_;
};

}  // namespace

Result<pid_t> spawn_process(const SpawnOptions& options) {
  if (options.argv.empty()) return make_error(ErrorCode::kInvalidArgument, "empty argv");
  std::vector<std::string> args;
  if (options.die_with_parent && have_setpriv()) {
    args = {kSetpriv, "--pdeathsig", "KILL", "--"};
  }
  args.insert(args.end(), options.argv.begin(), options.argv.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  FileActions actions;
  actions.redirect_stdin_null();
  actions.redirect(1, options.stdout_path);
  actions.redirect(2, options.stderr_path);
  pid_t pid = -1;
  int rc = ::posix_spawn(&pid, argv[0], actions.get(), nullptr, argv.data(), environ);
  if (rc != 0) {
    return make_error(ErrorCode::kInternal,
                      "posix_spawn " + args.front() + ": " + std::string(::strerror(rc)));
  }
  return pid;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  return "wait status " + std::to_string(status);
}

std::optional<int> wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;  // not our child (already reaped)
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string CommandResult::describe() const {
  std::ostringstream out;
  out << "exit code " << exit_code << (timed_out ? " (timed out)" : "") << " after "
      << elapsed.count() << " ms\n--- stdout ---\n"
      << this->out << "--- stderr ---\n"
      << err;
  return out.str();
}

Result<CommandResult> run_command(const std::vector<std::string>& argv,
                                  const std::string& scratch_dir,
                                  std::chrono::milliseconds timeout) {
  static std::atomic<int> counter{0};
  std::string base =
      scratch_dir + "/cmd-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  SpawnOptions options{argv, base + ".out", base + ".err", true};
  auto start = std::chrono::steady_clock::now();
  pid_t pid = DFS_TRY(spawn_process(options));
  CommandResult result;
  auto status = wait_for_exit(pid, timeout);
  if (!status) {
    result.timed_out = true;
    ::kill(pid, SIGKILL);
    status = wait_for_exit(pid, std::chrono::seconds(10));
  }
  result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  if (status && WIFEXITED(*status) && !result.timed_out) result.exit_code = WEXITSTATUS(*status);
  result.out = read_file(base + ".out");
  result.err = read_file(base + ".err");
  ::unlink((base + ".out").c_str());
  ::unlink((base + ".err").c_str());
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace dfs::test
