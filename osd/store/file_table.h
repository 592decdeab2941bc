// FileTable: the dir store's data files by file id, and a bounded LRU cache of open
// descriptors. A descriptor stays valid while any caller holds its FileRef, even after
// eviction. Thread-safe (one internal mutex, never held across I/O).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/status/status.h"

namespace dfs::osd {

// An open data file; closes its descriptor when the last reference goes.
class OpenFile {
 public:
  explicit OpenFile(int fd) : fd_(fd) {}
  ~OpenFile();
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int fd() const { return fd_; }

 private:
  int fd_;
};

using FileRef = std::shared_ptr<OpenFile>;

// "objects/<2 hex digits>/<fid>" relative to the store: the directory is
// (fid >> 8) & 0xff so that a batch of consecutive ids shares one directory.
std::string fid_dir_name(uint64_t fid);
std::string fid_file_name(uint64_t fid);

class FileTable {
 public:
  FileTable(std::string objects_dir, size_t capacity);

  const std::string& objects_dir() const { return objects_dir_; }
  std::string path_of(uint64_t fid) const;

  // Opens an existing data file (cached). Errors: kNotFound, kIoError.
  Result<FileRef> open(uint64_t fid);
  // Caches a file opened elsewhere (a freshly created one).
  void insert(uint64_t fid, FileRef file);
  // Drops the cached descriptor and unlinks the file; a missing file is not an error.
  Status remove(uint64_t fid);

 private:
  struct Entry {
    FileRef file;
    std::list<uint64_t>::iterator lru;
  };
  void insert_locked(uint64_t fid, FileRef file);

  const std::string objects_dir_;
  const size_t capacity_;
  std::mutex mu_;
  std::list<uint64_t> lru_;                    // guarded by mu_; most recent first
  std::unordered_map<uint64_t, Entry> files_;  // guarded by mu_
};

}  // namespace dfs::osd
