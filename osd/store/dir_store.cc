// DirStore: construction, the read side (read, stat, list, metadata, usage) and the
// helpers shared with apply. apply() is in dir_store_apply.cc, the journal trimmer in
// dir_store_trim.cc, open and recovery in dir_store_open.cc / dir_store_recovery.cc.
#include "osd/store/dir_store.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "common/util/crc32c.h"
#include "osd/store/posix_io.h"
#include "osd/store/rocks_status.h"
#include "osd/store/store_keys.h"

namespace dfs::osd {
namespace {

// A store whose device cannot be named counts as a disk of its own: the cluster's
// capacity may then count a shared disk twice, but never loses one.
StoreDevice device_or_unknown(const std::string& path) {
  auto device = store_device_of(path);
  return device ? *std::move(device) : StoreDevice{};
}

}  // namespace

DirStore::DirStore(const DirStoreOptions& options, DirStoreState state)
    : options_(options),
      block_bytes_(state.block_bytes),
      env_(std::move(state.env)),
      db_(std::move(state.db)),
      files_(options.path + "/objects", options.max_open_files),
      pool_(files_, state.next_fid),
      next_seq_(state.next_seq),
      object_count_(state.object_count),
      device_(device_or_unknown(options.path)) {
  trimmer_ = std::thread([this] { trim_loop(); });
}

DirStore::~DirStore() {
  {
    std::lock_guard lock(trim_mu_);
    stopping_ = true;
  }
  trim_cv_.notify_all();
  trimmer_.join();
  // A clean shutdown leaves no journal to replay; a failed trim is replayed at open.
  if (!read_only_.load() && !hook(&DirStoreTestHooks::skip_post_commit_io)) {
    ignore_error(trim_journal(), "the next open replays whatever is left");
  }
  ignore_error(rocks_status(db_->Close(), "close"), "closing; nothing left to do");
}

bool DirStore::hook(std::atomic<bool> DirStoreTestHooks::*flag) const {
  return options_.test_hooks && (options_.test_hooks.get()->*flag).load();
}

Error DirStore::go_read_only(Error error) {
  read_only_.store(true);
  return std::move(error).with_context("store is now read-only");
}

Status DirStore::sync_file(const FileRef& file) {
  if (hook(&DirStoreTestHooks::fail_syncs)) {
    return go_read_only(Error(ErrorCode::kIoError, "fdatasync: injected failure"));
  }
  Status st = fdatasync_fd(file->fd());
  if (!st) return go_read_only(std::move(st).error());
  return st;
}

Result<FileRef> DirStore::open_data_file(uint64_t fid) {
  Result<FileRef> file = files_.open(fid);
  if (file || file.error().code() != ErrorCode::kNotFound) return file;
  return make_error(ErrorCode::kCorruption, "data file missing: " + files_.path_of(fid));
}

Result<std::optional<Onode>> DirStore::load_onode(const ObjectKey& key) {
  rocksdb::PinnableSlice value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), db_->DefaultColumnFamily(),
                               store_keys::onode_key(key), &value);
  if (s.IsNotFound()) return std::optional<Onode>();
  if (!s.ok()) return rocks_error(s, "while reading the onode of " + key.name);
  Onode onode = DFS_TRY(decode_onode(value.ToStringView()));
  if (onode.crcs.size() != (onode.size + block_bytes_ - 1) / block_bytes_) {
    return make_error(ErrorCode::kCorruption, "onode checksum count mismatch: " + key.name);
  }
  return std::optional<Onode>(std::move(onode));
}

Status DirStore::verify_blocks(const Onode& onode, uint64_t first, std::string_view blocks) {
  for (uint64_t i = 0; i * block_bytes_ < blocks.size(); ++i) {
    uint32_t crc = crc32c(0, blocks.data() + i * block_bytes_, block_bytes_);
    if (crc != onode.crcs[first + i]) {
      return make_error(ErrorCode::kCorruption, "checksum mismatch in block " +
                                                    std::to_string(first + i) + " of " +
                                                    files_.path_of(onode.fid));
    }
  }
  return ok_status();
}

