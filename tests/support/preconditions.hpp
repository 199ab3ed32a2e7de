#pragma once
/// Test helpers: what a test case needs from the machine. A case that cannot run in this build
/// is reported as skipped (a Boost.Test precondition), never as passed; a program the test
/// command installs is required: missing, the case fails.

#include <recorder/render/svg.hpp>

#include <boost/test/unit_test.hpp>

namespace test {

/// Precondition: built with `NDEBUG`, which `record::AtenOps` on templated models needs
/// (libtorch's at::RecordFunction observer; a Release build defines it).
inline boost::test_tools::assertion_result ndebug(boost::unit_test::test_unit_id) {
#ifdef NDEBUG
  return true;
#else
  boost::test_tools::assertion_result r(false);
  r.message() << "record::AtenOps needs NDEBUG (see recorder/observe/observer.hpp): build Release";
  return r;
#endif
}

}  // namespace test

/// Fails the test case unless program `name` is on PATH (scripts/test.sh installs Graphviz).
#define RECORDER_REQUIRE_PROGRAM(name)                                             \
  BOOST_TEST_REQUIRE(recorder::detail::on_path(name),                              \
                     "'" << (name)                                                 \
                         << "' is not on PATH: install Graphviz (scripts/test.sh " \
                            "does; Debian: apt-get install graphviz)")
