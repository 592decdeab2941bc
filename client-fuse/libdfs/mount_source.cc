#include "client-fuse/libdfs/mount_source.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace dfs::client {
namespace {

Unexpected bad(std::string what) {
  return make_error(ErrorCode::kInvalidArgument, std::move(what));
}

Result<uint16_t> parse_port(const std::string& text) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535) {
    return bad("bad port '" + text + "'");
  }
  return static_cast<uint16_t>(value);
}

struct Host {
  std::string host;
  std::optional<uint16_t> port;
};

Result<Host> parse_host(const std::string& item) {
  Host h;
  if (item.empty()) return bad("empty monitor address");
  if (item.front() == '[') {  // [v6]:port
    size_t close = item.find(']');
    if (close == std::string::npos) return bad("unterminated '[' in '" + item + "'");
    h.host = item.substr(0, close + 1);
    if (close + 1 < item.size()) {
      if (item[close + 1] != ':') return bad("bad monitor address '" + item + "'");
      h.port = DFS_TRY(parse_port(item.substr(close + 2)));
    }
    return h;
  }
  size_t colon = item.find(':');
  if (colon == std::string::npos) {
    h.host = item;
  } else {
    if (item.find(':', colon + 1) != std::string::npos) {
      return bad("bad monitor address '" + item + "' (IPv6 addresses go in [brackets])");
    }
    h.host = item.substr(0, colon);
    h.port = DFS_TRY(parse_port(item.substr(colon + 1)));
  }
  if (h.host.empty()) return bad("empty host in '" + item + "'");
  return h;
}

Result<std::string> normalise_subdir(const std::string& path) {
  std::string out;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") return bad("'..' in subdirectory '" + path + "'");
    out += "/" + part;
  }
  return out.empty() ? std::string("/") : out;
}

}  // namespace

Result<Source> parse_source(const std::string& text) {
  size_t split = text.find(":/");
  if (split == std::string::npos) {
    return bad("source '" + text + "' is not of the form mon1[,mon2...][:port]:/[subdir]");
  }
  Source out;
  out.subdir = DFS_TRY(normalise_subdir(text.substr(split + 1)));
  std::string hosts = text.substr(0, split);
  if (hosts.empty()) return out;  // monitors from the config file
  std::vector<Host> parsed;
  size_t pos = 0;
  while (pos <= hosts.size()) {
    size_t comma = hosts.find(',', pos);
    if (comma == std::string::npos) comma = hosts.size();
    parsed.push_back(DFS_TRY(parse_host(hosts.substr(pos, comma - pos))));
    pos = comma + 1;
  }
  // "mon1,mon2,mon3:6790": one trailing port for every monitor that has none.
  uint16_t fallback = kDefaultMonPort;
  size_t with_port =
      std::count_if(parsed.begin(), parsed.end(), [](const Host& h) { return h.port; });
  if (with_port == 1 && parsed.back().port) fallback = *parsed.back().port;
  for (const auto& h : parsed) {
    out.mon_addrs.push_back(h.host + ":" + std::to_string(h.port.value_or(fallback)));
  }
  return out;
}

}  // namespace dfs::client
