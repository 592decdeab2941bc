// Overlay: writes not yet in a store, as a sorted map from key to its new value
// (nullopt: deleted), and the view of a store with overlays on top. GroupTxn (a group's
// writes while it is decided) and ProjectedWrites (the groups a replicated rank's
// leader has proposed and not yet seen committed) are built on it.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mds/store/meta_store.h"

namespace dfs::mds {

using Overlay = std::map<std::string, std::optional<std::string>, std::less<>>;

// The pairs of `base` with `layers` on top (later layers win) with begin <= key < end,
// in key order, at most `limit` of them. Errors: the base's.
Result<std::vector<KeyValue>> scan_with_overlays(const KvReader& base,
                                                 std::initializer_list<const Overlay*> layers,
                                                 std::string_view begin, std::string_view end,
                                                 size_t limit);

}  // namespace dfs::mds
