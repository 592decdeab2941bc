#include "tools/dfs/bench/fio.h"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cstring>

namespace dfs::bench {
namespace json = boost::json;

namespace {

Unexpected invalid(std::string why) { return make_error(ErrorCode::kInvalidArgument, std::move(why)); }

double number_at(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  if (!v) return 0;
  if (v->is_double()) return v->as_double();
  if (v->is_int64()) return static_cast<double>(v->as_int64());
  if (v->is_uint64()) return static_cast<double>(v->as_uint64());
  return 0;
}

}  // namespace

std::vector<FioJob> fio_matrix(bool quick) {
  const std::vector<uint64_t> sizes =
      quick ? std::vector<uint64_t>{4096, 65536, 1u << 20}
            : std::vector<uint64_t>{4096, 8192, 16384, 65536, 1u << 20, 4u << 20, 32u << 20};
  const std::vector<int> jobs = quick ? std::vector<int>{1} : std::vector<int>{1, 8};
  std::vector<FioJob> out;
  for (int numjobs : jobs) {
    for (const char* rw : {"read", "write", "randread", "randwrite"}) {
      for (uint64_t bs : sizes) out.push_back({rw, bs, numjobs, 8});
    }
  }
  return out;
}

std::string block_label(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{}m", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{}k", bytes >> 10);
  return std::to_string(bytes);
}

std::vector<std::string> fio_arguments(const FioJob& job, const FioRun& run) {
  // A block bigger than the file would make fio refuse the job: the file holds at least
  // a few blocks.
  uint64_t size = std::max(run.size_bytes, job.block_bytes * 4);
  return {"--name=dfs-bench",
          "--directory=" + run.directory,
          "--rw=" + job.rw,
          "--bs=" + block_label(job.block_bytes),
          fmt::format("--size={}", size),
          fmt::format("--numjobs={}", job.numjobs),
          fmt::format("--iodepth={}", job.iodepth),
          "--ioengine=libaio",
          fmt::format("--direct={}", run.direct ? 1 : 0),
          fmt::format("--runtime={}", run.runtime_s),
          "--time_based",
          "--group_reporting",
          "--output-format=json"};
}

Result<FioResult> parse_fio_json(const std::string& text, const std::string& rw) {
  boost::system::error_code ec;
  json::value doc = json::parse(text, ec);
  if (ec) {
    return invalid(text.empty() ? "fio wrote nothing (it failed before running: see its stderr)"
                                : "fio's output is not complete JSON (" + ec.message() +
                                      "): fio was interrupted or failed");
  }
  const json::object* root = doc.if_object();
  const json::value* jobs_value = root ? root->if_contains("jobs") : nullptr;
  const json::array* jobs = jobs_value ? jobs_value->if_array() : nullptr;
  if (!jobs || jobs->empty()) return invalid("fio's output has no jobs: it ran nothing");
  const char* direction = rw == "read" || rw == "randread" ? "read" : "write";
  FioResult out;
  for (const auto& job_value : *jobs) {
    const json::object* job = job_value.if_object();
    if (!job) return invalid("fio's output has a job that is not an object");
    if (double error = number_at(*job, "error"); error != 0) {
      return make_error(ErrorCode::kIoError,
                        fmt::format("fio's job failed with error {} ({})", error,
                                    std::strerror(static_cast<int>(error))));
    }
    const json::value* side_value = job->if_contains(direction);
    const json::object* side = side_value ? side_value->if_object() : nullptr;
    if (!side) return invalid(std::string("fio's job has no '") + direction + "' figures");
    out.bytes_per_s += number_at(*side, "bw_bytes");
    out.iops += number_at(*side, "iops");
    // One job with group_reporting: its percentiles are the run's.
    const json::value* clat = side->if_contains("clat_ns");
    const json::value* pct = clat && clat->is_object() ? clat->as_object().if_contains("percentile") : nullptr;
    if (pct && pct->is_object()) {
      const auto& p = pct->as_object();
      out.p50_us = number_at(p, "50.000000") / 1000;
      out.p99_us = number_at(p, "99.000000") / 1000;
      out.p999_us = number_at(p, "99.900000") / 1000;
    }
  }
  if (out.iops == 0) return invalid(std::string("fio did no ") + direction + " I/O in its run");
  return out;
}

}  // namespace dfs::bench
