#include "osd/store/checksum_plan.h"

#include <algorithm>
#include <cstring>

#include "common/util/crc32c.h"

namespace dfs::osd {

namespace {

struct BlockRange {
  uint64_t first;
  uint64_t last;  // inclusive
};

// How one op changes one block.
enum class Effect { kNone, kPartial, kCovers, kZeroes };

class ChecksumPlanner {
 public:
  explicit ChecksumPlanner(const ChecksumInput& in)
      : in_(in), bs_(in.block_bytes), zero_crc_(zero_block_crc(in.block_bytes)) {}

  Result<std::vector<uint32_t>> run();

 private:
  void simulate();
  Effect effect(size_t i, uint64_t block) const;
  Result<uint32_t> block_crc(uint64_t block);
  Result<uint32_t> materialize(uint64_t block, size_t from_op);

  const ChecksumInput& in_;
  const uint64_t bs_;
  const uint32_t zero_crc_;
  std::vector<uint64_t> size_before_;  // the object's size before each op
  std::vector<BlockRange> dirty_;      // blocks some op changes, sorted and merged
  uint64_t final_size_ = 0;
};

// Records each op's size-before and the blocks it changes.
void ChecksumPlanner::simulate() {
  uint64_t size = in_.base_size;
  std::vector<BlockRange> ranges;
  for (const FileOp& op : in_.ops) {
    size_before_.push_back(size);
    if (op.kind == FileOp::Kind::kWrite) {
      uint64_t end = op.offset + op.data.size();
      if (!op.data.empty()) ranges.push_back({op.offset / bs_, (end - 1) / bs_});
      size = std::max(size, end);
    } else {
      if (op.offset < size) ranges.push_back({op.offset / bs_, (size - 1) / bs_});
      size = op.offset;
    }
  }
  final_size_ = size;
  std::sort(ranges.begin(), ranges.end(),
            [](const BlockRange& a, const BlockRange& b) { return a.first < b.first; });
  for (const BlockRange& r : ranges) {
    if (!dirty_.empty() && r.first <= dirty_.back().last + 1) {
      dirty_.back().last = std::max(dirty_.back().last, r.last);
    } else {
      dirty_.push_back(r);
    }
  }
}

Effect ChecksumPlanner::effect(size_t i, uint64_t block) const {
  const FileOp& op = in_.ops[i];
  uint64_t begin = block * bs_;
  uint64_t end = begin + bs_;
  if (op.kind == FileOp::Kind::kWrite) {
    uint64_t op_end = op.offset + op.data.size();
    if (op.data.empty() || op.offset >= end || op_end <= begin) return Effect::kNone;
    return op.offset <= begin && op_end >= end ? Effect::kCovers : Effect::kPartial;
  }
  // A truncate zeroes [new size, old size); growing changes no content.
  uint64_t old_size = size_before_[i];
  if (op.offset >= old_size || op.offset >= end || old_size <= begin) return Effect::kNone;
  return op.offset <= begin ? Effect::kZeroes : Effect::kPartial;
}

// Scans the ops backwards: a block last fully written (or zeroed) needs no read.
Result<uint32_t> ChecksumPlanner::block_crc(uint64_t block) {
  bool partial_after = false;
  for (size_t i = in_.ops.size(); i-- > 0;) {
    Effect e = effect(i, block);
    if (e == Effect::kNone) continue;
    if (e == Effect::kPartial) {
      partial_after = true;
      continue;
    }
    if (partial_after) return materialize(block, i);
    if (e == Effect::kZeroes) return zero_crc_;
    const FileOp& op = in_.ops[i];
    return crc32c(0, op.data.data() + (block * bs_ - op.offset), bs_);
  }
  return materialize(block, in_.ops.size());
}

// Builds the block's content starting at op `from_op` (which fully determines it), or
// from the base content when from_op == ops.size(), then applies the later ops.
Result<uint32_t> ChecksumPlanner::materialize(uint64_t block, size_t from_op) {
  uint64_t begin = block * bs_;
  std::string buf;
  bool from_base = from_op == in_.ops.size();
  if (from_base && block < in_.base_crcs.size()) {
    buf = DFS_TRY(in_.read_base_block(block));
    if (buf.size() != bs_) return make_error(ErrorCode::kInternal, "short base block");
  }
  if (buf.empty()) buf.assign(bs_, '\0');
  for (size_t i = from_base ? 0 : from_op; i < in_.ops.size(); ++i) {
    if (effect(i, block) == Effect::kNone) continue;
    const FileOp& op = in_.ops[i];
    if (op.kind == FileOp::Kind::kTruncate) {
      uint64_t cut = std::max(op.offset, begin) - begin;
      std::memset(buf.data() + cut, 0, bs_ - cut);
      continue;
    }
    uint64_t lo = std::max(op.offset, begin);
    uint64_t hi = std::min(op.offset + op.data.size(), begin + bs_);
    std::memcpy(buf.data() + (lo - begin), op.data.data() + (lo - op.offset), hi - lo);
  }
  return crc32c(0, buf.data(), buf.size());
}

Result<std::vector<uint32_t>> ChecksumPlanner::run() {
  simulate();
  uint64_t blocks = (final_size_ + bs_ - 1) / bs_;
  std::vector<uint32_t> crcs(blocks, zero_crc_);
  uint64_t kept = std::min<uint64_t>(blocks, in_.base_crcs.size());
  std::copy_n(in_.base_crcs.begin(), kept, crcs.begin());
  for (const BlockRange& r : dirty_) {
    for (uint64_t b = r.first; b <= r.last && b < blocks; ++b) crcs[b] = DFS_TRY(block_crc(b));
  }
  return crcs;
}

}  // namespace

Result<std::vector<uint32_t>> plan_checksums(const ChecksumInput& input) {
  return ChecksumPlanner(input).run();
}

uint32_t zero_block_crc(uint32_t block_bytes) {
  static thread_local uint32_t cached_bytes = 0;
  static thread_local uint32_t cached_crc = 0;
  if (cached_bytes != block_bytes) {
    std::string zeros(block_bytes, '\0');
    cached_crc = crc32c(0, zeros.data(), zeros.size());
    cached_bytes = block_bytes;
  }
  return cached_crc;
}

}  // namespace dfs::osd
