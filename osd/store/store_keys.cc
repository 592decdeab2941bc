#include "osd/store/store_keys.h"

#include "osd/store/coding.h"

namespace dfs::osd::store_keys {

namespace {
constexpr size_t kOnodePrefixBytes = 1 + 4 + 4;
}  // namespace

std::string onode_prefix(uint32_t pool, uint32_t pg) {
  std::string out;
  out.reserve(kOnodePrefixBytes);
  out.push_back(kOnode);
  coding::put_be32(out, pool);
  coding::put_be32(out, pg);
  return out;
}

std::string onode_key(const ObjectKey& key) {
  std::string out = onode_prefix(key.pool, key.pg);
  out.append(key.name);
  return out;
}

std::string_view onode_name(std::string_view key) { return key.substr(kOnodePrefixBytes); }

std::string meta_key(std::string_view key) {
  std::string out;
  out.reserve(1 + key.size());
  out.push_back(kMeta);
  out.append(key);
  return out;
}

std::string_view meta_user_key(std::string_view key) { return key.substr(1); }

std::string journal_key(uint64_t seq) {
  std::string out(1, kJournal);
  coding::put_be64(out, seq);
  return out;
}

uint64_t journal_seq(std::string_view key) { return coding::get_be64(key.substr(1)); }

std::optional<std::string> prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<uint8_t>(end.back()) == 0xff) end.pop_back();
  if (end.empty()) return std::nullopt;
  end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
  return end;
}

}  // namespace dfs::osd::store_keys
