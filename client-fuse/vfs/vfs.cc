#include "client-fuse/vfs/vfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string_view>
#include <unordered_set>

#include "client-fuse/libdfs/attr_predict.h"
#include "client-fuse/vfs/attr.h"

namespace dfs::vfs {
namespace {

constexpr uint64_t kBlockBytes = 4096;

using client::is_dot;

}  // namespace

Vfs::Vfs(client::FileClient& client, VfsOptions options, uint64_t root_ino)
    : client_(client),
      options_(options),
      inodes_(root_ino),
      names_horizon_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
          std::max(options_.alone.entry, options_.alone.negative)))) {}

Entry Vfs::make_entry(uint64_t parent, const proto::Inode& inode, bool just_answered) {
  auto may_cache = [&](uint64_t ino) {
    return just_answered ? client_.kernel_may_cache(ino) : client_.alone(ino);
  };
  Entry e;
  e.ino = inodes_.to_fuse(inode.ino());
  const bool alone = client_.alone(inode.ino());
  if (!alone && S_ISREG(inode.mode())) {
    Told now{inode.size(), inode.mtime().sec(), inode.mtime().nsec()};
    auto it = told_.find(e.ino);
    if (it != told_.end() && inodes_.lookups(e.ino) > 0 &&
        (it->second.size != now.size || it->second.mtime_sec != now.mtime_sec ||
         it->second.mtime_nsec != now.mtime_nsec)) {
      inodes_.new_incarnation(inode.ino());
      e.ino = inodes_.to_fuse(inode.ino());
    }
    told_[e.ino] = now;
  }
  e.attr = to_stat(inode, e.ino);
  e.attr_timeout = timeouts(may_cache(inode.ino())).attr;
  // The name stays valid while nobody else can change the directory it is in; a
  // regular file's only while nobody else can change the file too: the kernel keeps
  // its own size of the inode (the writeback cache), and only a lookup leads to a new
  // incarnation with the size another mount left.
  const bool name_cached = parent == 0 ? alone
                                       : may_cache(inodes_.to_dfs(parent)) &&
                                             (!S_ISREG(inode.mode()) || may_cache(inode.ino()));
  e.entry_timeout = timeouts(name_cached).entry;
  return e;
}

Attr Vfs::make_attr(const proto::Inode& inode) const {
  return Attr{to_stat(inode, inodes_.to_fuse(inode.ino())),
              timeouts(client_.kernel_may_cache(inode.ino())).attr};
}

void Vfs::note_name(uint64_t parent, const std::string& name, bool directory,
                    uint64_t target) {
  constexpr size_t kMaxNamesRemembered = 1u << 20;
  if (!client_.kernel_may_cache(inodes_.to_dfs(parent))) return;  // given with no timeout
  auto now = Clock::now();
  while (!names_given_.empty() &&
         (names_given_.front().at + names_horizon_ < now ||
          names_given_.size() >= kMaxNamesRemembered)) {
    names_given_.pop_front();
  }
  names_given_.push_back(GivenName{now, parent, name, directory, target});
}

bool Vfs::append_may_outlive_right(int flags) const {
  return (flags & O_APPEND) && options_.writeback_cache && !client_.exclusive_now();
}

bool Vfs::kernel_size_current(uint64_t fuse_ino, const proto::Inode& inode) {
  if (!S_ISREG(inode.mode())) return true;
  if (fuse_ino != inodes_.to_fuse(inode.ino())) return false;  // an older incarnation
  auto it = told_.find(fuse_ino);
  if (it == told_.end()) return true;  // made while alone: the kernel's size is right
  const bool current = it->second.size == inode.size() &&
                       it->second.mtime_sec == inode.mtime().sec() &&
                       it->second.mtime_nsec == inode.mtime().nsec();
  if (current) {
    // From here on the size changes only through this kernel (the mount is alone on
    // the file): what it was told no longer says anything.
    told_.erase(it);
  } else {
    // Another mount changed the file after the kernel's inode was made (before this
    // mount was given it). This handle reads and writes directly; the next lookup makes
    // a new kernel inode, whose opens cache.
    inodes_.new_incarnation(inode.ino());
  }
  return current;
}

