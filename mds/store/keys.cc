#include "mds/store/keys.h"

#include <cstdio>

namespace dfs::mds {
namespace {

constexpr char kInode = 'I';
constexpr char kFileData = 'F';
constexpr char kDentry = 'D';
constexpr char kOrphan = 'O';
constexpr char kPurge = 'P';
constexpr char kMeta = 'M';
constexpr char kRequest = 'R';

std::string prefixed(char kind, uint64_t v) {
  std::string key(1, kind);
  put_be64(key, v);
  return key;
}

}  // namespace

void put_be64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

uint64_t get_be64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

std::string inode_key(uint64_t ino) { return prefixed(kInode, ino); }
std::string inline_data_key(uint64_t ino) { return prefixed(kFileData, ino); }
std::string inode_prefix() { return std::string(1, kInode); }
std::string orphan_key(uint64_t ino) { return prefixed(kOrphan, ino); }
std::string orphan_prefix() { return std::string(1, kOrphan); }
std::string purge_key(uint64_t ino) { return prefixed(kPurge, ino); }
std::string purge_prefix() { return std::string(1, kPurge); }

std::string meta_key(std::string_view name) {
  std::string key(1, kMeta);
  key.append(name);
  return key;
}

std::string request_prefix() { return std::string(1, kRequest); }

std::string request_prefix(std::string_view client) {
  std::string key(1, kRequest);
  key.append(client);
  key.push_back('\0');
  return key;
}

std::string request_key(std::string_view client, uint64_t seq) {
  std::string key = request_prefix(client);
  put_be64(key, seq);
  return key;
}

Result<RequestKey> decode_request_key(std::string_view key) {
  if (key.size() < 10 || key[0] != kRequest || key[key.size() - 9] != '\0') {
    return make_error(ErrorCode::kCorruption, "malformed request key");
  }
  return RequestKey{std::string(key.substr(1, key.size() - 10)),
                    get_be64(key.substr(key.size() - 8))};
}

std::string prefix_end(std::string prefix) {
  while (!prefix.empty()) {
    auto last = static_cast<uint8_t>(prefix.back());
    if (last != 0xff) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return std::string(1, '\xff');  // unreachable for our non-empty prefixes
}

uint64_t name_hash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  // splitmix64 finalizer: FNV's low bits are weak for names that differ at the end.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

uint64_t name_bucket(std::string_view name) {
  uint64_t bucket = name_hash(name) >> 9;  // 55 bits: slot = bucket * 256 + i < 2^63
  return bucket == 0 ? 1 : bucket;
}

std::string dentry_key(uint64_t parent, uint64_t slot, std::string_view name) {
  std::string key = dentry_slot_key(parent, slot);
  key.append(name);
  return key;
}

std::string dentry_prefix(uint64_t parent) { return prefixed(kDentry, parent); }

std::string dentry_slot_key(uint64_t parent, uint64_t slot) {
  std::string key = prefixed(kDentry, parent);
  put_be64(key, slot);
  return key;
}

Result<DentryKey> decode_dentry_key(std::string_view key) {
  if (key.size() < 18 || key[0] != kDentry) {
    return make_error(ErrorCode::kCorruption, "malformed dentry key");
  }
  return DentryKey{get_be64(key.substr(1)), get_be64(key.substr(9)), std::string(key.substr(17))};
}

std::string encode_dentry_value(const DentryValue& value) {
  std::string out;
  put_be64(out, value.ino);
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>(value.type >> shift));
  return out;
}

Result<DentryValue> decode_dentry_value(std::string_view value) {
  if (value.size() != 12) return make_error(ErrorCode::kCorruption, "malformed dentry value");
  uint32_t type = 0;
  for (int i = 8; i < 12; ++i) type = (type << 8) | static_cast<uint8_t>(value[i]);
  return DentryValue{get_be64(value), type};
}

std::string object_name(uint64_t ino, uint64_t index) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%llx.%08llx", static_cast<unsigned long long>(ino),
                static_cast<unsigned long long>(index));
  return buf;
}

}  // namespace dfs::mds
