// Method ids of every RPC. Never reuse a number: old peers may still send it.
#pragma once

#include <cstdint>

namespace dfs::rpc {

enum Method : uint32_t {
  kHello = 1,

  kMonGetMap = 100,
  kMonSubscribe = 101,
  kMonMapUpdate = 102,  // one-way push, mon -> subscriber
  kMonCommand = 103,
  kMonOsdBeacon = 104,
  kMonFailureReport = 105,
  kMonStatus = 106,
  kMonCommittedEpoch = 107,  // leader only; followers ask it before serving a subscription

  kOsdWrite = 200,
  kOsdRead = 201,
  kOsdStat = 202,
  kOsdList = 203,
  kOsdRepWrite = 204,
  kOsdStatFs = 205,
  kOsdPush = 206,        // recovery: one object's whole state, primary -> member
  kOsdPgActivate = 207,  // end of peering: the member holds the PG as of a version
  kOsdPgScrub = 208,     // compare a PG's members and repair them (operator -> primary)

  kMdsSession = 300,
  kMdsLookup = 301,
  kMdsGetAttr = 302,
  kMdsSetAttr = 303,
  kMdsMknod = 304,      // regular files, directories, fifos, sockets, devices
  kMdsSymlink = 305,
  kMdsLink = 306,
  kMdsUnlink = 307,     // unlink and rmdir
  kMdsRename = 308,
  kMdsReaddir = 309,
  kMdsGetXattr = 310,
  kMdsSetXattr = 311,
  kMdsListXattr = 312,
  kMdsRemoveXattr = 313,
  kMdsOpen = 314,
  kMdsRelease = 315,
  kMdsWriteInline = 316,
  kMdsCommitWrite = 317,  // size/mtime after object writes
  kMdsUninline = 318,
  kMdsStatFs = 319,
  kMdsReadlink = 320,
  kMdsSync = 321,   // wait until every applied mutation is durable
  kMdsBatch = 322,  // several requests, handled in order
  kMdsRaftStatus = 323,  // a replica's Raft state (MonRaftStatus), from standbys too
  kMdsAllocInos = 324,   // delegate a range of inode numbers to a client
  kMdsRenew = 325,       // keep the client's session alive (its lease)
  kMdsEvicted = 326,     // one-way push, mds -> client: the session was evicted
  kMdsClientList = 327,  // the MDS's client sessions (operators)
  kMdsClientEvict = 328, // evict and fence a client session (operators)
  kMdsLock = 329,          // flock/fcntl locks: test, set, set and wait
  kMdsLockCancel = 330,    // stop waiting for a lock (a signal)
  kMdsLockRelease = 331,   // a close: the owner's locks on a file go
  kMdsLockReassert = 332,  // after a failover: the locks a client held
  kMdsCacheRights = 333,   // one-way push, mds -> client: exclusive caching granted/recalled
  kMdsCacheAck = 334,      // the client gave up exclusive caching (after a recall)
  kMdsSessionClose = 335,  // the client leaves (unmount, a CLI command's end)

  kRaftMessage = 400,  // one-way raft peer message; the body names the group
};

}  // namespace dfs::rpc
