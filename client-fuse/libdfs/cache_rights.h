// CacheRights: what this mount may do without asking the MDS, as the MDS has granted it
// (docs/capabilities.md, "Exclusive caching", "Directory rights" and "File rights"), and
// the bookkeeping of giving it back. Two rights: exclusive caching of the whole file
// system, and the inodes this mount owns (OwnedDirs): directories with the files it
// created in them, and files it opened while nobody else had them open.
// Every fast path of the client asks alone(ino).
//
// The rules it keeps:
//   - A right stops the moment its recall arrives, before anything is pushed, so that
//     nothing new is deferred or buffered under it while the old is flushed.
//   - Notices about exclusive caching are ordered by seq: a pushed notice no newer than
//     the last one applied is ignored (a late grant must not undo a recall that overtook
//     it); a session reply answers this mount's own request and always applies. A
//     session reply that says "not exclusive" is a recall to answer only for a mount
//     that holds the right: its seq is the MDS's newest, which may belong to a recall of
//     owned directories still on its way.
//   - A grant is taken up only when no give-up is running, the lease holds, the mount is
//     not unmounting and its owner says it is quiet (take_grant); until then it waits.
//   - A give-up runs in rounds (next_round): each answers the recalls that had arrived
//     when it began, so a recall arriving during a round gets pushes of its own before
//     it is acknowledged. Every recall is answered, also one of a right never applied:
//     the MDS waits for the answer.
//   - A lapsed lease stops every right until a renewal is answered. Exclusive caching
//     comes back then only if the MDS says nothing happened to it meanwhile; owned
//     directories come back unless a recall of some of them is under way.
//
// Pure state, no I/O: the FileClient feeds it the MDS's notices, the lease and an
// eviction, and does what the answers ask (push, have the kernel drop its caches,
// acknowledge). Owned by the FileClient on its I/O thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client-fuse/libdfs/owned_dirs.h"

namespace dfs::client {

class CacheRights {
 public:
  // `want_exclusive`: the mount asks for exclusive caching at all (the mount option);
  // grants are ignored otherwise.
  explicit CacheRights(bool want_exclusive) : want_exclusive_(want_exclusive) {}

  // ---- What the fast paths ask ----

  // Exclusive caching of the whole file system is held.
  bool exclusive() const { return exclusive_; }
  // This mount may cache and defer for `ino` as if it were the only mount.
  bool alone(uint64_t ino) const {
    return exclusive_ || (!lease_lapsed_ && owned_.covers(ino));
  }
  // This mount may let the kernel keep what it caches of `ino` (its attributes, a
  // directory's names, a file's pages across opens), though other mounts may read it
  // too (a read share: nobody changes it without recalling the share).
  bool read_shared(uint64_t ino) const { return !lease_lapsed_ && owned_.shares(ino); }
  // Something is held that the lease guards.
  bool holds_any() const { return exclusive_ || owned_.size() > 0; }
  bool lease_lapsed() const { return lease_lapsed_; }
  bool giving_up() const { return giving_up_; }
  // Ownership is recorded by the namespace operations that create, move and remove.
  OwnedDirs& owned() { return owned_; }
  const OwnedDirs& owned() const { return owned_; }

  // What the kernel must drop before a recall is acknowledged: what it was told under
  // the rights that went, with the long timeouts and the kept page cache.
  struct KernelScope {
    bool everything = false;      // exclusive caching went: every name and inode
    std::vector<uint64_t> inos;   // else these (dfs numbers): recalled directories (their
                                  // names and attributes), the files created in them,
                                  // recalled files
    // The files owned by themselves or shared for reading that were given up (also with
    // `everything`): the kernel trusts its own size of a file it cached (the writeback
    // cache), and their names may be in directories the mount never owned, whose names
    // it does not keep and cannot have the kernel drop; so the next lookup of one gets a
    // new inode number.
    std::vector<uint64_t> files;
    static KernelScope all() {
      KernelScope scope;
      scope.everything = true;
      return scope;
    }
    bool empty() const { return !everything && inos.empty() && files.empty(); }
    void add(KernelScope other);
  };

  // ---- Notices from the MDS ----

  // A give-up to start: the owner pushes what it deferred and buffered and acknowledges,
  // round by round (next_round). The give-up counts as running from the moment this is
  // returned, so later recalls join it instead of starting another.
  struct GiveUp {
    bool was_exclusive = false;  // exclusive caching stopped (for the log)
    bool dropped = false;        // a right actually went: the kernel's caches go too
    bool pushes = false;         // one under which changes are deferred (for the log)
  };
  // What a recall of owned directories did here.
  struct DirsRecall {
    bool dropped = false;  // some of them were owned: their cached names are stale
    std::optional<GiveUp> start;
  };

  // A grant (`exclusive`) or recall of exclusive caching, pushed or in a session reply.
  // A grant waits for take_grant(); a recall stops the right at once.
  std::optional<GiveUp> exclusive_notice(bool exclusive, uint64_t seq, bool from_session_reply,
                                         std::string reason);
  // A recall of owned directories, applied whatever its seq: giving a directory up is
  // always safe, and a resent recall of directories given up already is answered again.
  // `changes_pending`: a change of this mount not answered by the MDS yet names one of
  // `dirs`; the give-up then pushes before it acknowledges, as for an owned one.
  DirsRecall dirs_recalled(const std::vector<uint64_t>& dirs, uint64_t seq,
                           bool changes_pending);

