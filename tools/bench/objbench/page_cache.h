// Dropping the kernel's page cache before a read phase, so that reads on both sides
// come from the disk rather than from memory left over by the writes.
#pragma once

#include <string>

namespace dfs::bench {

// sync(), then writes "3" to /proc/sys/vm/drop_caches. Needs root; returns whether
// the caches were dropped and, if not, why in *why_not.
bool drop_page_cache(std::string* why_not);

}  // namespace dfs::bench
