// InlineBuffer: the client's copy of an inline file's data (a small file whose bytes
// live in its inode) and the range of it the MDS has not seen yet. Buffering small
// writes here and sending them as one kMdsWriteInline on flush is what makes writing
// many small files cheap. Pure state, no I/O; owned by the file's FileState on the
// client's I/O thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dfs::client {

class InlineBuffer {
 public:
  InlineBuffer() = default;
  explicit InlineBuffer(std::string data) : data_(std::move(data)) {}

  const std::string& data() const { return data_; }
  uint64_t size() const { return data_.size(); }

  // Writes `bytes` at `offset`; a gap past the old end becomes zeros, which the MDS
  // must learn about too, so the gap joins the dirty range.
  void write(uint64_t offset, std::string_view bytes);
  // Shrinks or grows (with zeros) to `size`; the MDS is told separately (SetAttr).
  void truncate(uint64_t size);
  // Bytes [offset, offset + length) clipped to the data.
  std::string read(uint64_t offset, uint64_t length) const;

  bool dirty() const { return dirty_hi_ > dirty_lo_; }
  uint64_t dirty_lo() const { return dirty_lo_; }
  uint64_t dirty_hi() const { return dirty_hi_; }

  // The dirty bytes, to send; the buffer counts them clean from now on.
  struct Dirty {
    uint64_t offset = 0;
    std::string bytes;
  };
  Dirty take_dirty();
  // Marks [lo, hi) dirty again (a send failed), merged with anything written since.
  void mark_dirty(uint64_t lo, uint64_t hi);

  // Drops the data (the file moved to objects).
  void clear();

 private:
  std::string data_;
  uint64_t dirty_lo_ = 0;
  uint64_t dirty_hi_ = 0;
};

}  // namespace dfs::client
