#include "osd/store/dir_store_recovery.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <memory>
#include <unordered_map>

#include "osd/store/file_op.h"
#include "osd/store/file_table.h"
#include "osd/store/journal_record.h"
#include "osd/store/onode.h"
#include "osd/store/posix_io.h"
#include "osd/store/rocks_status.h"
#include "osd/store/store_keys.h"

namespace dfs::osd {

namespace {

std::unique_ptr<rocksdb::Iterator> scan(rocksdb::DB& db, char space, std::string& upper_buf,
                                        rocksdb::Slice& upper) {
  upper_buf = std::string(1, static_cast<char>(space + 1));
  upper = rocksdb::Slice(upper_buf);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(ro));
  it->Seek(std::string(1, space));
  return it;
}

// Deletes `path` when it names a data file not in `live`; tracks the largest id.
Status check_file(const std::string& dir, const char* name,
                  const std::unordered_set<uint64_t>& live, uint64_t& max_fid) {
  uint64_t fid = 0;
  const char* end = name + std::char_traits<char>::length(name);
  auto [ptr, ec] = std::from_chars(name, end, fid);
  if (ec != std::errc() || ptr != end) return ok_status();
  max_fid = std::max(max_fid, fid);
  if (live.count(fid) != 0) return ok_status();
  std::string path = dir + "/" + name;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error(errno, "unlink " + path);
  return ok_status();
}

}  // namespace

Result<OnodeScan> scan_onodes(rocksdb::DB& db) {
  OnodeScan out;
  std::string upper_buf;
  rocksdb::Slice upper;
  auto it = scan(db, store_keys::kOnode, upper_buf, upper);
  for (; it->Valid(); it->Next()) {
    Onode onode = DFS_TRY(decode_onode(it->value().ToStringView()));
    out.live_fids.insert(onode.fid);
    out.max_fid = std::max(out.max_fid, onode.fid);
    out.object_count += 1;
  }
  DFS_TRY_STATUS(rocks_status(it->status(), "while scanning onodes"));
  return out;
}

Result<uint64_t> replay_journal(rocksdb::DB& db, const std::string& objects_dir,
                                const std::unordered_set<uint64_t>& live_fids) {
  FileTable files(objects_dir, 64);
  std::unordered_map<uint64_t, FileRef> touched;
  rocksdb::WriteBatch done;
  uint64_t next_seq = 1;
  std::string upper_buf;
  rocksdb::Slice upper;
  auto it = scan(db, store_keys::kJournal, upper_buf, upper);
  for (; it->Valid(); it->Next()) {
    next_seq = store_keys::journal_seq(it->key().ToStringView()) + 1;
    DFS_TRY_STATUS(rocks_status(done.Delete(it->key()), "batch"));
    JournalRecord record = DFS_TRY(decode_journal_record(it->value().ToStringView()));
    // A record of a file no onode references belongs to an object removed or rewritten
    // into a new file since: nothing of it can be visible.
    if (live_fids.count(record.fid) == 0) continue;
    Result<FileRef> file = files.open(record.fid);
    if (!file && file.error().code() == ErrorCode::kNotFound) {
      // Not kNotFound: that would read as "no store here" to open_dir_store's caller.
      return make_error(ErrorCode::kCorruption, "journal names a live data file that is missing: " +
                                                    files.path_of(record.fid));
    }
    if (!file) return std::move(file).error().with_context("while replaying the journal");
    DFS_TRY_STATUS(apply_file_ops((*file)->fd(), record.start_size, record.ops));
    touched.emplace(record.fid, *file);
  }
  DFS_TRY_STATUS(rocks_status(it->status(), "while reading the journal"));
  for (const auto& [fid, file] : touched) DFS_TRY_STATUS(fdatasync_fd(file->fd()));
  rocksdb::WriteOptions wo;
  wo.sync = true;
  DFS_TRY_STATUS(rocks_status(db.Write(wo, &done), "while trimming the replayed journal"));
  return next_seq;
}

Result<uint64_t> remove_orphans(const std::string& objects_dir,
                                const std::unordered_set<uint64_t>& live_fids) {
  uint64_t max_fid = 0;
  for (uint64_t bucket = 0; bucket < 256; ++bucket) {
    std::string dir = objects_dir + "/" + fid_dir_name(bucket << 8);
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d) return errno_error(errno, "opendir " + dir);
    errno = 0;
    while (struct dirent* entry = ::readdir(d.get())) {
      DFS_TRY_STATUS(check_file(dir, entry->d_name, live_fids, max_fid));
      errno = 0;
    }
    if (errno != 0) return errno_error(errno, "readdir " + dir);
  }
  return max_fid;
}

}  // namespace dfs::osd
