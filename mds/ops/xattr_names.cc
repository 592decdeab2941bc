#include "mds/ops/xattr_names.h"

#include "mds/ops/inode_rules.h"

namespace dfs::mds {

Status check_xattr_name(std::string_view name) {
  if (name.size() > 255) return make_error(ErrorCode::kRange, "xattr names are at most 255 bytes");
  if (name == kAclAccessXattr || name == kAclDefaultXattr || name == kLayoutXattr) {
    return ok_status();
  }
  for (std::string_view prefix : {"user.", "trusted.", "security."}) {
    if (name.substr(0, prefix.size()) == prefix) {
      if (name.size() == prefix.size()) {
        return make_error(ErrorCode::kInvalidArgument, "xattr name without a suffix");
      }
      return ok_status();
    }
  }
  return make_error(ErrorCode::kNotSupported, "unsupported xattr namespace: " + std::string(name));
}

bool is_listed_xattr(std::string_view name) { return name.substr(0, 4) != "dfs."; }

}  // namespace dfs::mds