bool Vfs::kernel_pages_shared(uint64_t fuse_ino, const proto::Inode& inode) {
  if (fuse_ino != inodes_.to_fuse(inode.ino())) return false;  // an older incarnation
  auto it = told_.find(fuse_ino);
  if (it != told_.end() && it->second.size == inode.size() &&
      it->second.mtime_sec == inode.mtime().sec() &&
      it->second.mtime_nsec == inode.mtime().nsec()) {
    return true;
  }
  // Made while this mount was alone on the file (its pages may date from before a
  // recall it was held open across), or another mount changed the file since: this
  // handle reads directly, and the next lookup makes a new kernel inode.
  inodes_.new_incarnation(inode.ino());
  return false;
}

void Vfs::renew_shared_incarnations() {
  for (const auto& [fuse_ino, told] : told_) inodes_.new_incarnation(inodes_.to_dfs(fuse_ino));
  told_.clear();
}

void Vfs::take_names(KernelKnowledge& k,
                     const std::function<bool(const GivenName&)>& in_scope) {
  // A name may have been given more than once: a negative entry, then the directory
  // made under it. The newest says what the kernel holds now (a directory's name only
  // expires; invalidating it as a missing name would drop everything below it).
  std::set<std::pair<uint64_t, std::string_view>> taken;
  for (const auto& given : names_given_) {
    if (in_scope(given)) taken.emplace(given.parent, given.name);
  }
  if (taken.empty()) return;
  std::set<std::pair<uint64_t, std::string_view>> told;
  for (auto it = names_given_.rbegin(); it != names_given_.rend(); ++it) {
    std::pair<uint64_t, std::string_view> key(it->parent, it->name);
    if (!taken.count(key) || !told.insert(key).second) continue;
    (it->directory ? k.directory_names : k.names).emplace_back(it->parent, it->name);
  }
  // Decided before anything moves: the keys look into the names.
  std::vector<bool> keep;
  keep.reserve(names_given_.size());
  for (const auto& given : names_given_) keep.push_back(!taken.count({given.parent, given.name}));
  std::deque<GivenName> kept;
  for (size_t i = 0; i < names_given_.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(names_given_[i]));
  }
  names_given_ = std::move(kept);
}

Vfs::KernelKnowledge Vfs::take_kernel_knowledge(
    const client::CacheRights::KernelScope& scope) {
  // Files given up get a new kernel inode at their next lookup (KernelScope::files).
  for (uint64_t file : scope.files) {
    if (inodes_.held(file)) inodes_.new_incarnation(file);  // else the kernel has none
  }
  const std::unordered_set<uint64_t> inos(scope.inos.begin(), scope.inos.end());
  auto in_scope = [&](uint64_t fuse_ino) {
    return scope.everything || inos.count(inodes_.to_dfs(fuse_ino)) > 0;
  };
  // The names in the directories in scope, and the names of the inodes in scope: the
  // kernel trusts its size of a regular file's inode (the writeback cache), so a name
  // kept in a directory still cached must lead to the file's next incarnation.
  const std::unordered_set<uint64_t> files(scope.files.begin(), scope.files.end());
  KernelKnowledge k;
  take_names(k, [&](const GivenName& given) {
    return in_scope(given.parent) || files.count(given.target) > 0 ||
           (given.target != 0 && inos.count(given.target) > 0);
  });
  // Every incarnation the kernel holds, and the root, which the kernel never looks up
  // but whose attributes it was given too.
  std::set<uint64_t> inodes;
  for (uint64_t fuse_ino : inodes_.all()) {
    if (in_scope(fuse_ino)) inodes.insert(fuse_ino);
  }
  if (in_scope(kFuseRootIno)) inodes.insert(kFuseRootIno);
  k.inodes.assign(inodes.begin(), inodes.end());
  return k;
}

void Vfs::entry_replied(const Entry& entry) {
  if (entry.ino != 0) inodes_.add_lookup(entry.ino);
}

