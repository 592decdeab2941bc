// The caller of a file system operation as the MDS sees it: the credentials of the
// process that made the system call (FUSE's request context), carried in every
// MdsRequestHeader so the MDS can apply POSIX ownership rules.
#pragma once

#include <cstdint>
#include <vector>

#include "common/proto/mds.pb.h"

namespace dfs::client {

struct Creds {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;  // supplementary groups; filled only where they matter
  uint32_t umask = 022;

  bool is_root() const { return uid == 0; }

  void to_proto(proto::Creds* out) const {
    out->set_uid(uid);
    out->set_gid(gid);
    out->mutable_groups()->Assign(groups.begin(), groups.end());
    out->set_umask(umask);
  }
};

}  // namespace dfs::client