  // ---- Directories claimed while they exist ----

  // Counts the events that take owned directories away (recalls, an eviction): a claim
  // answered by the MDS counts here only if none happened since it was asked for.
  uint64_t ownership_epoch() const { return ownership_epoch_; }
  // Moves at every event that may change what this mount is alone on, either way:
  // notices of exclusive caching, grants taken up, recalls, claims of owned inodes, a
  // lapse and its renewal, an eviction. Alone on an inode at two moments with no move in
  // between: alone all along.
  uint64_t generation() const { return generation_; }
  // The MDS gave `dir` (MknodReply.parent_owned) to a request sent at `epoch_asked`.
  // True when it is owned here from now on; false when a recall or an eviction came in
  // between (it may have named `dir`: the MDS then no longer counts it as ours, or will
  // recall it, which is answered as for any directory not owned here).
  bool own_claimed(uint64_t dir, uint64_t epoch_asked);
  // The same for a file the MDS gave an open (InodeReply.owned), and for an inode it
  // shared with an open, a lookup or a getattr (InodeReply.read_shared; `regular`: a
  // regular file).
  bool own_file_claimed(uint64_t file, uint64_t epoch_asked);
  bool share_claimed(uint64_t ino, uint64_t epoch_asked, bool regular);
  // The mount opens `file` for writing: its read share ends here, without a recall (the
  // MDS ends it at that open). The kernel keeps its inode: the writing open is not
  // cached (the kernel drops the file's pages at it), and each write through it drops
  // the pages it covers (FileClient::write), so the mount's readers see its writes.
  void share_given_up(uint64_t file) {
    const std::vector<uint64_t> inos{file};
    if (owned_.shares(file)) owned_.give_up(inos);
  }

  // ---- Giving rights back ----

  // The next round of the running give-up: the recalls to acknowledge after its pushes,
  // and what of the kernel's caches goes first. nullopt: all are answered and the
  // give-up is over (take_grant may succeed again).
  struct Round {
    std::vector<uint64_t> answering;
    KernelScope invalidate;
    // Something under which changes are deferred or data buffered went (exclusive
    // caching, an owned inode): they are pushed before the acknowledgement. A round that
    // gives up only shares drops what the kernel caches and nothing else.
    bool push = true;
  };
  std::optional<Round> next_round();

  // ---- Grants ----

  bool grant_waiting() const { return grant_waiting_; }
  const std::string& grant_reason() const { return grant_reason_; }
  // Takes up the waiting grant if nothing stops it; `quiet`: the owner has no file open
  // and nothing unrecorded (an open file's state dates from its open, when others may
  // have been changing it). True: exclusive caching is held from now on, and the owner
  // forgets what it learned while shared.
  bool take_grant(bool quiet);

  // ---- Lease and session ----

  // The MDS has not answered a renewal for most of the session timeout. True: rights
  // were held and are stopped now (nothing is answered, deferred or buffered alone);
  // false: nothing to stop, or lapsed already, or a give-up is running.
  bool lapse();
  // A renewal was answered after a lapse (nothing happens otherwise).
  struct Renewal {
    bool was_lapsed = false;
    size_t dirs_dropped = 0;      // a recall of owned directories is under way: all go
    KernelScope invalidate;       // then what the kernel must drop: the sizes it trusts
                                  // of the files among them owned by themselves
    bool exclusive_back = false;  // the right is unchanged: a grant waits (take_grant)
    bool exclusive_lost = false;  // the MDS moved on: it stays given up (a notice follows)
  };
  Renewal renewed(bool mds_says_exclusive, uint64_t mds_cache_seq, bool dirs_recall_pending);
  // The session was evicted: every right went with it. When anything was held, what the
  // kernel must drop (everything, and the files owned by themselves); else nullopt.
  std::optional<KernelScope> evicted();
  // The mount is unmounting: no grant is taken up any more.
  void stop() { stopped_ = true; }

 private:
  GiveUp start_give_up(uint64_t seq, GiveUp give_up, KernelScope scope, bool push);

  bool want_exclusive_;
  bool exclusive_ = false;
  OwnedDirs owned_;
  bool lease_lapsed_ = false;
  bool lapsed_exclusive_ = false;  // exclusive caching was held when the lease lapsed
  bool stopped_ = false;
  uint64_t cache_seq_ = 0;  // of the last exclusive-caching notice applied
  bool grant_waiting_ = false;
  std::string grant_reason_;
  uint64_t ownership_epoch_ = 0;
  uint64_t generation_ = 0;
  bool giving_up_ = false;
  std::vector<uint64_t> acks_pending_;  // recalls the running give-up has yet to answer
  KernelScope invalidate_next_;         // what the rights they stopped let the kernel cache
  bool push_next_ = false;              // and whether one of them let the mount defer
};

}  // namespace dfs::client
