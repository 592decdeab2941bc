// Which xattr names the MDS accepts, and which listxattr shows.
#pragma once

#include <string_view>

#include "common/status/status.h"

namespace dfs::mds {

// Errors: kNotSupported (unknown namespace or system.* other than the ACLs),
// kRange (longer than 255 bytes), kInvalidArgument (empty suffix). UTF-8 is checked
// separately (is_utf8).
Status check_xattr_name(std::string_view name);

// Xattr names key a proto3 map, so they must be UTF-8.
bool is_utf8(std::string_view s);

// Virtual xattrs (dfs.*) are answered by getxattr but not listed.
bool is_listed_xattr(std::string_view name);

}  // namespace dfs::mds
