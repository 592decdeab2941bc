// Fixed-width integer coding for the dir store's RocksDB keys (big-endian, so byte order
// is numeric order) and values (little-endian). Header-only; used by the encoders in
// store_keys.cc, onode.cc and journal_record.cc.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace dfs::osd::coding {

inline void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

inline void put_be64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

inline uint64_t get_be64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

inline void put_le32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

inline void put_le64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}

// Reads little-endian fields from a buffer; any read past the end sets !ok() and yields 0,
// so a decoder checks once at the end instead of after every field.
class LeReader {
 public:
  explicit LeReader(std::string_view in) : in_(in) {}

  uint8_t u8() { return static_cast<uint8_t>(take(1) ? in_[pos_ - 1] : 0); }
  uint32_t u32() { return static_cast<uint32_t>(fixed(4)); }
  uint64_t u64() { return fixed(8); }
  std::string_view bytes(uint64_t n) {
    if (!take(n)) return {};
    return in_.substr(pos_ - n, n);
  }

  bool ok() const { return ok_; }
  bool at_end() const { return ok_ && pos_ == in_.size(); }

 private:
  bool take(uint64_t n) {
    if (!ok_ || in_.size() - pos_ < n) return ok_ = false;
    pos_ += n;
    return true;
  }
  uint64_t fixed(int width) {
    if (!take(width)) return 0;
    uint64_t v = 0;
    for (int i = width - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(in_[pos_ - width + i]);
    return v;
  }

  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace dfs::osd::coding
