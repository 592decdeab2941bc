// `dfs-osd --mkfs --loop-file FILE --size N`: an OSD store on a host without a spare disk.
// The store gets a file system of its own, an ext4 image in FILE mounted through a loop
// device on the OSD's data directory, so that its fullness (and the monitors' full
// ratios) is the OSD's alone and not the root disk's.
#pragma once

#include <cstdint>
#include <string>

#include "common/status/status.h"

namespace dfs::osd {

// "10G", "512M", "1T", "4096" (bytes; K/M/G/T are powers of 1024). Errors:
// kInvalidArgument.
Result<uint64_t> parse_size(const std::string& text);

// Creates `file` (`size` bytes, sparse), makes it ext4 and mounts it on `dir`, which
// must be an empty directory or not exist yet. Needs root (mount) and mkfs.ext4. Refuses
// an existing file: it may be another OSD's store. Errors: kInvalidArgument, kIoError.
Status make_loop_store(const std::string& file, uint64_t size, const std::string& dir);

// The /etc/fstab line that mounts the image again at boot, before the OSD starts.
std::string loop_fstab_line(const std::string& file, const std::string& dir);

}  // namespace dfs::osd
