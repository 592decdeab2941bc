// Key and value coding of the metadata store (FORMAT.md is the reference): big-endian
// numbers so that keys sort numerically, one-byte prefixes per record kind. Pure
// functions, usable from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status/status.h"

namespace dfs::mds {

inline constexpr uint64_t kRootIno = 1;
inline constexpr int kRankShift = 48;  // inode numbers carry their rank in bits 48..63

// Readdir cookies 1 and 2 are "." and ".."; real entries have slots >= kFirstSlot.
inline constexpr uint64_t kDotCookie = 1;
inline constexpr uint64_t kDotDotCookie = 2;
inline constexpr uint64_t kSlotsPerBucket = 256;
inline constexpr uint64_t kFirstSlot = kSlotsPerBucket;

void put_be64(std::string& out, uint64_t v);
uint64_t get_be64(std::string_view in);  // Requires: in.size() >= 8

std::string inode_key(uint64_t ino);
std::string inline_data_key(uint64_t ino);  // an inline file's data
std::string inode_prefix();  // every inode key starts with it
std::string orphan_key(uint64_t ino);
std::string orphan_prefix();
std::string purge_key(uint64_t ino);
std::string purge_prefix();
std::string meta_key(std::string_view name);
// Remembered replies: 'R' client NUL seq(8) -> the serialized reply.
std::string request_key(std::string_view client, uint64_t seq);
// The request key that records a mount's session itself (RecordSession), not a reply.
inline constexpr uint64_t kSessionRecordSeq = 0;
std::string request_prefix(std::string_view client);  // every key of one client
std::string request_prefix();                         // every client's
struct RequestKey {
  std::string client;
  uint64_t seq = 0;
};
// Errors: kCorruption.
Result<RequestKey> decode_request_key(std::string_view key);
// The first key past every key starting with `prefix`.
std::string prefix_end(std::string prefix);

// Stable 64-bit hash of a name (FNV-1a 64 finished by the splitmix64 mixer). Part of
// the on-disk format: never change it.
uint64_t name_hash(std::string_view name);
// The name's bucket: its hash's top 55 bits, never 0. Slots of the bucket are
// bucket * 256 + i for i in 0..255.
uint64_t name_bucket(std::string_view name);

// Dentry keys: 'D' parent slot name.
std::string dentry_key(uint64_t parent, uint64_t slot, std::string_view name);
std::string dentry_prefix(uint64_t parent);
// First key of slot `slot` in `parent` (no name): scans resume from here.
std::string dentry_slot_key(uint64_t parent, uint64_t slot);

struct DentryKey {
  uint64_t parent = 0;
  uint64_t slot = 0;
  std::string name;
};
// Errors: kCorruption.
Result<DentryKey> decode_dentry_key(std::string_view key);

struct DentryValue {
  uint64_t ino = 0;
  uint32_t type = 0;  // S_IFMT bits
};
std::string encode_dentry_value(const DentryValue& value);
// Errors: kCorruption.
Result<DentryValue> decode_dentry_value(std::string_view value);

// The data object holding bytes [index * object_size, ...) of file `ino`:
// "%llx.%08llx" (lower-case hex ino, dot, index as at least 8 hex digits).
std::string object_name(uint64_t ino, uint64_t index);

}  // namespace dfs::mds
