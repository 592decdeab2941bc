// Conversions from dfs inodes to the POSIX structures the kernel wants (struct stat),
// FUSE-free so they can be unit-tested.
#pragma once

#include <sys/stat.h>

#include "common/proto/mds.pb.h"

namespace dfs::vfs {

// Preferred I/O size reported in st_blksize: the largest FUSE write.
inline constexpr uint32_t kPreferredIoBytes = 1u << 20;

// `fuse_ino` is the number the kernel knows the inode by.
struct stat to_stat(const proto::Inode& inode, uint64_t fuse_ino);

}  // namespace dfs::vfs