void Vfs::forget(uint64_t ino, uint64_t nlookup) {
  bool file_gone = inodes_.forget(ino, nlookup);
  if (inodes_.lookups(ino) == 0) told_.erase(ino);
  if (file_gone) client_.forget(inodes_.to_dfs(ino));
}

awaitable<Result<Entry>> Vfs::lookup(Creds creds, uint64_t parent, std::string name) {
  auto inode = co_await client_.lookup(creds, inodes_.to_dfs(parent), name);
  if (!inode) {
    const auto& t = timeouts(client_.kernel_may_cache(inodes_.to_dfs(parent)));
    if (inode.error().code() == ErrorCode::kNotFound && t.negative > 0) {
      Entry negative;
      negative.entry_timeout = t.negative;
      note_name(parent, name, false, 0);
      co_return negative;
    }
    co_return unexpected(std::move(inode).error());
  }
  note_name(parent, name, S_ISDIR(inode->mode()), inode->ino());
  co_return make_entry(parent, *inode);
}

awaitable<Result<Attr>> Vfs::getattr(Creds creds, uint64_t ino) {
  DFS_CO_AWAIT_TRY(auto inode, client_.getattr(creds, inodes_.to_dfs(ino)));
  co_return make_attr(inode);
}

awaitable<Result<Attr>> Vfs::setattr(Creds creds, uint64_t ino, client::SetAttrArgs args) {
  DFS_CO_AWAIT_TRY(auto inode, client_.setattr(creds, inodes_.to_dfs(ino), std::move(args)));
  co_return make_attr(inode);
}

awaitable<Result<Entry>> Vfs::mknod(Creds creds, uint64_t parent, std::string name, uint32_t mode,
                                    uint64_t rdev) {
  DFS_CO_AWAIT_TRY(auto inode,
                   client_.mknod(creds, inodes_.to_dfs(parent), name, mode, rdev));
  note_name(parent, name, S_ISDIR(inode.mode()), inode.ino());
  co_return make_entry(parent, inode);
}

awaitable<Result<Entry>> Vfs::symlink(Creds creds, std::string target, uint64_t parent,
                                      std::string name) {
  DFS_CO_AWAIT_TRY(auto inode,
                   client_.symlink(creds, inodes_.to_dfs(parent), name, std::move(target)));
  note_name(parent, name, false, inode.ino());
  co_return make_entry(parent, inode);
}

awaitable<Result<std::string>> Vfs::readlink(Creds creds, uint64_t ino) {
  co_return co_await client_.readlink(creds, inodes_.to_dfs(ino));
}

awaitable<Result<Entry>> Vfs::link(Creds creds, uint64_t ino, uint64_t new_parent,
                                   std::string new_name) {
  DFS_CO_AWAIT_TRY(auto inode, client_.link(creds, inodes_.to_dfs(ino), inodes_.to_dfs(new_parent),
                                            new_name));
  note_name(new_parent, new_name, false, inode.ino());
  co_return make_entry(new_parent, inode);
}

awaitable<Status> Vfs::unlink(Creds creds, uint64_t parent, std::string name, bool directory) {
  DFS_CO_AWAIT_CHECK(client_.unlink(creds, inodes_.to_dfs(parent), std::move(name), directory));
  co_return ok_status();
}

awaitable<Status> Vfs::rename(Creds creds, uint64_t parent, std::string name, uint64_t new_parent,
                              std::string new_name, uint32_t flags) {
  DFS_CO_AWAIT_CHECK(client_.rename(creds, inodes_.to_dfs(parent), std::move(name),
                                    inodes_.to_dfs(new_parent), std::move(new_name), flags));
  co_return ok_status();
}

awaitable<Result<Opened>> Vfs::open(Creds creds, uint64_t ino, int flags) {
  DFS_CO_AWAIT_TRY(auto file, client_.open(creds, inodes_.to_dfs(ino), flags));
  Opened out;
  out.fh = file.fh;
  if (client_.alone(file.inode.ino())) {
    out.keep_cache = !append_may_outlive_right(flags) && kernel_size_current(ino, file.inode);
  } else {
    out.keep_cache = client_.read_shared(file.inode.ino()) &&
                     (flags & O_ACCMODE) == O_RDONLY && kernel_pages_shared(ino, file.inode);
  }
  out.direct_io = !out.keep_cache && options_.writeback_cache;
  out.entry = make_entry(0, file.inode);
  co_return out;
}

