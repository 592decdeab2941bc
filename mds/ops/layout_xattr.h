// The virtual xattr dfs.layout: on a directory, the layout of files created in it
// later (inherited by new subdirectories); on a file, its layout (read-only once the
// file has data). Text form: "object_size=4194304 pool=data" (also stripe_unit=,
// stripe_count=); unnamed fields keep their current value. Hidden from listxattr so
// that copies to other file systems do not carry it.
#pragma once

#include <string>
#include <string_view>

#include "common/proto/mds.pb.h"
#include "common/status/status.h"

namespace dfs::mds {

// Parses `text` over `base`. Errors: kInvalidArgument (unknown key, object size not a
// power of two in 64 KiB..64 MiB, empty pool).
Result<proto::Layout> parse_layout(std::string_view text, proto::Layout base);
std::string format_layout(const proto::Layout& layout);

// The layout of a new regular file in `parent`: the parent's dfs.layout over the
// file system default. Errors: kInvalidArgument (a stored layout no longer parses).
Result<proto::Layout> layout_for_new_file(const proto::Inode& parent,
                                          const proto::Layout& fs_default);

}  // namespace dfs::mds
