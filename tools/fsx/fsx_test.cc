#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "checker.h"
#include "file_model.h"
#include "operation.h"

namespace dfs::fsx {

TEST_CASE("fsx/pattern: never zero, and the writer is recovered from byte and offset") {
  for (uint64_t op = 0; op < 600; op += 7) {
    for (uint64_t offset = 0; offset < 3000; offset += 13) {
      uint8_t byte = pattern_byte(op, offset);
      CHECK(byte != 0);
      auto writer = writer_of(byte, offset);
      REQUIRE(writer.has_value());
      CHECK(*writer == op % 251);
    }
  }
  CHECK_FALSE(writer_of(0, 5).has_value());
}

TEST_CASE("fsx/model: a truncated range that grows again reads as zeros") {
  FileModel model;
  model.write(1, 0, 100);
  model.truncate(40);
  model.truncate(80);
  CHECK(model.size() == 80);
  CHECK(model.bytes().substr(40) == std::string(40, '\0'));
  CHECK(model.first_mismatch(0, model.bytes()) == std::nullopt);
  std::string stale = model.bytes();
  stale[50] = static_cast<char>(pattern_byte(1, 50));
  CHECK(model.first_mismatch(0, stale) == 50);
}

TEST_CASE("fsx/operation: the text form parses back to the same operation") {
  for (Operation op : {Operation{OpKind::kRead, 0x10, 0x20}, Operation{OpKind::kMapWrite, 7, 9},
                       Operation{OpKind::kTruncate, 0x29540, 0}, Operation{OpKind::kFsync},
                       Operation{OpKind::kReopen}}) {
    std::string error;
    auto parsed = parse_operation(describe(op), &error);
    REQUIRE_MESSAGE(parsed.has_value(), error);
    CHECK(*parsed == op);
  }
  std::string error;
  CHECK_FALSE(parse_operation("write 0x10", &error).has_value());
  CHECK(error.find("2 numbers") != std::string::npos);
  CHECK_FALSE(parse_operation("scribble 1 2", &error).has_value());
  CHECK_FALSE(parse_operation("read 1 zz", &error).has_value());
}

TEST_CASE("fsx/generator: a seed gives the same operations, within bounds and aligned") {
  for (Mode mode : {Mode::kBuffered, Mode::kMmap, Mode::kDirect}) {
    GeneratorConfig config{mode, 256 * 1024, 64 * 1024, 4096};
    OpGenerator a(42, config), b(42, config), c(43, config);
    FileModel model;
    bool differs = false;
    for (uint64_t i = 1; i <= 5000; ++i) {
      Operation op = a.next(model.size());
      CHECK(op == b.next(model.size()));
      differs |= !(op == c.next(model.size()));
      if (op.kind == OpKind::kRead || op.kind == OpKind::kMapRead) {
        if (mode != Mode::kDirect) CHECK(op.offset + op.length <= model.size());
      }
      if (mode == Mode::kDirect && op.kind != OpKind::kTruncate) {
        CHECK(op.offset % 4096 == 0);
        CHECK(op.length % 4096 == 0);
      }
      if (mode != Mode::kMmap) CHECK((op.kind != OpKind::kMapRead && op.kind != OpKind::kMapWrite));
      if (op.kind == OpKind::kWrite || op.kind == OpKind::kMapWrite) model.write(i, op.offset, op.length);
      if (op.kind == OpKind::kTruncate) model.truncate(op.offset);
      CHECK(model.size() <= config.max_size + 4096);
    }
    CHECK(differs);
  }
}

// The checker against a local temporary file: every mode runs clean, and a byte changed
// behind its back is reported with the offset.
TEST_CASE("fsx/checker: clean on a local file, and a stale byte is caught") {
  char dir_template[] = "/tmp/fsx-test.XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  std::string path = std::string(dir_template) + "/file";
  for (Mode mode : {Mode::kBuffered, Mode::kMmap}) {
    FileChecker checker(path, mode, 4096);
    REQUIRE_MESSAGE(checker.ready(), checker.error());
    OpGenerator generator(7, GeneratorConfig{mode, 64 * 1024, 8 * 1024, 4096});
    for (uint64_t i = 1; i <= 2000; ++i) {
      REQUIRE_MESSAGE(checker.apply(i, generator.next(checker.size())), checker.error());
    }
    CHECK(checker.verify_all(2001));
  }
  {
    FileChecker checker(path, Mode::kBuffered, 4096);
    REQUIRE(checker.apply(1, Operation{OpKind::kWrite, 0, 8192}));
    REQUIRE(checker.apply(2, Operation{OpKind::kTruncate, 1000, 0}));
    REQUIRE(checker.apply(3, Operation{OpKind::kTruncate, 8192, 0}));
    // Someone else puts old bytes back where zeros belong.
    int fd = ::open(path.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    char stale = static_cast<char>(pattern_byte(1, 5000));
    REQUIRE(::pwrite(fd, &stale, 1, 5000) == 1);
    ::close(fd);
    CHECK_FALSE(checker.apply(4, Operation{OpKind::kRead, 0, 8192}));
    CHECK(checker.error().find("0x1388") != std::string::npos);
    CHECK(checker.error().find("numbered 1 ") != std::string::npos);
  }
  std::system(("rm -rf " + std::string(dir_template)).c_str());
}

}  // namespace dfs::fsx
