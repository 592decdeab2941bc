#include "osd/store/onode.h"

#include "osd/store/coding.h"

namespace dfs::osd {

namespace {

constexpr uint8_t kOnodeFormat = 1;

Unexpected bad_onode() { return make_error(ErrorCode::kCorruption, "undecodable onode"); }

// Reads the fields that precede the checksum array.
Onode decode_head(coding::LeReader& in) {
  Onode onode;
  if (in.u8() != kOnodeFormat) in.bytes(UINT64_MAX);  // forces !ok()
  onode.size = in.u64();
  onode.version.epoch = in.u64();
  onode.version.seq = in.u64();
  onode.fid = in.u64();
  return onode;
}

}  // namespace

std::string encode_onode(const Onode& onode) {
  std::string out;
  out.reserve(1 + 8 * 4 + 4 + 4 * onode.crcs.size());
  out.push_back(static_cast<char>(kOnodeFormat));
  coding::put_le64(out, onode.size);
  coding::put_le64(out, onode.version.epoch);
  coding::put_le64(out, onode.version.seq);
  coding::put_le64(out, onode.fid);
  coding::put_le32(out, static_cast<uint32_t>(onode.crcs.size()));
  for (uint32_t crc : onode.crcs) coding::put_le32(out, crc);
  return out;
}

Result<Onode> decode_onode(std::string_view value) {
  coding::LeReader in(value);
  Onode onode = decode_head(in);
  uint32_t count = in.u32();
  if (!in.ok() || value.size() < count * uint64_t{4}) return bad_onode();
  onode.crcs.resize(count);
  for (uint32_t& crc : onode.crcs) crc = in.u32();
  if (!in.at_end()) return bad_onode();
  return onode;
}

Result<ObjectInfo> decode_onode_info(std::string_view value) {
  coding::LeReader in(value);
  Onode onode = decode_head(in);
  if (!in.ok()) return bad_onode();
  return ObjectInfo{onode.size, onode.version};
}

}  // namespace dfs::osd
