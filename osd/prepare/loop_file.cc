#include "osd/prepare/loop_file.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

extern char** environ;

namespace dfs::osd {
namespace {

Unexpected io_error(const std::string& what) {
  return make_error(ErrorCode::kIoError, what + ": " + std::strerror(errno));
}

// Runs argv[0] (found on PATH) and waits for it. Errors: kIoError naming the command and
// how it ended; its own messages went to our stderr.
Status run(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  if (int rc = ::posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ); rc != 0) {
    return make_error(ErrorCode::kIoError, argv[0] + " cannot run: " + std::strerror(rc));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return io_error("waiting for " + argv[0]);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return ok_status();
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
  return make_error(ErrorCode::kIoError,
                    "`" + line + "` failed (" +
                        (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                           : "killed by signal " + std::to_string(WTERMSIG(status))) +
                        ")");
}

}  // namespace

Result<uint64_t> parse_size(const std::string& text) {
  auto bad = [&] {
    return make_error(ErrorCode::kInvalidArgument,
                      "'" + text + "' is not a size (bytes, or a number with K, M, G or T)");
  };
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15 || text.size() > digits + 1) return bad();
  uint64_t value = std::stoull(text.substr(0, digits));
  if (digits < text.size()) {
    const std::string units = "KMGT";
    auto at = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(text.back()))));
    if (at == std::string::npos) return bad();
    value <<= 10 * (at + 1);
  }
  return value;
}

Status make_loop_store(const std::string& file, uint64_t size, const std::string& dir) {
  // ext4 with a journal and a useful amount of room for objects.
  constexpr uint64_t kMinSize = 64ull << 20;
  if (size < kMinSize) {
    return make_error(ErrorCode::kInvalidArgument, "--size must be at least 64M for an OSD store");
  }
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_empty(dir, ec)) {
    return make_error(ErrorCode::kInvalidArgument,
                      dir + " is not empty: the image is mounted on an empty directory");
  }
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return make_error(ErrorCode::kInvalidArgument,
                        file + " exists (another OSD's store?); remove it or name another file");
    }
    return io_error(file);
  }
  bool sized = ::ftruncate(fd, static_cast<off_t>(size)) == 0;
  ::close(fd);
  auto undo = [&](Error error) -> Status {
    ::unlink(file.c_str());
    return Unexpected{std::move(error)};
  };
  if (!sized) return undo(io_error(file).error);
  // -m 0: no blocks reserved for root, the OSD is the only user; -E nodiscard: the image
  // is sparse already, discarding it only costs time.
  if (auto made = run({"mkfs.ext4", "-q", "-F", "-m", "0", "-E", "nodiscard", "-L", "dfs-osd", file});
      !made) {
    return undo(made.error());
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) return undo(make_error(ErrorCode::kIoError, dir + ": " + ec.message()).error);
  if (auto mounted = run({"mount", "-o", "loop", file, dir}); !mounted) return undo(mounted.error());
  return ok_status();
}

std::string loop_fstab_line(const std::string& file, const std::string& dir) {
  // A local mount: part of local-fs.target, which the OSD unit starts after.
  return file + "  " + dir + "  ext4  loop  0  2";
}

}  // namespace dfs::osd
