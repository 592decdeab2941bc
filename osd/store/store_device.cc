#include "osd/store/store_device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "osd/store/posix_io.h"

namespace dfs::osd {
namespace {

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The whole of a /proc or /sys file (their sizes read as 0, so no read_small_file).
std::string read_proc_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::string mount_source_of(std::string_view mountinfo, unsigned major, unsigned minor) {
  const std::string wanted = std::to_string(major) + ":" + std::to_string(minor);
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
    std::istringstream fields(line);
    std::string id, parent, device;
    fields >> id >> parent >> device;
    if (device != wanted) continue;
    const size_t separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream tail(line.substr(separator + 3));
    std::string fstype, source;
    tail >> fstype >> source;
    if (!source.empty()) return source;
  }
  return "";
}

Result<StoreDevice> store_device_of(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return unexpected(errno_error(errno, "stat " + dir));
  const std::string boot_id = trimmed(read_proc_file("/proc/sys/kernel/random/boot_id"));
  if (boot_id.empty()) {
    return make_error(ErrorCode::kIoError, "cannot read /proc/sys/kernel/random/boot_id");
  }
  const unsigned maj = major(st.st_dev), min = minor(st.st_dev);
  const std::string number = std::to_string(maj) + ":" + std::to_string(min);
  StoreDevice out;
  out.id = boot_id + "/" + number;
  out.name = mount_source_of(read_proc_file("/proc/self/mountinfo"), maj, min);
  if (out.name.empty()) out.name = number;
  // A loop device's image lives on another file system; saying which helps whoever
  // wonders why two OSDs' disks fill together.
  const std::string backing =
      trimmed(read_proc_file("/sys/dev/block/" + number + "/loop/backing_file"));
  if (!backing.empty()) out.name += " on " + backing;
  return out;
}

}  // namespace dfs::osd
