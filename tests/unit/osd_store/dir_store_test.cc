// Dir-backend behaviour beyond the shared contract: opening, checksums on disk, journal
// replay, orphan cleanup, space and sync failures, trimming.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/unit/osd_store/store_fixtures.h"

namespace dfs::osd::testing {
namespace {

namespace fs = std::filesystem;

// Every data file under the store, with its size.
std::vector<std::pair<std::string, uint64_t>> data_files(const std::string& store_path) {
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const auto& entry : fs::recursive_directory_iterator(store_path + "/objects")) {
    if (entry.is_regular_file()) out.emplace_back(entry.path().string(), entry.file_size());
  }
  return out;
}

// The one non-empty data file (pool files are empty).
std::string only_nonempty_file(const std::string& store_path) {
  std::string found;
  for (const auto& [path, size] : data_files(store_path)) {
    if (size == 0) continue;
    REQUIRE_MESSAGE(found.empty(), "more than one non-empty data file");
    found = path;
  }
  REQUIRE(!found.empty());
  return found;
}

// The data file whose content is exactly `content`.
std::string file_holding(const std::string& store_path, const std::string& content) {
  for (const auto& [path, size] : data_files(store_path)) {
    if (size != content.size()) continue;
    std::ifstream in(path, std::ios::binary);
    std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (got == content) return path;
  }
  FAIL("no data file holds the content");
  return {};
}

void flip_byte(const std::string& path, uint64_t offset) {
  int fd = ::open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  char c = 0;
  REQUIRE(::pread(fd, &c, 1, static_cast<off_t>(offset)) == 1);
  c = static_cast<char>(c ^ 0x40);
  REQUIRE(::pwrite(fd, &c, 1, static_cast<off_t>(offset)) == 1);
  ::close(fd);
}

Result<std::unique_ptr<ObjectStore>> open_at(const std::string& path, bool create = false) {
  DirStoreOptions o;
  o.path = path;
  o.create = create;
  return open_dir_store(o);
}

TEST_CASE("osd/store/dir: opening where no store exists is kNotFound") {
  TempDir dir;
  auto missing = open_at(dir.path() + "/nothing-here");
  REQUIRE(!missing.has_value());
  CHECK(missing.error().code() == ErrorCode::kNotFound);
  CHECK(missing.error().context().find("meta/format") != std::string::npos);
  auto empty = open_at(dir.path());
  REQUIRE(!empty.has_value());
  CHECK(empty.error().code() == ErrorCode::kNotFound);

  DirStoreOptions bad;
  bad.path = dir.path() + "/bad";
  bad.create = true;
  bad.checksum_block_bytes = 1000;
  CHECK(open_dir_store(bad).error().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("osd/store/dir: create on an existing store opens it unchanged") {
  DirBackend b;
  Transaction t;
  t.write(okey("x"), 0, "kept");
  apply_ok(*b.store, std::move(t));
  b.reopen(/*create=*/true);
  CHECK(read_ok(*b.store, okey("x")) == "kept");
}

TEST_CASE("osd/store/dir: a flipped byte on disk reads as kCorruption") {
  DirBackend b;
  std::string data = pattern(20000, 21);
  Transaction t;
  t.write(okey("c"), 0, data);
  apply_ok(*b.store, std::move(t));
  std::string file = only_nonempty_file(b.dir.path());
  flip_byte(file, 5000);  // block 1

  ObjectStore& s = *b.store;
  CHECK(s.read(okey("c"), 0, 20000).error().code() == ErrorCode::kCorruption);
  CHECK(s.read(okey("c"), 4100, 10).error().code() == ErrorCode::kCorruption);
  CHECK(read_ok(s, okey("c"), 0, 4096) == data.substr(0, 4096));
  CHECK(read_ok(s, okey("c"), 8192, 100) == data.substr(8192, 100));
  // A partial write needs the rest of the bad block: refused, nothing applied.
  Transaction partial;
  partial.write(okey("c"), 4100, "xx");
  CHECK(s.apply(std::move(partial)).error().code() == ErrorCode::kCorruption);
  // Rewriting the whole block repairs it.
  Transaction repair;
  repair.write(okey("c"), 4096, data.substr(4096, 4096));
  apply_ok(s, std::move(repair));
  CHECK(read_ok(s, okey("c")) == data);
  b.reopen();
  CHECK(read_ok(*b.store, okey("c")) == data);
}

TEST_CASE("osd/store/dir: bytes past the object's size in its file are never data") {
  DirBackend b;
  Transaction t;
  t.write(okey("s"), 0, "short");
  apply_ok(*b.store, std::move(t));
  std::string file = only_nonempty_file(b.dir.path());
  {
    std::ofstream out(file, std::ios::app | std::ios::binary);
    out << "GARBAGE-FROM-AN-UNCOMMITTED-WRITE";
  }
  CHECK(read_ok(*b.store, okey("s")) == "short");
  Transaction grow;
  grow.truncate(okey("s"), 4000);
  apply_ok(*b.store, std::move(grow));
  CHECK(read_ok(*b.store, okey("s")) == "short" + std::string(3995, '\0'));
}

TEST_CASE("osd/store/dir: the journal is replayed after a crash between commit and file I/O") {
  DirBackend b;
  ObjectStore* s = b.store.get();
  Transaction setup;
  setup.write(okey("over"), 0, pattern(30000, 22));
  setup.write(okey("cut"), 0, pattern(30000, 23));
  setup.write(okey("gone"), 0, pattern(3000, 24));
  apply_ok(*s, std::move(setup));
  std::string gone_file = file_holding(b.dir.path(), pattern(3000, 24));

  auto hooks = std::make_shared<DirStoreTestHooks>();
  hooks->skip_post_commit_io = true;
  DirStoreOptions o = b.options();
  o.test_hooks = hooks;
  b.store.reset();
  auto hooked = open_dir_store(o);
  REQUIRE(hooked.has_value());
  Transaction t;
  t.write(okey("new"), 100, "fresh object");
  t.write(okey("over"), 1000, "overwritten");
  t.truncate(okey("cut"), 10);
  t.truncate(okey("cut"), 5000);
  t.remove(okey("gone"));
  t.put_meta("m", "v");
  apply_ok(**hooked, std::move(t));
  hooked->reset();  // "crash": the files never saw the transaction

  b.reopen();
  ObjectStore& r = *b.store;
  CHECK(read_ok(r, okey("new")) == std::string(100, '\0') + "fresh object");
  std::string over = pattern(30000, 22);
  over.replace(1000, 11, "overwritten");
  CHECK(read_ok(r, okey("over")) == over);
  CHECK(read_ok(r, okey("cut")) == pattern(30000, 23).substr(0, 10) + std::string(4990, '\0'));
  CHECK(r.stat(okey("gone")).error().code() == ErrorCode::kNotFound);
  CHECK(r.get_meta("m")->value() == "v");
  // The removed object's file was unlinked as an orphan at open.
  CHECK(!fs::exists(gone_file));
}

TEST_CASE("osd/store/dir: orphan data files are deleted at open") {
  DirBackend b;
  Transaction t;
  t.write(okey("live"), 0, pattern(100000, 25));
  apply_ok(*b.store, std::move(t));
  b.store.reset();
  std::string objects = b.dir.path() + "/objects";
  std::ofstream(objects + "/00/999999") << "orphan";
  std::ofstream(objects + "/ab/43776") << "orphan";
  std::ofstream(objects + "/00/README") << "not a data file";
  b.reopen();
  CHECK(!fs::exists(objects + "/00/999999"));
  CHECK(!fs::exists(objects + "/ab/43776"));
  CHECK(fs::exists(objects + "/00/README"));
  CHECK(read_ok(*b.store, okey("live")) == pattern(100000, 25));
  // New ids start past every id seen on disk.
  Transaction more;
  more.write(okey("more"), 0, pattern(100000, 26));
  apply_ok(*b.store, std::move(more));
  CHECK(read_ok(*b.store, okey("more")) == pattern(100000, 26));
}

TEST_CASE("osd/store/dir: too little free space is kNoSpace with nothing applied") {
  DirBackend b;
  Transaction t;
  t.write(okey("a"), 0, "before");
  apply_ok(*b.store, std::move(t));
  b.store.reset();
  DirStoreOptions o = b.options();
  o.reserve_bytes = uint64_t{1} << 62;
  auto full = open_dir_store(o);
  REQUIRE(full.has_value());
  Transaction t2;
  t2.write(okey("a"), 0, "after!");
  t2.write(okey("b"), 0, "b");
  Status st = (*full)->apply(std::move(t2));
  REQUIRE(!st.has_value());
  CHECK(st.error().code() == ErrorCode::kNoSpace);
  CHECK(read_ok(**full, okey("a")) == "before");
  full->reset();
  b.reopen();
  CHECK(read_ok(*b.store, okey("a")) == "before");
  CHECK(b.store->stat(okey("b")).error().code() == ErrorCode::kNotFound);
}

TEST_CASE("osd/store/dir: a failed sync makes the store read-only until reopened") {
  DirBackend b;
  auto hooks = std::make_shared<DirStoreTestHooks>();
  DirStoreOptions o = b.options();
  o.test_hooks = hooks;
  b.store.reset();
  auto opened = open_dir_store(o);
  REQUIRE(opened.has_value());
  ObjectStore& s = **opened;
  Transaction first;
  first.write(okey("a"), 0, "small");
  apply_ok(s, std::move(first));

  hooks->fail_syncs = true;
  Transaction big;
  big.write(okey("a"), 5, pattern(200000, 27));  // an append: written and synced directly
  Status st = s.apply(std::move(big));
  REQUIRE(!st.has_value());
  CHECK(st.error().code() == ErrorCode::kIoError);
  hooks->fail_syncs = false;
  Transaction later;
  later.write(okey("b"), 0, "x");
  CHECK(s.apply(std::move(later)).error().code() == ErrorCode::kReadOnly);
  CHECK(read_ok(s, okey("a")) == "small");  // reads still work

  opened->reset();
  b.reopen();
  CHECK(read_ok(*b.store, okey("a")) == "small");
  Transaction again;
  again.write(okey("b"), 0, "x");
  apply_ok(*b.store, std::move(again));
}

TEST_CASE("osd/store/dir: journal trimming keeps every overwrite") {
  TempDir dir;
  DirStoreOptions o;
  o.path = dir.path();
  o.create = true;
  o.journal_trim_records = 4;
  auto opened = open_dir_store(o);
  REQUIRE(opened.has_value());
  std::vector<std::string> model(3, std::string(50000, '\0'));
  for (int i = 0; i < 3; ++i) {
    Transaction t;
    t.truncate(okey("j" + std::to_string(i)), 50000);
    apply_ok(**opened, std::move(t));
  }
  for (int n = 0; n < 150; ++n) {
    int i = n % 3;
    uint64_t off = (n * 7919) % 45000;
    std::string data = pattern(1 + n * 31 % 4000, 100 + n);
    model[i].replace(off, data.size(), data);
    Transaction t;
    t.write(okey("j" + std::to_string(i)), off, data);
    apply_ok(**opened, std::move(t));
  }
  for (int i = 0; i < 3; ++i) CHECK(read_ok(**opened, okey("j" + std::to_string(i))) == model[i]);
  opened->reset();
  o.create = false;
  auto reopened = open_dir_store(o);
  REQUIRE(reopened.has_value());
  for (int i = 0; i < 3; ++i) {
    CHECK(read_ok(**reopened, okey("j" + std::to_string(i))) == model[i]);
  }
}

}  // namespace
}  // namespace dfs::osd::testing