awaitable<Result<Opened>> Vfs::create(Creds creds, uint64_t parent, std::string name, uint32_t mode,
                                      int flags) {
  DFS_CO_AWAIT_TRY(auto file,
                   client_.create(creds, inodes_.to_dfs(parent), name, mode, flags));
  Opened out;
  out.fh = file.fh;
  out.keep_cache = client_.alone(file.inode.ino()) && !append_may_outlive_right(flags);
  out.direct_io = !out.keep_cache && options_.writeback_cache;
  note_name(parent, name, false, file.inode.ino());
  out.entry = make_entry(parent, file.inode);
  co_return out;
}

awaitable<Result<std::string>> Vfs::read(uint64_t fh, uint64_t offset, uint64_t size) {
  co_return co_await client_.read(fh, offset, size);
}

awaitable<Status> Vfs::drop_privileges(Creds caller, uint64_t ino) {
  DFS_CO_AWAIT_TRY(auto now, getattr(caller, ino));
  const uint32_t mode = now.attr.st_mode & 07777;
  const uint32_t kept = client::mode_without_setid(mode);
  if (S_ISDIR(now.attr.st_mode) || kept == mode) co_return ok_status();
  client::SetAttrArgs args;
  args.valid = client::kSetMode;
  args.mode = kept;
  auto changed = co_await setattr(std::move(caller), ino, std::move(args));
  if (!changed) co_return unexpected(std::move(changed).error());
  co_return ok_status();
}

awaitable<Result<uint64_t>> Vfs::write(uint64_t fh, int open_flags, bool page_cache_write,
                                       uint64_t offset, std::string data) {
  // A write from the page cache has its final offset (the kernel placed an O_APPEND
  // write itself); any other O_APPEND write goes to the end of file as this client
  // knows it: the kernel's size may be stale (a shared file opened for direct I/O).
  bool append = (open_flags & O_APPEND) && !page_cache_write;
  DFS_CO_AWAIT_TRY(auto written,
                   client_.write(fh, offset, std::move(data), append, page_cache_write));
  // Shared: the size and mtime reach the MDS with the write (another mount's open and
  // stat must see them, and the kernel stops sending FLUSH at close once it got ENOSYS).
  if (!client_.alone_handle(fh)) DFS_CO_AWAIT_CHECK(client_.flush(fh));
  co_return written;
}

awaitable<Status> Vfs::flush(uint64_t fh) { co_return co_await client_.flush(fh); }
awaitable<Status> Vfs::fsync(uint64_t fh) { co_return co_await client_.fsync(fh); }
awaitable<Status> Vfs::fsyncdir(uint64_t dh) {
  auto it = dirs_.find(dh);
  if (it == dirs_.end()) co_return co_await client_.sync_metadata();  // not opened here
  co_return co_await client_.fsync_dir(it->second->ino);
}
awaitable<Status> Vfs::release(uint64_t fh, bool flock_release, uint64_t lock_owner) {
  co_return co_await client_.release(fh, flock_release, lock_owner);
}

awaitable<Result<uint64_t>> Vfs::opendir(Creds creds, uint64_t ino) {
  auto dir = std::make_shared<DirHandle>();
  dir->ino = inodes_.to_dfs(ino);
  uint64_t dh = next_dh_++;
  dirs_[dh] = std::move(dir);
  co_return dh;
}

void Vfs::releasedir(uint64_t dh) { dirs_.erase(dh); }

awaitable<Status> Vfs::fill_batch(Creds creds, DirHandle& dir, uint64_t after, bool plus) {
  DFS_CO_AWAIT_TRY(auto reply,
                   client_.readdir(creds, dir.ino, after, options_.readdir_batch, plus));
  dir.batch.assign(std::make_move_iterator(reply.mutable_entries()->begin()),
                   std::make_move_iterator(reply.mutable_entries()->end()));
  dir.batch_after = after;
  dir.batch_valid = true;
  dir.batch_plus = plus;
  dir.eof = reply.eof();
  co_return ok_status();
}

