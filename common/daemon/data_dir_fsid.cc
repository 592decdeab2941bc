#include "common/daemon/data_dir_fsid.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

namespace dfs {
namespace {

std::string fsid_path(const std::string& dir) { return dir + "/fsid"; }

Error io_error(const std::string& what, const std::string& path) {
  return Error(ErrorCode::kIoError, what + " " + path + ": " + std::strerror(errno));
}

// The fsid recorded in `dir`, or nullopt when there is no file.
Result<std::optional<std::string>> read_recorded(const std::string& dir) {
  const std::string path = fsid_path(dir);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return unexpected(io_error("reading", path));
  }
  std::ifstream in(path);
  if (!in) return unexpected(io_error("reading", path));
  std::string fsid;
  in >> fsid;  // one word; the line's end and any trailing space do not count
  return std::optional<std::string>(fsid);
}

Status sync_and_close(int fd, const std::string& path) {
  bool ok = ::fsync(fd) == 0;
  Error error = io_error("syncing", path);
  ::close(fd);
  if (!ok) return unexpected(std::move(error));
  return ok_status();
}

// Replaces the file atomically: a crash leaves the old file or the new one, whole.
Status write_recorded(const std::string& dir, const std::string& fsid) {
  const std::string path = fsid_path(dir);
  const std::string temp = path + ".new";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return unexpected(io_error("creating", temp));
  const std::string line = fsid + "\n";
  if (::write(fd, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    Error error = io_error("writing", temp);
    ::close(fd);
    return unexpected(std::move(error));
  }
  DFS_TRY_STATUS(sync_and_close(fd, temp));
  if (::rename(temp.c_str(), path.c_str()) != 0) return unexpected(io_error("renaming", temp));
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return unexpected(io_error("opening", dir));
  return sync_and_close(dir_fd, dir);
}

Error made_for_another(const std::string& dir, const std::string& recorded,
                       const std::string& fsid) {
  return Error(ErrorCode::kWrongCluster, dir + " was made for cluster " + recorded +
                                             ", but dfs.conf names cluster " + fsid);
}

}  // namespace

Status record_data_dir_fsid(const std::string& dir, const std::string& fsid) {
  auto recorded = DFS_TRY(read_recorded(dir));
  if (recorded && *recorded == fsid) return ok_status();
  if (recorded) return unexpected(made_for_another(dir, *recorded, fsid));
  return write_recorded(dir, fsid);
}

Status check_data_dir_fsid(const std::string& dir, const std::string& fsid) {
  auto recorded = DFS_TRY(read_recorded(dir));
  if (recorded && *recorded == fsid) return ok_status();
  if (recorded) return unexpected(made_for_another(dir, *recorded, fsid));
  spdlog::warn("{} records no cluster fsid (made by an older version): adopting it for cluster {}",
               dir, fsid);
  return write_recorded(dir, fsid);
}

}  // namespace dfs
