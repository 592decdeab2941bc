// open_dir_store: mkfs (create=true on a directory without a store), the format
// marker, opening RocksDB, then recovery (dir_store_recovery.h) before handing a
// DirStore to the caller.
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <filesystem>

#include "osd/store/dir_store.h"
#include "osd/store/dir_store_recovery.h"
#include "osd/store/posix_io.h"
#include "osd/store/rocks_status.h"
#include "osd/store/wal_prefill.h"

namespace dfs::osd {

namespace {

constexpr std::string_view kFormatMagic = "dfs-osd-dir-store 1\n";
constexpr std::string_view kBlockField = "checksum_block_bytes ";

std::string format_marker_path(const std::string& path) { return path + "/meta/format"; }

// RocksDB's default, named because each WAL is prefilled to about this size.
constexpr uint64_t kWriteBufferBytes = 64 << 20;

rocksdb::Options db_options(bool create, rocksdb::Env* env) {
  rocksdb::Options o;
  o.env = env;
  o.write_buffer_size = kWriteBufferBytes;
  o.create_if_missing = create;
  o.error_if_exists = false;
  o.max_background_jobs = 2;
  o.max_open_files = 256;
  o.keep_log_file_num = 4;
  o.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  return o;
}

Result<std::unique_ptr<rocksdb::DB>> open_db(const std::string& path, bool create,
                                             rocksdb::Env* env) {
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options(create, env), path + "/db", &raw);
  if (!s.ok()) return rocks_error(s, "while opening " + path + "/db");
  return std::unique_ptr<rocksdb::DB>(raw);
}

// Opens the store's DB through a WalPrefillFs (see wal_prefill.h): the first WAL is
// prefilled before the open, the next ones in the background.
Status open_db_prefilled(const DirStoreOptions& options, DirStoreState& state) {
  auto fs = std::make_shared<WalPrefillFs>(options.path + "/db", options.wal_prefill_bytes);
  Status prepared = fs->prepare();
  if (!prepared) return std::move(prepared).error().with_context("while prefilling a WAL");
  state.env = rocksdb::NewCompositeEnv(fs);
  state.db = DFS_TRY(open_db(options.path, /*create=*/false, state.env.get()));
  fs->start();
  return ok_status();
}

Status make_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
    return errno_error(errno, "mkdir " + path);
  return ok_status();
}

Status check_block_bytes(uint32_t bytes) {
  if (bytes >= 512 && bytes <= (1u << 20) && (bytes & (bytes - 1)) == 0) return ok_status();
  return make_error(ErrorCode::kInvalidArgument,
                    "checksum_block_bytes must be a power of two from 512 to 1 MiB");
}

// Lays out an empty store. Idempotent: a crash before the marker is written leaves a
// directory that the next mkfs completes.
Status mkfs(const DirStoreOptions& options) {
  DFS_TRY_STATUS(check_block_bytes(options.checksum_block_bytes));
  std::error_code ec;
  std::filesystem::create_directories(options.path, ec);
  if (ec) return make_error(ErrorCode::kIoError, "mkdir " + options.path + ": " + ec.message());
  std::string objects = options.path + "/objects";
  DFS_TRY_STATUS(make_dir(objects));
  DFS_TRY_STATUS(make_dir(options.path + "/meta"));
  for (uint64_t bucket = 0; bucket < 256; ++bucket) {
    DFS_TRY_STATUS(make_dir(objects + "/" + fid_dir_name(bucket << 8)));
  }
  DFS_TRY_STATUS(fsync_dir(objects));
  DFS_TRY_STATUS(open_db(options.path, /*create=*/true, rocksdb::Env::Default()));
  DFS_TRY_STATUS(fsync_dir(options.path));
  std::string marker = std::string(kFormatMagic) + std::string(kBlockField) +
                       std::to_string(options.checksum_block_bytes) + "\n";
  return write_file_atomic(options.path + "/meta", "format", marker);
}

// Returns the checksum block size recorded at mkfs.
Result<uint32_t> read_format(const std::string& path) {
  Result<std::string> marker = read_small_file(format_marker_path(path));
  if (!marker && marker.error().code() == ErrorCode::kNotFound) {
    return make_error(
        ErrorCode::kNotFound,
        "no dfs object store at " + path + " (meta/format missing; create it with create=true)");
  }
  std::string text = DFS_TRY(std::move(marker));
  std::string_view rest(text);
  if (!rest.starts_with(kFormatMagic)) return make_error(ErrorCode::kCorruption, "bad meta/format");
  rest.remove_prefix(kFormatMagic.size());
  if (!rest.starts_with(kBlockField)) return make_error(ErrorCode::kCorruption, "bad meta/format");
  rest.remove_prefix(kBlockField.size());
  uint32_t bytes = 0;
  std::from_chars(rest.data(), rest.data() + rest.size(), bytes);
  if (!check_block_bytes(bytes))
    return make_error(ErrorCode::kCorruption, "bad block size in meta/format");
  return bytes;
}

bool has_store(const std::string& path) {
  struct stat st {};
  return ::stat(format_marker_path(path).c_str(), &st) == 0;
}

}  // namespace

Result<std::unique_ptr<ObjectStore>> open_dir_store(const DirStoreOptions& options) {
  if (options.create && !has_store(options.path)) {
    Status made = mkfs(options);
    if (!made) return std::move(made).error().with_context("while creating a store");
  }
  DirStoreState state;
  state.block_bytes = DFS_TRY(read_format(options.path));
  DFS_TRY_STATUS(open_db_prefilled(options, state));
  OnodeScan onodes = DFS_TRY(scan_onodes(*state.db));
  std::string objects = options.path + "/objects";
  state.next_seq = DFS_TRY(replay_journal(*state.db, objects, onodes.live_fids));
  uint64_t max_disk_fid = DFS_TRY(remove_orphans(objects, onodes.live_fids));
  state.next_fid = std::max(onodes.max_fid, max_disk_fid) + 1;
  state.object_count = onodes.object_count;
  return std::unique_ptr<ObjectStore>(std::make_unique<DirStore>(options, std::move(state)));
}

}  // namespace dfs::osd
