// RocksDB key layout of the dir store (osd/store/FORMAT.md): one byte names the key
// space, then big-endian fields so that prefix scans come out in numeric, then name order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "osd/store/object_store.h"

namespace dfs::osd::store_keys {

inline constexpr char kOnode = 'O';    // 'O' pool:be32 pg:be32 name -> Onode
inline constexpr char kMeta = 'M';     // 'M' key -> value (put_meta)
inline constexpr char kJournal = 'J';  // 'J' seq:be64 -> journal record

std::string onode_key(const ObjectKey& key);
// Prefix shared by every onode of one placement group.
std::string onode_prefix(uint32_t pool, uint32_t pg);
// The object name inside an onode key.
std::string_view onode_name(std::string_view key);

std::string meta_key(std::string_view key);
std::string_view meta_user_key(std::string_view key);

std::string journal_key(uint64_t seq);
uint64_t journal_seq(std::string_view key);

// The smallest key greater than every key starting with `prefix`, for
// ReadOptions::iterate_upper_bound; nullopt when no such bound exists (all 0xff).
std::optional<std::string> prefix_end(std::string_view prefix);

}  // namespace dfs::osd::store_keys