awaitable<Result<std::vector<DirItem>>> Vfs::readdir(Creds creds, uint64_t dh, uint64_t offset,
                                                     size_t max_items, bool plus) {
  auto it = dirs_.find(dh);
  if (it == dirs_.end()) co_return make_error(ErrorCode::kInvalidArgument, "bad directory handle");
  auto dir = it->second;
  // Find where `offset` (a cookie) falls in the batch we hold; fetch when it does not.
  size_t start = 0;
  bool have = false;
  // Offset 0 is a fresh listing (opendir or rewinddir): it must see recent changes.
  if (offset != 0 && dir->batch_valid && (dir->batch_plus || !plus)) {
    if (offset == dir->batch_after) {
      have = true;
    } else {
      for (size_t i = 0; i < dir->batch.size(); ++i) {
        if (dir->batch[i].cookie() == offset) {
          start = i + 1;
          have = true;
          break;
        }
      }
    }
  }
  if (!have || (start == dir->batch.size() && !dir->eof)) {
    DFS_CO_AWAIT_CHECK(fill_batch(creds, *dir, offset, plus));
    start = 0;
  }
  std::vector<DirItem> items;
  for (size_t i = start; i < dir->batch.size() && items.size() < max_items; ++i) {
    const proto::DirEntry& d = dir->batch[i];
    DirItem item;
    item.name = d.name();
    item.next_offset = d.cookie();
    if (plus && d.has_inode() && d.inode().ino() != 0 && !is_dot(d.name())) {
      item.entry = make_entry(inodes_.to_fuse(dir->ino), d.inode(), /*just_answered=*/false);
      item.counts_lookup = true;
      note_name(inodes_.to_fuse(dir->ino), item.name, S_ISDIR(d.inode().mode()),
                d.inode().ino());
    } else {
      item.entry.ino = 0;
      item.entry.attr.st_ino = InodeTable::shown_ino(inodes_.to_fuse(d.ino()));
      item.entry.attr.st_mode = d.type();
    }
    items.push_back(std::move(item));
  }
  co_return items;
}

awaitable<Result<std::string>> Vfs::getxattr(Creds creds, uint64_t ino, std::string name) {
  co_return co_await client_.getxattr(creds, inodes_.to_dfs(ino), std::move(name));
}

awaitable<Status> Vfs::setxattr(Creds creds, uint64_t ino, std::string name, std::string value,
                                int flags) {
  co_return co_await client_.setxattr(creds, inodes_.to_dfs(ino), std::move(name), std::move(value),
                                      static_cast<uint32_t>(flags));
}

awaitable<Result<std::vector<std::string>>> Vfs::listxattr(Creds creds, uint64_t ino) {
  co_return co_await client_.listxattr(creds, inodes_.to_dfs(ino));
}

awaitable<Status> Vfs::removexattr(Creds creds, uint64_t ino, std::string name) {
  co_return co_await client_.removexattr(creds, inodes_.to_dfs(ino), std::move(name));
}

awaitable<Result<struct statvfs>> Vfs::statfs(Creds creds) {
  DFS_CO_AWAIT_TRY(auto fs, client_.statfs(creds));
  struct statvfs st {};
  st.f_bsize = kBlockBytes;
  st.f_frsize = kBlockBytes;
  st.f_blocks = fs.total_bytes / kBlockBytes;
  st.f_bfree = fs.available_bytes / kBlockBytes;
  st.f_bavail = st.f_bfree;
  // Inodes cost no fixed space: report what is used plus room for one per free block.
  st.f_ffree = st.f_bfree;
  st.f_favail = st.f_bfree;
  st.f_files = fs.inodes + st.f_ffree;
  st.f_namemax = 255;
  co_return st;
}

awaitable<Status> Vfs::sync_all() { co_return co_await client_.sync_all(); }

}  // namespace dfs::vfs
