#include "common/log/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace dfs {

Status init_logging(const LogOptions& options) {
  auto level = spdlog::level::from_str(options.level);
  if (level == spdlog::level::off && options.level != "off") {
    return make_error(ErrorCode::kInvalidArgument, "unknown log level '" + options.level + "'");
  }
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (options.file.empty()) {
      logger = spdlog::stderr_color_mt(options.name.empty() ? "dfs" : options.name);
    } else {
      logger = spdlog::basic_logger_mt(options.name, options.file);
    }
  } catch (const spdlog::spdlog_ex& e) {
    return make_error(ErrorCode::kIoError, std::string("cannot open log: ") + e.what());
  }
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %n %^%l%$ [%t] %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return ok_status();
}

}  // namespace dfs
