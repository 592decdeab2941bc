#include "common/config/config.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace dfs {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

}  // namespace

Result<Config> Config::load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::kNotFound, "cannot read config file " + path);
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

Result<Config> Config::parse(const std::string& text, const std::string& origin) {
  Config config;
  config.origin_ = origin;
  std::string section = "global";
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t.front() == '[') {
      if (t.back() != ']' || t.size() < 3) {
        return make_error(ErrorCode::kInvalidArgument,
                          origin + ":" + std::to_string(number) + ": bad section header");
      }
      section = trim(t.substr(1, t.size() - 2));
      continue;
    }
    auto eq = t.find('=');
    if (eq == std::string::npos) {
      return make_error(ErrorCode::kInvalidArgument,
                        origin + ":" + std::to_string(number) + ": expected key = value");
    }
    std::string key = trim(t.substr(0, eq));
    // Accept both "mon addr" and "mon_addr" spellings, as Ceph users expect.
    for (char& c : key) c = (c == ' ' || c == '-') ? '_' : c;
    config.values_[section][key] = trim(t.substr(eq + 1));
  }
  return config;
}

std::optional<std::string> Config::get(const std::string& section, const std::string& key) const {
  std::vector<std::string> chain{section};
  if (auto dot = section.find('.'); dot != std::string::npos) chain.push_back(section.substr(0, dot));
  chain.push_back("global");
  for (const auto& s : chain) {
    auto sec = values_.find(s);
    if (sec == values_.end()) continue;
    auto it = sec->second.find(key);
    if (it != sec->second.end()) return it->second;
  }
  return std::nullopt;
}

std::string Config::get_or(const std::string& section, const std::string& key,
                           const std::string& fallback) const {
  return get(section, key).value_or(fallback);
}

Result<int64_t> Config::get_int(const std::string& section, const std::string& key,
                                int64_t fallback) const {
  auto v = get(section, key);
  if (!v) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  if (v->empty() || *end != '\0') {
    return make_error(ErrorCode::kInvalidArgument,
                      origin_ + ": [" + section + "] " + key + " = '" + *v + "' is not an integer");
  }
  return static_cast<int64_t>(n);
}

Result<double> Config::get_double(const std::string& section, const std::string& key,
                                  double fallback) const {
  auto v = get(section, key);
  if (!v) return fallback;
  char* end = nullptr;
  double d = std::strtod(v->c_str(), &end);
  if (v->empty() || *end != '\0') {
    return make_error(ErrorCode::kInvalidArgument,
                      origin_ + ": [" + section + "] " + key + " = '" + *v + "' is not a number");
  }
  return d;
}

void Config::set(const std::string& section, const std::string& key, const std::string& value) {
  values_[section][key] = value;
}

std::vector<std::string> Config::sections() const {
  std::vector<std::string> out;
  for (const auto& [name, values] : values_) out.push_back(name);
  return out;
}

std::vector<std::string> Config::sections_of_type(const std::string& type) const {
  std::vector<std::string> out;
  for (const auto& [name, values] : values_) {
    if (name.size() > type.size() + 1 && name.compare(0, type.size() + 1, type + ".") == 0) {
      out.push_back(name);
    }
  }
  return out;
}

std::string resolve_config_path(const std::string& flag_value) {
  if (!flag_value.empty()) return flag_value;
  if (const char* env = std::getenv("DFS_CONF"); env && *env) return env;
  return "/etc/dfs/dfs.conf";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = trim(item);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

}  // namespace dfs
