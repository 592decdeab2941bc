// Typed access to the metadata records (inodes, dentries, queues, counters) over any
// KvReader: the store itself for reads, a GroupTxn for the ops that mutate. Stateless
// helpers; they run wherever their reader may be used (a pool thread).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/proto/mds.pb.h"
#include "mds/store/group_txn.h"
#include "mds/store/keys.h"

namespace dfs::mds {

struct Dentry {
  uint64_t parent = 0;
  uint64_t slot = 0;  // the readdir cookie of the entry
  std::string name;
  uint64_t ino = 0;
  uint32_t type = 0;
};

// Errors of every function here: kCorruption (undecodable record), kIoError.

// The inode, or nullopt.
Result<std::optional<proto::Inode>> find_inode(const KvReader& kv, uint64_t ino);
// The inode; `missing` (kStale, kNotFound) when there is none. Its inline data is
// not loaded (it has its own key, so listing and changing attributes never reads or
// rewrites it): see take_inline_data.
Result<proto::Inode> load_inode(const KvReader& kv, uint64_t ino,
                                ErrorCode missing = ErrorCode::kStale);
// An inline file's data ("" for other inodes). Stores written before the data had its
// own key keep it inside the inode record: it is moved out of `inode` then, so that a
// later put_inode does not write it back over the data the caller sets.
Result<std::string> take_inline_data(const KvReader& kv, proto::Inode& inode);
// The entry `name` of directory `parent`, or nullopt.
Result<std::optional<Dentry>> find_dentry(const KvReader& kv, uint64_t parent,
                                          std::string_view name);
// Entries of `dir` with slot > `after`, in slot order, at most `limit`.
Result<std::vector<Dentry>> list_dentries(const KvReader& kv, uint64_t dir, uint64_t after,
                                          size_t limit);
Result<bool> dir_is_empty(const KvReader& kv, uint64_t dir);
Result<uint64_t> read_counter(const KvReader& kv, std::string_view name);

// Meta counter names (FORMAT.md).
inline constexpr char kNextIno[] = "next_ino";
inline constexpr char kLogIndex[] = "log_index";
inline constexpr char kInodeCount[] = "inodes";
inline constexpr char kOrphanCount[] = "orphans";
inline constexpr char kPurgeCount[] = "purge_inodes";
inline constexpr char kPurgeBytes[] = "purge_bytes";
inline constexpr char kFormatVersion[] = "format";

// Writes through a GroupTxn (inside an entry scope).
class MetaWriter {
 public:
  explicit MetaWriter(GroupTxn& txn) : txn_(txn) {}
  GroupTxn& txn() { return txn_; }

  // Writes the inode's record. Inline data that `inode` carries (a reply's copy, or a
  // record of the earlier layout) goes to its own key; an inode without any leaves that
  // key alone, so an op that empties a file's data calls put_inline_data(ino, "").
  void put_inode(const proto::Inode& inode);
  // Sets an inline file's data; "" deletes the key.
  void put_inline_data(uint64_t ino, const std::string& data);
  void delete_inode(uint64_t ino);  // and its inline data
  // Adds `name` -> ino in `parent` with the lowest free slot of its bucket; returns it.
  // Errors: kNoSpace (all 256 slots of the bucket taken), kCorruption, kIoError.
  Result<uint64_t> add_dentry(uint64_t parent, std::string_view name, uint64_t ino, uint32_t type);
  void remove_dentry(const Dentry& dentry);
  // Points an existing entry at another inode (same slot, so cookies stay).
  void repoint_dentry(const Dentry& dentry, uint64_t ino, uint32_t type);
  void set_counter(std::string_view name, uint64_t value);
  Status add_to_counter(std::string_view name, int64_t delta);

 private:
  GroupTxn& txn_;
};

}  // namespace dfs::mds
