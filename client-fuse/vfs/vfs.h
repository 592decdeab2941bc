// Vfs: the FUSE-free core of dfs-fuse. It speaks in kernel inode numbers and POSIX
// structures, keeps the kernel's lookup counts (InodeTable) and directory handles,
// and delegates the file system work to libdfs's FileClient. Every method runs on the
// client's I/O thread (executor()); the FUSE layer spawns coroutines there and replies
// from them, so no FUSE thread waits on the network. Never includes libfuse.
#pragma once

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "client-fuse/libdfs/file_client.h"
#include "client-fuse/vfs/inode_table.h"

namespace dfs::vfs {

using client::Creds;

// How long the kernel may cache what it is told, in seconds.
struct KernelTimeouts {
  double entry = 1.0;     // a name
  double attr = 1.0;      // attributes
  double negative = 1.0;  // "no such name" (0: off)
};

struct VfsOptions {
  // While the client holds exclusive caching, and while it does not.
  KernelTimeouts alone{60.0, 60.0, 60.0};
  KernelTimeouts shared{0.0, 0.0, 0.0};
  bool writeback_cache = true;    // the kernel buffers writes (and handles O_APPEND)
  uint32_t readdir_batch = 1024;  // entries fetched from the MDS per request
};

// An entry reply. ino 0 is a negative entry (the name does not exist).
struct Entry {
  uint64_t ino = 0;
  struct stat attr {};
  double attr_timeout = 0;
  double entry_timeout = 0;
};

struct Attr {
  struct stat attr {};
  double timeout = 0;
};

struct Opened {
  uint64_t fh = 0;
  bool keep_cache = true;  // exclusive caching: the page cache stays valid across opens
  // Shared: no page cache for the file. With the writeback cache the kernel would trust
  // its own size and pages over what other mounts wrote.
  bool direct_io = false;
  Entry entry;             // create() only
};

struct DirItem {
  std::string name;
  uint64_t next_offset = 0;    // offset to resume after this item
  Entry entry;                 // attr.st_ino and attr.st_mode always; the rest with plus
  bool counts_lookup = false;  // plus, not "." / "..": a reply adds a lookup
};

class Vfs {
 public:
  // `root_ino`: the dfs inode shown as the mount's root (the file system's root or
  // the mounted subdirectory).
  Vfs(client::FileClient& client, VfsOptions options, uint64_t root_ino);

  asio::any_io_executor executor() { return client_.executor(); }
  client::FileClient& client() { return client_; }
  InodeTable& inodes() { return inodes_; }
  const VfsOptions& options() const { return options_; }
  // What init() negotiated (before the first request).
  void set_writeback_cache(bool on) { options_.writeback_cache = on; }

  // Names. Errors are the FileClient's (ErrorCode); ENOENT of lookup becomes a
  // negative entry when negative_timeout > 0.
  awaitable<Result<Entry>> lookup(Creds creds, uint64_t parent, std::string name);
  // Call after fuse_reply_entry / fuse_reply_create succeeded (lookup count +1).
  void entry_replied(const Entry& entry);
  void forget(uint64_t ino, uint64_t nlookup);
  awaitable<Result<Attr>> getattr(Creds creds, uint64_t ino);
  awaitable<Result<Attr>> setattr(Creds creds, uint64_t ino, client::SetAttrArgs args);
  awaitable<Result<Entry>> mknod(Creds creds, uint64_t parent, std::string name, uint32_t mode,
                                 uint64_t rdev);
  awaitable<Result<Entry>> symlink(Creds creds, std::string target, uint64_t parent,
                                   std::string name);
  awaitable<Result<std::string>> readlink(Creds creds, uint64_t ino);
  awaitable<Result<Entry>> link(Creds creds, uint64_t ino, uint64_t new_parent,
                                std::string new_name);
  awaitable<Status> unlink(Creds creds, uint64_t parent, std::string name, bool directory);
  awaitable<Status> rename(Creds creds, uint64_t parent, std::string name, uint64_t new_parent,
                           std::string new_name, uint32_t flags);

