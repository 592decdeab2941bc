// The fio suite: each job of the matrix on each target, fio's own figures.
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "tools/dfs/bench/fio.h"
#include "tools/dfs/bench/process.h"
#include "tools/dfs/bench/suite.h"
#include "tools/dfs/bench/svg_plot.h"

namespace dfs::bench {
namespace {

std::string figure_prefix(const FioJob& job) {
  return fmt::format("{} {}, {} job{}", job.rw, block_label(job.block_bytes), job.numjobs,
                     job.numjobs == 1 ? "" : "s");
}

// Whether `dir`'s file system takes O_DIRECT (a FUSE mount without direct I/O support,
// tmpfs on older kernels, refuse it with EINVAL).
bool supports_direct(const std::string& dir) {
  const std::string probe = dir + "/.dfs-bench-direct-probe";
  int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_DIRECT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  ::unlink(probe.c_str());
  return fd >= 0;
}

}  // namespace

std::vector<Step> fio_steps(const BenchOptions& options) {
  std::vector<Step> steps;
  FioRun base;
  base.runtime_s = options.quick ? 3 : 20;
  base.size_bytes = options.quick ? (32ull << 20) : (512ull << 20);
  for (const FioJob& job : fio_matrix(options.quick)) {
    Step step;
    step.suite = "fio";
    step.name = "fio " + figure_prefix(job);
    step.estimated_s = base.runtime_s + 2;
    step.run = [job, base, step_name = step.name](const Target& target) {
      const std::string prefix = figure_prefix(job);
      const std::string dir = target.dir + "/fio";
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      FioRun run = base;
      run.directory = dir;
      run.direct = supports_direct(dir);
      if (!run.direct) {
        fmt::print(stderr, "\ndfs bench: {} refuses O_DIRECT: fio runs buffered there\n", target.label);
      }
      std::vector<std::string> argv = {"fio"};
      for (auto& a : fio_arguments(job, run)) argv.push_back(std::move(a));
      ProcessResult p = run_process(argv);
      std::filesystem::remove_all(dir, ec);
      Step self{"fio", step_name, 0, nullptr};
      auto parsed = p.ok() ? parse_fio_json(p.out, job.rw)
                           : Result<FioResult>(make_error(ErrorCode::kIoError, "fio " + p.failure()));
      if (!parsed) {
        std::string why = parsed.error().context();
        return std::vector<Sample>{failed_sample(self, prefix + " MB/s", "MB/s", true, target, why),
                                   failed_sample(self, prefix + " IOPS", "IOPS", true, target, why),
                                   failed_sample(self, prefix + " p99", "us", false, target, why)};
      }
      auto sample = [&](const std::string& figure, const std::string& unit, bool higher, double value) {
        return measured_sample("fio", prefix + " " + figure, unit, higher, target, value);
      };
      return std::vector<Sample>{sample("MB/s", "MB/s", true, parsed->bytes_per_s / 1e6),
                                 sample("IOPS", "IOPS", true, parsed->iops),
                                 sample("p99", "us", false, parsed->p99_us)};
    };
    steps.push_back(std::move(step));
  }
  return steps;
}

std::vector<std::pair<std::string, std::string>> fio_plots(const std::vector<Sample>& samples) {
  // (rw, jobs) -> target -> block label -> MB/s values (rounds)
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::map<std::string, std::vector<double>>>> data;
  std::vector<std::string> blocks;
  for (const auto& s : samples) {
    if (s.suite != "fio" || !s.error.empty() || s.unit != "MB/s") continue;
    // "randwrite 4k, 1 job MB/s"
    auto space = s.figure.find(' ');
    auto comma = s.figure.find(", ");
    auto job_end = s.figure.rfind(" MB/s");
    if (space == std::string::npos || comma == std::string::npos || job_end == std::string::npos) continue;
    std::string rw = s.figure.substr(0, space);
    std::string block = s.figure.substr(space + 1, comma - space - 1);
    std::string jobs = s.figure.substr(comma + 2, job_end - comma - 2);
    if (std::find(blocks.begin(), blocks.end(), block) == blocks.end()) blocks.push_back(block);
    data[{rw, jobs}][s.target][block].push_back(s.value);
  }
  std::vector<std::pair<std::string, std::string>> plots;
  for (const auto& [key, targets] : data) {
    LinePlot plot;
    plot.title = fmt::format("fio {}, {}, iodepth 8: throughput by block size", key.first, key.second);
    plot.x_label = "block size";
    plot.y_label = "MB/s";
    plot.x_labels = blocks;
    for (const auto& [target, by_block] : targets) {
      PlotSeries series{target, {}};
      for (const auto& b : blocks) {
        auto it = by_block.find(b);
        series.values.push_back(it == by_block.end() ? -1 : median(it->second));
      }
      plot.series.push_back(std::move(series));
    }
    std::string jobs = key.second.substr(0, key.second.find(' '));
    plots.emplace_back(fmt::format("fio-{}-{}jobs.svg", key.first, jobs), render_svg(plot));
  }
  return plots;
}

Sample measured_sample(const std::string& suite, const std::string& figure, const std::string& unit,
                       bool higher_is_better, const Target& target, double value) {
  Sample s;
  s.suite = suite;
  s.figure = figure;
  s.unit = unit;
  s.higher_is_better = higher_is_better;
  s.target = target.label;
  s.baseline = target.baseline;
  s.value = value;
  return s;
}

Sample failed_sample(const Step& step, const std::string& figure, const std::string& unit,
                     bool higher_is_better, const Target& target, const std::string& why) {
  Sample s = measured_sample(step.suite, figure, unit, higher_is_better, target, 0);
  s.error = why;
  return s;
}

}  // namespace dfs::bench
