#include "osd/store/file_table.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "osd/store/posix_io.h"

namespace dfs::osd {

OpenFile::~OpenFile() { ::close(fd_); }

std::string fid_dir_name(uint64_t fid) {
  char buf[3];
  std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>((fid >> 8) & 0xff));
  return buf;
}

std::string fid_file_name(uint64_t fid) { return std::to_string(fid); }

FileTable::FileTable(std::string objects_dir, size_t capacity)
    : objects_dir_(std::move(objects_dir)), capacity_(capacity == 0 ? 1 : capacity) {}

std::string FileTable::path_of(uint64_t fid) const {
  return objects_dir_ + "/" + fid_dir_name(fid) + "/" + fid_file_name(fid);
}

Result<FileRef> FileTable::open(uint64_t fid) {
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(fid);
    if (it != files_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.lru);
      return it->second.file;
    }
  }
  std::string path = path_of(fid);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return errno_error(errno, "open " + path);
  auto file = std::make_shared<OpenFile>(fd);
  std::lock_guard lock(mu_);
  auto it = files_.find(fid);
  if (it != files_.end()) return it->second.file;  // lost a race; ours closes on return
  insert_locked(fid, file);
  return file;
}

void FileTable::insert(uint64_t fid, FileRef file) {
  std::lock_guard lock(mu_);
  auto it = files_.find(fid);
  if (it != files_.end()) {
    lru_.erase(it->second.lru);
    files_.erase(it);
  }
  insert_locked(fid, std::move(file));
}

void FileTable::insert_locked(uint64_t fid, FileRef file) {
  lru_.push_front(fid);
  files_.emplace(fid, Entry{std::move(file), lru_.begin()});
  while (files_.size() > capacity_) {
    files_.erase(lru_.back());
    lru_.pop_back();
  }
}

Status FileTable::remove(uint64_t fid) {
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(fid);
    if (it != files_.end()) {
      lru_.erase(it->second.lru);
      files_.erase(it);
    }
  }
  std::string path = path_of(fid);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error(errno, "unlink " + path);
  return ok_status();
}

}  // namespace dfs::osd
