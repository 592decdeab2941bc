#include "client-fuse/mount/options.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "common/config/config.h"

namespace dfs::mount {
namespace {

Unexpected bad(std::string what) {
  return make_error(ErrorCode::kInvalidArgument, std::move(what));
}

Result<double> parse_seconds(const std::string& key, const std::string& value) {
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !(v >= 0) || v > 86400) {
    return bad("option " + key + " wants a number of seconds, not '" + value + "'");
  }
  return v;
}

Result<uint64_t> parse_uint(const std::string& key, const std::string& value) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return bad("option " + key + " wants a whole number, not '" + value + "'");
  }
  return v;
}

// Kernel mount flags libfuse knows; passed through as given.
const std::set<std::string>& kernel_flags() {
  static const std::set<std::string> flags = {
      "suid",       "nosuid",     "dev",         "nodev",         "exec",
      "noexec",     "atime",      "noatime",     "diratime",      "nodiratime",
      "relatime",   "norelatime", "strictatime", "nostrictatime", "lazytime",
      "nolazytime", "sync",       "async",       "dirsync"};
  return flags;
}

// Options of mount(8) and fstab that mean nothing to the file system itself.
bool ignored(const std::string& key) {
  static const std::set<std::string> names = {
      "_netdev",     "auto",       "noauto", "defaults", "nofail", "user",
      "users",       "nouser",     "owner",  "group",    "rw",     "default_permissions",
      "allow_other", "nosymfollow"};
  return names.count(key) || key.rfind("x-", 0) == 0 || key == "comment";
}

Status apply_option(MountOptions& o, const std::string& key,
                    const std::optional<std::string>& value) {
  auto need = [&]() -> Result<std::string> {
    if (!value || value->empty()) return bad("option " + key + " needs a value (" + key + "=...)");
    return *value;
  };
  auto flag = [&]() -> Status {
    if (value) return bad("option " + key + " takes no value");
    return ok_status();
  };
  if (key == "name") {
    o.name = DFS_TRY(need());
  } else if (key == "secretfile") {
    o.secretfile = DFS_TRY(need());
    if (::access(o.secretfile.c_str(), R_OK) != 0) {
      return bad("secretfile " + o.secretfile + " cannot be read");
    }
  } else if (key == "secret") {
    return bad("secret= would put a key on the command line; use secretfile=PATH");
  } else if (key == "conf") {
    o.conf = DFS_TRY(need());
    if (::access(o.conf.c_str(), R_OK) != 0) return bad("conf file " + o.conf + " cannot be read");
  } else if (key == "fs") {
    o.fs = DFS_TRY(need());
  } else if (key == "fsid") {
    o.fsid = DFS_TRY(need());
  } else if (key == "ro") {
    DFS_TRY_STATUS(flag());
    o.read_only = true;
  } else if (key == "entry_timeout") {
    o.entry_timeout = DFS_TRY(parse_seconds(key, DFS_TRY(need())));
  } else if (key == "attr_timeout") {
    o.attr_timeout = DFS_TRY(parse_seconds(key, DFS_TRY(need())));
  } else if (key == "negative_timeout") {
    o.negative_timeout = DFS_TRY(parse_seconds(key, DFS_TRY(need())));
  } else if (key == "op_timeout" || key == "mount_timeout") {
    uint64_t s = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (s == 0 || s > 86400) return bad("option " + key + " must be 1..86400 seconds");
    (key == "op_timeout" ? o.op_timeout_s : o.mount_timeout_s) = static_cast<uint32_t>(s);
  } else if (key == "cache") {
    std::string mode = DFS_TRY(need());
    if (mode != "exclusive" && mode != "shared") return bad("cache must be exclusive or shared");
    o.exclusive = mode == "exclusive";
  } else if (key == "readahead_kb") {
    o.readahead_bytes = DFS_TRY(parse_uint(key, DFS_TRY(need()))) * 1024;
  } else if (key == "listing_data_kb") {
    uint64_t kb = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (kb > 1024) return bad("option listing_data_kb must be 0..1024");
    o.listing_data_bytes = static_cast<uint32_t>(kb * 1024);
  } else if (key == "prefill_kb") {
    uint64_t kb = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (kb > (1u << 20)) return bad("option prefill_kb must be 0..1048576");
    o.prefill_bytes = kb * 1024;
  } else if (key == "prefetch_listings") {
    uint64_t n = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (n > 64) return bad("option prefetch_listings must be 0..64");
    o.prefetch_listings = static_cast<uint32_t>(n);
  } else if (key == "write_behind_mb") {
    uint64_t mb = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (mb > 4096) return bad("option write_behind_mb must be 0..4096");
    o.write_behind_bytes = mb << 20;
  } else if (key == "data_ahead_mb") {
    uint64_t mb = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (mb > 4096) return bad("option data_ahead_mb must be 0..4096");
    o.data_ahead_bytes = mb << 20;
  } else if (key == "poll_us") {
    uint64_t us = DFS_TRY(parse_uint(key, DFS_TRY(need())));
    if (us > 1000000) return bad("option poll_us must be 0..1000000 microseconds");
    o.busy_poll_us = static_cast<uint32_t>(us);
  } else if (key == "writeback" || key == "nowriteback") {
    DFS_TRY_STATUS(flag());
    o.writeback_cache = key == "writeback";
  } else if (key == "acl" || key == "noacl") {
    DFS_TRY_STATUS(flag());
    o.posix_acl = key == "acl";
  } else if (key == "splice" || key == "nosplice") {
    DFS_TRY_STATUS(flag());
    o.splice = key == "splice";
  } else if (key == "killpriv" || key == "nokillpriv") {
    DFS_TRY_STATUS(flag());
    o.handle_killpriv = key == "killpriv";
  } else if (key == "debug") {
    DFS_TRY_STATUS(flag());
    o.debug = true;
    o.foreground = true;
  } else if (key == "log_file") {
    o.log_file = DFS_TRY(need());
  } else if (key == "log_level") {
    o.log_level = DFS_TRY(need());
    static const std::set<std::string> levels = {"trace", "debug", "info", "warn", "error", "off"};
    if (!levels.count(o.log_level))
      return bad("log_level must be trace, debug, info, warn or error");
  } else if (kernel_flags().count(key)) {
    DFS_TRY_STATUS(flag());
    o.kernel_options.push_back(key);
  } else if (ignored(key)) {
    // accepted for fstab and mount(8); nothing to do
  } else if (!o.sloppy) {
    return bad("unknown option '" + key + "'");
  }
  return ok_status();
}

}  // namespace

