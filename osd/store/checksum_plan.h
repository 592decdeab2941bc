// Computes an object's per-block crc32c array after a list of file ops, reading only the
// stored blocks that a partial-block op leaves partly unchanged. Every block's checksum
// covers exactly block_bytes bytes of logical content; bytes past the object's size count
// as zeros. Pure apart from the `read_base_block` callback; any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/status/status.h"
#include "osd/store/file_op.h"

namespace dfs::osd {

// Returns block `index` of the base content: block_bytes bytes, zeros past base_size,
// already verified against its stored checksum (else kCorruption).
using BlockReader = std::function<Result<std::string>(uint64_t index)>;

struct ChecksumInput {
  uint32_t block_bytes = 4096;
  uint64_t base_size = 0;               // size of the content the ops start from
  std::span<const uint32_t> base_crcs;  // its checksums: ceil(base_size / block_bytes)
  BlockReader read_base_block;          // called only for blocks a partial op touches
  std::span<const FileOp> ops;
};

// Returns the checksums of the content after `ops`: ceil(final_size / block_bytes)
// entries. Errors: whatever read_base_block returns.
Result<std::vector<uint32_t>> plan_checksums(const ChecksumInput& input);

// crc32c of one all-zero block.
uint32_t zero_block_crc(uint32_t block_bytes);

}  // namespace dfs::osd