  // Files.
  awaitable<Result<Opened>> open(Creds creds, uint64_t ino, int flags);
  awaitable<Result<Opened>> create(Creds creds, uint64_t parent, std::string name, uint32_t mode,
                                   int flags);
  awaitable<Result<std::string>> read(uint64_t fh, uint64_t offset, uint64_t size);
  // `page_cache_write`: the kernel writes back its cache (offsets are final).
  awaitable<Result<uint64_t>> write(uint64_t fh, int open_flags, bool page_cache_write,
                                    uint64_t offset, std::string data);
  // A file that is not a directory loses setuid, and setgid with group-execute, by a
  // mode change with `caller`'s credentials; nothing to drop, nothing sent. With
  // HANDLE_KILLPRIV_V2 the kernel leaves this to us (fuse/killpriv_v2.h) before a write
  // by a caller other than root that it sends past its cache, and for chown(f, -1, -1);
  // without it, it sent the same mode change itself.
  awaitable<Status> drop_privileges(Creds caller, uint64_t ino);
  awaitable<Status> flush(uint64_t fh);
  awaitable<Status> fsync(uint64_t fh);
  // Directory changes are durable when this returns.
  // The directory of handle `dh` (opendir).
  awaitable<Status> fsyncdir(uint64_t dh);
  // `flock_release`: the kernel took a flock lock on this open file, named `lock_owner`.
  awaitable<Status> release(uint64_t fh, bool flock_release = false, uint64_t lock_owner = 0);

  // Directories. readdir returns at most `max_items` items after `offset`; items the
  // caller cannot fit are served again by the next call.
  awaitable<Result<uint64_t>> opendir(Creds creds, uint64_t ino);
  awaitable<Result<std::vector<DirItem>>> readdir(Creds creds, uint64_t dh, uint64_t offset,
                                                  size_t max_items, bool plus);
  void releasedir(uint64_t dh);

  // Extended attributes.
  awaitable<Result<std::string>> getxattr(Creds creds, uint64_t ino, std::string name);
  awaitable<Status> setxattr(Creds creds, uint64_t ino, std::string name, std::string value,
                             int flags);
  awaitable<Result<std::vector<std::string>>> listxattr(Creds creds, uint64_t ino);
  awaitable<Status> removexattr(Creds creds, uint64_t ino, std::string name);

  awaitable<Result<struct statvfs>> statfs(Creds creds);
  // Pushes everything buffered (destroy / umount).
  awaitable<Status> sync_all();

  // What the kernel was told under exclusive caching, with long timeouts, for it to be
  // invalidated when the right is recalled: the names (a directory and a name in it,
  // both kernel numbers; negative entries too), those of directories apart (expiring
  // them is enough: a directory's inode holds no size the kernel trusts, and dropping
  // its name would drop every name and page cached below it), and every inode it holds.
  // Taking the names forgets them.
  struct KernelKnowledge {
    using Name = std::pair<uint64_t, std::string>;
    std::vector<Name> names;
    std::vector<Name> directory_names;
    std::vector<uint64_t> inodes;
  };
  // The part of it `scope` names: everything, or the names in the directories it lists
  // (dfs numbers) and every kernel inode of what it lists (all incarnations). Names
  // elsewhere stay remembered. The files of `scope.files` get a new incarnation.
  KernelKnowledge take_kernel_knowledge(const client::CacheRights::KernelScope& scope);
  // The kernel inode numbers the kernel holds of dfs file `ino` (all incarnations).
  std::vector<uint64_t> kernel_inodes_of(uint64_t ino) const {
    return inodes_.incarnations_held(ino);
  }
  // Exclusive caching is taken up after a shared period: every regular file the kernel
  // was shown meanwhile gets a new incarnation, so that the kernel's next lookup drops a
  // size it may hold stale (exclusive, the kernel's names are not asked again for 60 s).
  void renew_shared_incarnations();

