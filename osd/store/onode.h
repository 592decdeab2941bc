// Onode: the dir store's per-object metadata record (size, version, data file id and
// the crc32c of every checksum block), stored in RocksDB under store_keys::onode_key.
// Pure value type and its encoding; see osd/store/FORMAT.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status/status.h"
#include "osd/store/object_store.h"

namespace dfs::osd {

struct Onode {
  uint64_t size = 0;
  ObjectVersion version;
  uint64_t fid = 0;            // data file objects/<(fid >> 8) & 0xff as hex>/<fid>
  std::vector<uint32_t> crcs;  // one per checksum block: ceil(size / block_bytes)
};

std::string encode_onode(const Onode& onode);
// Errors: kCorruption (truncated, trailing bytes or unknown format version).
Result<Onode> decode_onode(std::string_view value);
// Decodes only size and version (listing does not need the checksums).
Result<ObjectInfo> decode_onode_info(std::string_view value);

}  // namespace dfs::osd
