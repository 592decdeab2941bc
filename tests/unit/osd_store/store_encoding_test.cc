// Encodings of the dir store's RocksDB keys and values (osd/store/FORMAT.md).
#include <doctest/doctest.h>
#include <rocksdb/write_batch.h>

#include "osd/store/journal_record.h"
#include "osd/store/onode.h"
#include "osd/store/store_keys.h"

namespace dfs::osd {
namespace {

TEST_CASE("osd/store: onodes round-trip and reject damaged values") {
  Onode onode;
  onode.size = 9000;
  onode.version = {3, 77};
  onode.fid = 4242;
  onode.crcs = {1, 2, 0xffffffff};
  std::string value = encode_onode(onode);
  Result<Onode> back = decode_onode(value);
  REQUIRE(back.has_value());
  CHECK(back->size == 9000);
  CHECK(back->version == ObjectVersion{3, 77});
  CHECK(back->fid == 4242);
  CHECK(back->crcs == onode.crcs);
  CHECK(decode_onode_info(value)->size == 9000);

  CHECK(decode_onode(value.substr(0, value.size() - 1)).error().code() == ErrorCode::kCorruption);
  CHECK(decode_onode(value + "x").error().code() == ErrorCode::kCorruption);
  std::string bad_format = value;
  bad_format[0] = 9;
  CHECK(decode_onode(bad_format).error().code() == ErrorCode::kCorruption);
  CHECK(decode_onode("").error().code() == ErrorCode::kCorruption);
}

// Pulls the one Put out of a batch.
struct PutCapture : rocksdb::WriteBatch::Handler {
  std::string key;
  std::string value;
  rocksdb::Status PutCF(uint32_t, const rocksdb::Slice& k, const rocksdb::Slice& v) override {
    key = k.ToString();
    value = v.ToString();
    return rocksdb::Status::OK();
  }
};

TEST_CASE("osd/store: journal records round-trip and reject damaged values") {
  std::string payload = "payload bytes";
  std::vector<FileOp> ops = {{FileOp::Kind::kTruncate, 10, {}},
                             {FileOp::Kind::kWrite, 20, payload},
                             {FileOp::Kind::kWrite, 99, {}}};
  rocksdb::WriteBatch batch;
  REQUIRE(put_journal_record(batch, 7, 1234, 5000, ops).has_value());
  PutCapture put;
  REQUIRE(batch.Iterate(&put).ok());
  CHECK(put.key == store_keys::journal_key(7));
  CHECK(store_keys::journal_seq(put.key) == 7);

  Result<JournalRecord> record = decode_journal_record(put.value);
  REQUIRE(record.has_value());
  CHECK(record->fid == 1234);
  CHECK(record->start_size == 5000);
  REQUIRE(record->ops.size() == 3);
  CHECK(record->ops[0].kind == FileOp::Kind::kTruncate);
  CHECK(record->ops[0].offset == 10);
  CHECK(record->ops[1].offset == 20);
  CHECK(record->ops[1].data == payload);
  CHECK(record->ops[2].data.empty());

  for (size_t cut = 0; cut < put.value.size(); cut += 3) {
    CHECK(!decode_journal_record(put.value.substr(0, cut)).has_value());
  }
  std::string bad_kind = put.value;
  bad_kind[1 + 8 + 8 + 4] = 7;
  CHECK(decode_journal_record(bad_kind).error().code() == ErrorCode::kCorruption);
}

TEST_CASE("osd/store: keys sort by pool, pg, then name") {
  using store_keys::onode_key;
  CHECK(onode_key({1, 2, "b"}) < onode_key({1, 3, "a"}));
  CHECK(onode_key({1, 255, "z"}) < onode_key({1, 256, "a"}));
  CHECK(onode_key({1, 2, "a"}) < onode_key({1, 2, "ab"}));
  CHECK(onode_key({0xffffffff, 0, ""}) > onode_key({1, 0xffffffff, "zzz"}));
  CHECK(store_keys::journal_key(255) < store_keys::journal_key(256));
  CHECK(store_keys::onode_name(onode_key({5, 6, std::string("n\0m", 3)})) ==
        std::string("n\0m", 3));
  CHECK(*store_keys::prefix_end("ab") == "ac");
  CHECK(*store_keys::prefix_end(std::string("a\xff")) == "b");
  CHECK(!store_keys::prefix_end(std::string("\xff\xff")).has_value());
}

}  // namespace
}  // namespace dfs::osd
