#include "client-fuse/libdfs/inline_buffer.h"

#include <algorithm>

namespace dfs::client {

void InlineBuffer::write(uint64_t offset, std::string_view bytes) {
  if (bytes.empty()) return;  // a write of nothing does not extend the file
  uint64_t old_size = data_.size();
  uint64_t end = offset + bytes.size();
  if (end > old_size) data_.resize(end, '\0');
  data_.replace(offset, bytes.size(), bytes);
  mark_dirty(std::min(offset, old_size), end);
}

void InlineBuffer::truncate(uint64_t size) {
  data_.resize(size, '\0');
  dirty_hi_ = std::min(dirty_hi_, size);
  if (dirty_lo_ >= dirty_hi_) dirty_lo_ = dirty_hi_ = 0;
}

std::string InlineBuffer::read(uint64_t offset, uint64_t length) const {
  if (offset >= data_.size()) return {};
  return data_.substr(offset, std::min<uint64_t>(length, data_.size() - offset));
}

InlineBuffer::Dirty InlineBuffer::take_dirty() {
  Dirty out;
  if (!dirty()) return out;
  out.offset = dirty_lo_;
  out.bytes = data_.substr(dirty_lo_, dirty_hi_ - dirty_lo_);
  dirty_lo_ = dirty_hi_ = 0;
  return out;
}

void InlineBuffer::mark_dirty(uint64_t lo, uint64_t hi) {
  hi = std::min<uint64_t>(hi, data_.size());
  if (lo >= hi) return;
  if (!dirty()) {
    dirty_lo_ = lo;
    dirty_hi_ = hi;
  } else {
    dirty_lo_ = std::min(dirty_lo_, lo);
    dirty_hi_ = std::max(dirty_hi_, hi);
  }
}

void InlineBuffer::clear() {
  data_.clear();
  data_.shrink_to_fit();
  dirty_lo_ = dirty_hi_ = 0;
}

}  // namespace dfs::client
