#include "common/rpc/method_names.h"

#include "common/rpc/methods.h"

namespace dfs::rpc {

std::string method_name(uint32_t method) {
  switch (static_cast<Method>(method)) {
    case kHello: return "hello";
    case kMonGetMap: return "mon_get_map";
    case kMonSubscribe: return "mon_subscribe";
    case kMonMapUpdate: return "mon_map_update";
    case kMonCommand: return "mon_command";
    case kMonOsdBeacon: return "mon_osd_beacon";
    case kMonFailureReport: return "mon_failure_report";
    case kMonStatus: return "mon_status";
    case kMonCommittedEpoch: return "mon_committed_epoch";
    case kOsdWrite: return "osd_write";
    case kOsdRead: return "osd_read";
    case kOsdStat: return "osd_stat";
    case kOsdList: return "osd_list";
    case kOsdRepWrite: return "osd_rep_write";
    case kOsdStatFs: return "osd_stat_fs";
    case kOsdPush: return "osd_push";
    case kOsdPgActivate: return "osd_pg_activate";
    case kOsdPgScrub: return "osd_pg_scrub";
    case kMdsSession: return "mds_session";
    case kMdsLookup: return "mds_lookup";
    case kMdsGetAttr: return "mds_get_attr";
    case kMdsSetAttr: return "mds_set_attr";
    case kMdsMknod: return "mds_mknod";
    case kMdsSymlink: return "mds_symlink";
    case kMdsLink: return "mds_link";
    case kMdsUnlink: return "mds_unlink";
    case kMdsRename: return "mds_rename";
    case kMdsReaddir: return "mds_readdir";
    case kMdsGetXattr: return "mds_get_xattr";
    case kMdsSetXattr: return "mds_set_xattr";
    case kMdsListXattr: return "mds_list_xattr";
    case kMdsRemoveXattr: return "mds_remove_xattr";
    case kMdsOpen: return "mds_open";
    case kMdsRelease: return "mds_release";
    case kMdsWriteInline: return "mds_write_inline";
    case kMdsCommitWrite: return "mds_commit_write";
    case kMdsUninline: return "mds_uninline";
    case kMdsStatFs: return "mds_stat_fs";
    case kMdsReadlink: return "mds_readlink";
    case kMdsSync: return "mds_sync";
    case kMdsBatch: return "mds_batch";
    case kMdsRaftStatus: return "mds_raft_status";
    case kMdsAllocInos: return "mds_alloc_inos";
    case kMdsRenew: return "mds_renew";
    case kMdsEvicted: return "mds_evicted";
    case kMdsClientList: return "mds_client_list";
    case kMdsClientEvict: return "mds_client_evict";
    case kMdsLock: return "mds_lock";
    case kMdsLockCancel: return "mds_lock_cancel";
    case kMdsLockRelease: return "mds_lock_release";
    case kMdsLockReassert: return "mds_lock_reassert";
    case kMdsCacheRights: return "mds_cache_rights";
    case kMdsCacheAck: return "mds_cache_ack";
    case kMdsSessionClose: return "mds_session_close";
    case kRaftMessage: return "raft_message";
  }
  return "method_" + std::to_string(method);
}

}  // namespace dfs::rpc
