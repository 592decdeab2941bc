#include "mds/ops/layout_xattr.h"

#include <charconv>

#include "mds/ops/inode_rules.h"

namespace dfs::mds {
namespace {

Result<uint32_t> parse_u32(std::string_view key, std::string_view value) {
  uint32_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return make_error(ErrorCode::kInvalidArgument,
                      "dfs.layout: bad number for " + std::string(key));
  }
  return v;
}

}  // namespace

Result<proto::Layout> parse_layout(std::string_view text, proto::Layout base) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find_first_of(" \t\n,", at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return make_error(ErrorCode::kInvalidArgument, "dfs.layout: expected key=value");
    }
    std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (key == "object_size") {
      base.set_object_size(DFS_TRY(parse_u32(key, value)));
    } else if (key == "stripe_unit") {
      base.set_stripe_unit(DFS_TRY(parse_u32(key, value)));
    } else if (key == "stripe_count") {
      base.set_stripe_count(DFS_TRY(parse_u32(key, value)));
    } else if (key == "pool") {
      base.set_pool(std::string(value));
    } else {
      return make_error(ErrorCode::kInvalidArgument, "dfs.layout: unknown key " + std::string(key));
    }
  }
  uint32_t os = base.object_size();
  if (os < (64u << 10) || os > (64u << 20) || (os & (os - 1)) != 0) {
    return make_error(ErrorCode::kInvalidArgument,
                      "dfs.layout: object_size must be a power of two in 64 KiB..64 MiB");
  }
  if (base.pool().empty()) return make_error(ErrorCode::kInvalidArgument, "dfs.layout: no pool");
  return base;
}

std::string format_layout(const proto::Layout& layout) {
  return "object_size=" + std::to_string(layout.object_size()) +
         " stripe_unit=" + std::to_string(layout.stripe_unit()) +
         " stripe_count=" + std::to_string(layout.stripe_count()) + " pool=" + layout.pool();
}

Result<proto::Layout> layout_for_new_file(const proto::Inode& parent,
                                          const proto::Layout& fs_default) {
  auto it = parent.xattrs().find(kLayoutXattr);
  if (it == parent.xattrs().end()) return fs_default;
  return parse_layout(it->second, fs_default);
}

}  // namespace dfs::mds