Status apply_option_list(MountOptions& options, const std::string& list) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::optional<std::string> value;
    if (eq != std::string::npos) value = item.substr(eq + 1);
    DFS_TRY_STATUS(apply_option(options, item.substr(0, eq), value));
  }
  return ok_status();
}

Result<MountOptions> parse_mount_args(const std::vector<std::string>& args) {
  MountOptions o;
  std::vector<std::string> positional;
  std::vector<std::string> lists;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help") {
      o.help = true;
      return o;
    } else if (a == "-o") {
      if (i + 1 >= args.size()) return bad("-o needs an option list");
      lists.push_back(args[++i]);
    } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
      lists.push_back(a.substr(2));
    } else if (a == "-t" || a == "-N") {
      ++i;  // mount(8) passes the type (dfs) and a namespace; neither changes anything
    } else if (a.size() > 1 && a[0] == '-' &&
               a.find_first_not_of("fvnsdh", 1) == std::string::npos) {
      for (char c : a.substr(1)) {
        if (c == 'f') o.foreground = true;
        if (c == 'v') o.verbose = true;
        if (c == 's') o.sloppy = true;
        if (c == 'd') o.debug = o.foreground = true;
        if (c == 'h') {
          o.help = true;
          return o;
        }
      }
    } else if (!a.empty() && a[0] == '-') {
      return bad("unknown flag '" + a + "'");
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 2) {
    return bad("usage: mount.dfs mon1[,mon2...][:port]:/[subdir] DIR [-o name=NAME,...] "
               "(mount.dfs --help lists the options)");
  }
  o.source_text = positional[0];
  o.mountpoint = positional[1];
  o.source = DFS_TRY(parse_source(o.source_text));
  for (const auto& list : lists) DFS_TRY_STATUS(apply_option_list(o, list));
  return o;
}

std::string fuse_mount_options(const MountOptions& options, bool is_root) {
  // libfuse splits on commas; the source text may contain some.
  std::string fsname;
  for (char c : options.source_text) {
    if (c == ',' || c == '\\') fsname.push_back('\\');
    fsname.push_back(c);
  }
  std::string out = "default_permissions,subtype=dfs,fsname=" + fsname;
  if (is_root) out += ",allow_other";
  if (options.read_only) out += ",ro";
  for (const auto& k : options.kernel_options) out += "," + k;
  return out;
}

}  // namespace dfs::mount
