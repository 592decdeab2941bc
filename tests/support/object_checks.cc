#include "tests/support/object_checks.h"

#include <mutex>

#include "tests/support/test_data.h"

namespace dfs::test {

std::string ObjectSpec::content() const {
  std::string out = object_bytes(seed, size);
  for (const auto& p : patches) {
    if (out.size() < p.offset + p.size) out.resize(p.offset + p.size, '\0');
    out.replace(p.offset, p.size, object_bytes(p.seed, p.size));
  }
  return out;
}

Status write_spec(client::ObjectClient& c, const std::string& pool, const ObjectSpec& spec) {
  auto written = c.run(c.write_full(pool, spec.name, object_bytes(spec.seed, spec.size)));
  if (!written)
    return unexpected(std::move(written).error().with_context("write_full " + spec.name));
  for (const auto& p : spec.patches) {
    auto patched = c.run(c.write(pool, spec.name, p.offset, object_bytes(p.seed, p.size)));
    if (!patched) {
      return unexpected(std::move(patched).error().with_context(
          "write of " + std::to_string(p.size) + " bytes at " + std::to_string(p.offset) + " to " +
          spec.name));
    }
  }
  return ok_status();
}

std::vector<std::string> write_objects(client::ObjectClient& c, const std::string& pool,
                                       const std::vector<ObjectSpec>& specs, int threads) {
  std::mutex mu;
  std::vector<std::string> failures;
  parallel_for(specs.size(), threads, [&](size_t i) {
    auto written = write_spec(c, pool, specs[i]);
    if (!written) {
      std::lock_guard lock(mu);
      failures.push_back(written.error().to_string());
    }
  });
  return failures;
}

std::vector<std::string> verify_objects(client::ObjectClient& c, const std::string& pool,
                                        const std::vector<ObjectSpec>& specs, int threads) {
  std::mutex mu;
  std::vector<std::string> problems;
  auto problem = [&](std::string what) {
    std::lock_guard lock(mu);
    problems.push_back(std::move(what));
  };
  parallel_for(specs.size(), threads, [&](size_t i) {
    const ObjectSpec& spec = specs[i];
    std::string expected = spec.content();
    auto data = c.run(c.read(pool, spec.name, 0, 0));
    if (!data) return problem("read " + spec.name + ": " + data.error().to_string());
    if (*data != expected) {
      return problem("read " + spec.name + ": " + first_difference(*data, expected) +
                     " (got vs expected)");
    }
    auto st = c.run(c.stat(pool, spec.name));
    if (!st) return problem("stat " + spec.name + ": " + st.error().to_string());
    if (st->size != expected.size()) {
      problem("stat " + spec.name + ": size " + std::to_string(st->size) + ", expected " +
              std::to_string(expected.size()));
    }
  });
  return problems;
}

std::vector<std::string> verify_replicas(client::ObjectClient& c, const std::string& pool_name,
                                         const std::vector<ObjectSpec>& specs, size_t min_replicas,
                                         int threads) {
  std::mutex mu;
  std::vector<std::string> problems;
  auto problem = [&](std::string what) {
    std::lock_guard lock(mu);
    problems.push_back(std::move(what));
  };
  ClusterMap map = c.map_snapshot();
  const proto::Pool* pool = map.pool_by_name(pool_name);
  if (!pool) return {"no pool " + pool_name + " in map epoch " + std::to_string(map.epoch())};
  parallel_for(specs.size(), threads, [&](size_t i) {
    const ObjectSpec& spec = specs[i];
    uint32_t pg = ClusterMap::pg_of(*pool, spec.name);
    auto acting = map.acting(*pool, pg);
    std::string where =
        spec.name + " (pg " + std::to_string(pool->id()) + "." + std::to_string(pg) + ")";
    if (acting.size() < min_replicas) {
      problem(where + ": only " + std::to_string(acting.size()) + " OSDs up in its acting set");
    }
    std::string expected = spec.content();
    for (int32_t osd : acting) {
      auto data = c.run(c.read_from_osd(pool_name, spec.name, osd));
      if (!data) {
        problem(where + " on osd." + std::to_string(osd) + ": " + data.error().to_string());
      } else if (*data != expected) {
        problem(where + " on osd." + std::to_string(osd) + ": " +
                first_difference(*data, expected) + " (replica vs expected)");
      }
    }
  });
  return problems;
}

std::string summarize(const std::vector<std::string>& problems, size_t max) {
  std::string out = std::to_string(problems.size()) + " problems:\n";
  for (size_t i = 0; i < problems.size() && i < max; ++i) out += "  " + problems[i] + "\n";
  if (problems.size() > max) out += "  ...\n";
  return out;
}

}  // namespace dfs::test
