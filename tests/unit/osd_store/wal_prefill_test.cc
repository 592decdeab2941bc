// WalPrefillFs: RocksDB writes its WAL over a prefilled file, the file does not grow
// while the log fits, and a copy of the directory taken while the DB is open (what a
// kill -9 leaves: the WAL's records followed by zeros) recovers every synced write.
#include "osd/store/wal_prefill.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "tests/support/temp_dir.h"

namespace dfs::osd::testing {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kPrefill = 1 << 20;

std::string key_of(int i) { return "key" + std::to_string(i); }
std::string value_of(int i) { return std::string(1000, static_cast<char>('a' + i % 26)); }

std::unique_ptr<rocksdb::DB> open(const std::string& path, rocksdb::Env* env) {
  rocksdb::Options o;
  o.create_if_missing = true;
  o.env = env;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(o, path, &raw);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return std::unique_ptr<rocksdb::DB>(raw);
}

void put_synced(rocksdb::DB& db, int first, int count) {
  rocksdb::WriteOptions wo;
  wo.sync = true;
  for (int i = first; i < first + count; ++i) REQUIRE(db.Put(wo, key_of(i), value_of(i)).ok());
}

void check_keys(rocksdb::DB& db, int count) {
  for (int i = 0; i < count; ++i) {
    std::string got;
    rocksdb::Status s = db.Get(rocksdb::ReadOptions(), key_of(i), &got);
    REQUIRE_MESSAGE(s.ok(), key_of(i), ": ", s.ToString());
    REQUIRE(got == value_of(i));
  }
}

// The sizes of the WAL files in `dir`.
std::vector<uint64_t> wal_sizes(const std::string& dir) {
  std::vector<uint64_t> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".log") out.push_back(e.file_size());
  }
  return out;
}

// Opens a copy of the live directory `from` with the default file system.
void check_crash_image(const std::string& from, const std::string& to, int count) {
  fs::remove_all(to);
  fs::copy(from, to, fs::copy_options::recursive);
  fs::remove(to + "/LOCK");
  auto db = open(to, rocksdb::Env::Default());
  check_keys(*db, count);
}

TEST_CASE("osd/store/wal_prefill: the WAL overwrites a prefilled file and recovers after a crash") {
  test::TempDir dir;
  std::string path = dir.path() + "/db";
  fs::create_directories(path);
  auto wal_fs = std::make_shared<WalPrefillFs>(path, kPrefill);
  REQUIRE(wal_fs->prepare().has_value());
  std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(wal_fs);
  auto db = open(path, env.get());
  wal_fs->start();
  CHECK(wal_fs->prefilled_wals() == 1);
  CHECK(wal_fs->plain_wals() == 0);

  put_synced(*db, 0, 200);  // ~200 KB: inside the prefill
  CHECK(wal_sizes(path) == std::vector<uint64_t>{kPrefill});
  check_crash_image(path, dir.path() + "/image1", 200);

  put_synced(*db, 200, 1800);  // ~2 MB in all: past the prefill, appending
  REQUIRE(wal_sizes(path).size() == 1);
  CHECK(wal_sizes(path)[0] > kPrefill);
  check_crash_image(path, dir.path() + "/image2", 2000);

  // The next WAL (after a memtable switch) takes the spare the filler made meanwhile.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!wal_fs->spare_ready() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(wal_fs->spare_ready());
  REQUIRE(db->Flush(rocksdb::FlushOptions()).ok());
  CHECK(wal_fs->prefilled_wals() == 2);
  put_synced(*db, 2000, 100);
  check_crash_image(path, dir.path() + "/image3", 2100);

  db.reset();
  env.reset();
  wal_fs.reset();
  auto again = std::make_shared<WalPrefillFs>(path, kPrefill);
  REQUIRE(again->prepare().has_value());
  std::unique_ptr<rocksdb::Env> env2 = rocksdb::NewCompositeEnv(again);
  auto reopened = open(path, env2.get());
  check_keys(*reopened, 2100);
  CHECK(again->prefilled_wals() == 1);
}

}  // namespace
}  // namespace dfs::osd::testing
