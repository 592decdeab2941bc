// The main() of every doctest executable. ctest runs each test case on its own through
// `--test-case=NAME`; a name that matches nothing (ctest splits a name at ';', for one)
// would otherwise run no test and pass, so a filtered run that ran no case fails.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

namespace {

int test_cases_started = 0;

// Counts the test cases that start; reports nothing.
struct TestCaseCounter : doctest::IReporter {
  explicit TestCaseCounter(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++test_cases_started; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("test_case_counter", 1, TestCaseCounter);

bool names_test_cases(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--test-case=") || arg.starts_with("-tc=")) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  int result = context.run();
  if (context.shouldExit()) return result;  // --list-test-cases and other queries
  if (result == 0 && test_cases_started == 0 && names_test_cases(argc, argv)) {
    std::fprintf(stderr, "no test case matches the --test-case filter: nothing was tested\n");
    return 1;
  }
  return result;
}
