#include "tools/bench/objbench/page_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dfs::bench {

bool drop_page_cache(std::string* why_not) {
  if (::geteuid() != 0) {
    *why_not = "not root";
    return false;
  }
  ::sync();  // dirty pages cannot be dropped; write them first
  int fd = ::open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    *why_not = std::string("opening /proc/sys/vm/drop_caches: ") + std::strerror(errno);
    return false;
  }
  bool ok = ::write(fd, "3", 1) == 1;
  if (!ok) *why_not = std::string("writing /proc/sys/vm/drop_caches: ") + std::strerror(errno);
  ::close(fd);
  return ok;
}

}  // namespace dfs::bench