 private:
  struct DirHandle {
    uint64_t ino = 0;  // dfs inode number
    std::vector<proto::DirEntry> batch;
    uint64_t batch_after = 0;  // the cookie the batch was fetched after
    bool batch_valid = false;
    bool batch_plus = false;
    bool eof = false;
  };

  // The kernel's timeouts for what this mount is alone on or shares
  // (FileClient::kernel_may_cache), and for the rest.
  const KernelTimeouts& timeouts(bool alone) const {
    return alone ? options_.alone : options_.shared;
  }
  // An entry for the kernel. Shared, a regular file whose size or mtime changed since
  // the kernel's inode was made gets a new incarnation (InodeTable), so that the
  // kernel drops the size it would otherwise keep trusting.
  // `parent` (a kernel number; 0: none, an open's entry) decides the name's timeout.
  // The timeouts are long for what the mount is alone on, and for what it shares when
  // `just_answered` (the MDS answered `inode` now, under the share; a listing fetched
  // earlier may predate it).
  Entry make_entry(uint64_t parent, const proto::Inode& inode, bool just_answered = true);
  // An entry for `name` in kernel directory `parent` is being given to the kernel;
  // `directory`: it names a directory; `target`: its inode (dfs number; 0: a missing
  // name).
  void note_name(uint64_t parent, const std::string& name, bool directory, uint64_t target);
  struct GivenName;
  // Moves the names `in_scope` accepts (any note of the name) into `k`, each once, as
  // its newest note has it.
  void take_names(KernelKnowledge& k, const std::function<bool(const GivenName&)>& in_scope);
  Attr make_attr(const proto::Inode& inode) const;
  // An O_APPEND open through the page cache has the kernel place each write at the end
  // it knows. Once the right on the file went (a recall of the file or its directory),
  // that end is stale and records land over other mounts' ones: outside exclusive
  // caching such opens go to the client directly, which appends where the MDS says.
  bool append_may_outlive_right(int flags) const;
  // For an open of a file this mount is alone on: whether kernel inode `fuse_ino` holds
  // `inode`'s size, so that the open may use the page cache. Not when it is an older
  // incarnation, or was made while shared with another size or mtime (another mount
  // changed the file before this one was given it: the file gets a new incarnation).
  bool kernel_size_current(uint64_t fuse_ino, const proto::Inode& inode);
  // For a read-only open of a file this mount shares for reading: whether kernel inode
  // `fuse_ino` may keep its pages. Only the current incarnation, made while shared with
  // the size and mtime the MDS answers now (a share is given while nothing changes the
  // file, and every change recalls it, which makes a new incarnation): its pages were
  // read under shares since, or from what the MDS still has. Otherwise the file gets a
  // new incarnation.
  bool kernel_pages_shared(uint64_t fuse_ino, const proto::Inode& inode);
  awaitable<Status> fill_batch(Creds creds, DirHandle& dir, uint64_t after, bool plus);

  client::FileClient& client_;
  VfsOptions options_;
  InodeTable inodes_;
  std::unordered_map<uint64_t, std::shared_ptr<DirHandle>> dirs_;
  // Names given with a timeout (of a directory the mount is alone on or shares) within
  // it (older ones the kernel asks about again anyway), oldest first; bounded.
  struct GivenName {
    Clock::time_point at;
    uint64_t parent = 0;
    std::string name;
    bool directory = false;
    uint64_t target = 0;
  };
  std::deque<GivenName> names_given_;
  Clock::duration names_horizon_;  // the longest the kernel keeps a name given alone
  // Shared: the size and mtime each kernel inode of a regular file was made with.
  struct Told {
    uint64_t size = 0;
    int64_t mtime_sec = 0;
    uint32_t mtime_nsec = 0;
  };
  std::unordered_map<uint64_t, Told> told_;
  uint64_t next_dh_ = 1;
};

}  // namespace dfs::vfs