// Reads whole checksum blocks [first, first + count) of an object's logical content
// (zeros past its size or the file's end) and verifies them.
Result<std::string> DirStore::read_blocks(const Onode& onode, uint64_t first, uint64_t count) {
  std::string buf(count * block_bytes_, '\0');
  uint64_t offset = first * block_bytes_;
  Result<FileRef> file = files_.open(onode.fid);
  size_t got = 0;
  if (file) {
    got = DFS_TRY(pread_full((*file)->fd(), buf.data(), buf.size(), offset));
  } else if (file.error().code() != ErrorCode::kNotFound) {
    return std::move(file).error();
  }
  // Bytes past the object's size may be leftovers of an uncommitted write: never data.
  uint64_t valid = onode.size > offset ? std::min<uint64_t>(onode.size - offset, got) : 0;
  std::memset(buf.data() + valid, 0, buf.size() - valid);
  DFS_TRY_STATUS(verify_blocks(onode, first, buf));
  return buf;
}

Result<std::string> DirStore::read(const ObjectKey& key, uint64_t offset, uint64_t length) {
  auto lock = locks_.lock_shared(key);
  std::optional<Onode> onode = DFS_TRY(load_onode(key));
  if (!onode) return make_error(ErrorCode::kNotFound, "no such object: " + key.name);
  if (offset >= onode->size || length == 0) return std::string();
  uint64_t end = offset + std::min(length, onode->size - offset);
  uint64_t first = offset / block_bytes_;
  uint64_t last = (end - 1) / block_bytes_;
  std::string data = DFS_TRY(read_blocks(*onode, first, last - first + 1));
  uint64_t skip = offset - first * block_bytes_;
  if (skip != 0) data.erase(0, skip);
  data.resize(end - offset);
  return data;
}

Result<ObjectInfo> DirStore::stat(const ObjectKey& key) {
  auto lock = locks_.lock_shared(key);
  std::optional<Onode> onode = DFS_TRY(load_onode(key));
  if (!onode) return make_error(ErrorCode::kNotFound, "no such object: " + key.name);
  return ObjectInfo{onode->size, onode->version};
}

Result<std::vector<std::pair<std::string, ObjectInfo>>> DirStore::list(uint32_t pool, uint32_t pg) {
  std::string prefix = store_keys::onode_prefix(pool, pg);
  std::string end = *store_keys::prefix_end(prefix);  // prefix starts with 'O'
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  std::vector<std::pair<std::string, ObjectInfo>> out;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    ObjectInfo info = DFS_TRY(decode_onode_info(it->value().ToStringView()));
    out.emplace_back(std::string(store_keys::onode_name(it->key().ToStringView())), info);
  }
  DFS_TRY_STATUS(rocks_status(it->status(), "while listing a placement group"));
  return out;
}

Result<std::optional<std::string>> DirStore::get_meta(const std::string& key) {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), store_keys::meta_key(key), &value);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return rocks_error(s, "while reading metadata " + key);
  return std::optional<std::string>(std::move(value));
}

Result<std::vector<std::pair<std::string, std::string>>> DirStore::scan_meta(
    const std::string& prefix) {
  std::string start = store_keys::meta_key(prefix);
  std::string end = *store_keys::prefix_end(start);  // start begins with 'M'
  rocksdb::Slice upper(end);
  rocksdb::ReadOptions ro;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  std::vector<std::pair<std::string, std::string>> out;
  for (it->Seek(start); it->Valid(); it->Next()) {
    out.emplace_back(std::string(store_keys::meta_user_key(it->key().ToStringView())),
                     it->value().ToString());
  }
  DFS_TRY_STATUS(rocks_status(it->status(), "while scanning metadata"));
  return out;
}

Result<StoreUsage> DirStore::usage() {
  struct statvfs fs {};
  if (::statvfs(options_.path.c_str(), &fs) != 0) return errno_error(errno, "statvfs");
  StoreUsage out;
  out.total_bytes = uint64_t{fs.f_blocks} * fs.f_frsize;
  out.used_bytes = uint64_t{fs.f_blocks - fs.f_bfree} * fs.f_frsize;
  out.available_bytes = uint64_t{fs.f_bavail} * fs.f_frsize;
  out.object_count = object_count_.load();
  out.device = device_;
  return out;
}

}  // namespace dfs::osd
