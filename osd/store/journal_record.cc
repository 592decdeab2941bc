#include "osd/store/journal_record.h"

#include <string>

#include "osd/store/coding.h"
#include "osd/store/rocks_status.h"
#include "osd/store/store_keys.h"

namespace dfs::osd {

namespace {

constexpr uint8_t kRecordFormat = 1;
constexpr size_t kOpHeaderBytes = 1 + 8 + 8;

}  // namespace

Status put_journal_record(rocksdb::WriteBatch& batch, uint64_t seq, uint64_t fid,
                          uint64_t start_size, std::span<const FileOp> ops) {
  // Headers go in one buffer reserved up front so the slices into it stay valid.
  std::string headers;
  headers.reserve(1 + 8 + 8 + 4 + kOpHeaderBytes * ops.size());
  headers.push_back(static_cast<char>(kRecordFormat));
  coding::put_le64(headers, fid);
  coding::put_le64(headers, start_size);
  coding::put_le32(headers, static_cast<uint32_t>(ops.size()));
  std::vector<rocksdb::Slice> parts;
  parts.reserve(1 + 2 * ops.size());
  size_t head_end = headers.size();
  parts.emplace_back(headers.data(), head_end);
  for (const FileOp& op : ops) {
    size_t at = headers.size();
    headers.push_back(static_cast<char>(op.kind));
    coding::put_le64(headers, op.offset);
    coding::put_le64(headers, op.data.size());
    parts.emplace_back(headers.data() + at, kOpHeaderBytes);
    if (!op.data.empty()) parts.emplace_back(op.data.data(), op.data.size());
  }
  std::string key = store_keys::journal_key(seq);
  rocksdb::Slice key_slice(key);
  rocksdb::SliceParts key_parts(&key_slice, 1);
  rocksdb::SliceParts value_parts(parts.data(), static_cast<int>(parts.size()));
  return rocks_status(batch.Put(key_parts, value_parts), "while adding a journal record");
}

Result<JournalRecord> decode_journal_record(std::string_view value) {
  coding::LeReader in(value);
  JournalRecord record;
  uint8_t format = in.u8();
  record.fid = in.u64();
  record.start_size = in.u64();
  uint32_t count = in.u32();
  if (!in.ok() || format != kRecordFormat || count > value.size() / kOpHeaderBytes) {
    return make_error(ErrorCode::kCorruption, "undecodable journal record header");
  }
  record.ops.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    FileOp op;
    uint8_t kind = in.u8();
    op.kind = static_cast<FileOp::Kind>(kind);
    op.offset = in.u64();
    op.data = in.bytes(in.u64());
    bool known = kind == uint8_t(FileOp::Kind::kTruncate) || kind == uint8_t(FileOp::Kind::kWrite);
    if (!in.ok() || !known) return make_error(ErrorCode::kCorruption, "undecodable journal op");
    record.ops.push_back(op);
  }
  if (!in.at_end()) return make_error(ErrorCode::kCorruption, "trailing bytes in journal record");
  return record;
}

}  // namespace dfs::osd
