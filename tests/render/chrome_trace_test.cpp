/// The Chrome trace of timed runs (render/chrome_trace.hpp) and the backward spans read from a
/// run (graph/timed_run.hpp), on hand-built runs: torch-free, byte for byte.
#define BOOST_TEST_MODULE render_chrome_trace
#include <boost/test/unit_test.hpp>

#include "json_validator.hpp"

#include <recorder/render/chrome_trace.hpp>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace recorder;

namespace {

/// A 10 us forward of `Net`: `fc` from 1 to 5 us, an `add` of two [1, 2] tensors from 6 us
/// for 1.5 us; the root's backward from 20 to 26 us, fc's from 22 to 30 us (past its parent's).
TimedRun net_run() {
  auto names = std::make_shared<TimedNames>();
  names->op_of_key = {"add"};
  names->dtypes = {"Float"};
  TimedRun run;
  run.epoch_ns = 1700000000000000000;
  run.duration_ns = 10000;
  run.spans.push_back(TimedSpan{NodeId{0}, "<root>", "", "Net", 0, -1, 0, 10000, {{1, 4}}});
  run.spans.push_back(TimedSpan{NodeId{3}, "fc", "fc", "Linear", 1, 0, 1000, 4000, {{1, 4}}});
  run.ops.push_back(TimedOp{NodeId{5}, 0, 0, 0, 6000, 1500});
  run.op_inputs = {TimedInput{0, 2, 0}, TimedInput{2, 2, 0}};
  run.op_dims = {1, 2, 1, 2};
  run.names = names;
  run.tick0 = 100;
  run.ns_per_tick = 1.0;
  run.backward_ticks = {{20100, 26100}, {22100, 30100}};
  return run;
}

}  // namespace

BOOST_AUTO_TEST_CASE(backward_spans_nest_in_their_parents) {
  const std::vector<TimedSpan> back = backward_spans(net_run());
  BOOST_TEST_REQUIRE(back.size() == 2u);
  BOOST_TEST(back[0].key == "<root>");
  BOOST_TEST(back[0].start_ns == 20000);
  BOOST_TEST(back[0].duration_ns == 6000);
  BOOST_TEST(back[0].parent == -1);
  BOOST_TEST(back[1].key == "fc");
  BOOST_TEST(back[1].start_ns == 22000);
  BOOST_TEST(back[1].duration_ns == 4000);  // cut at the root's end
  BOOST_TEST(back[1].parent == 0);
  const TimedRun run = net_run();
  BOOST_TEST(run.spans[0].self_ns(run.spans) == 6000);  // fc's 4 us are not the root's own
}

BOOST_AUTO_TEST_CASE(runs_as_kinetos_events_byte_for_byte) {
  const std::string json = chrome_trace_json({net_run()}, "Net \"x\"");
  BOOST_TEST(json ==
             "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": "
             "1700000000000000000, \"otherData\": {\"producer\": \"recorder\", \"model\": \"Net "
             "\\\"x\\\"\"},\n\"traceEvents\": [\n"
             "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": "
             "{\"name\": \"recorder: Net \\\"x\\\" forward\"}},\n"
             "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, \"args\": "
             "{\"name\": \"forward\"}},\n"
             "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 2, \"args\": "
             "{\"name\": \"backward\"}},\n"
             "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"Net\", \"pid\": 1, "
             "\"tid\": 1, \"ts\": 0.000, \"dur\": 10.000, \"args\": {\"Module Hierarchy\": \"\", "
             "\"module_type\": \"Net\", \"run\": 0, \"Input Dims\": [[1, 4]]}},\n"
             "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"fc\", \"pid\": 1, "
             "\"tid\": 1, \"ts\": 1.000, \"dur\": 4.000, \"args\": {\"Module Hierarchy\": \"fc\", "
             "\"module_type\": \"Linear\", \"run\": 0, \"Input Dims\": [[1, 4]]}},\n"
             "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"add\", \"pid\": 1, \"tid\": 1, "
             "\"ts\": 6.000, \"dur\": 1.500, \"args\": {\"Module Hierarchy\": \"\", \"run\": 0, "
             "\"Input Dims\": [[1, 2], [1, 2]], \"Input type\": [\"Float\", \"Float\"]}},\n"
             "{\"ph\": \"X\", \"cat\": \"backward\", \"name\": \"Net (backward)\", \"pid\": 1, "
             "\"tid\": 2, \"ts\": 20.000, \"dur\": 6.000, \"args\": {\"Module Hierarchy\": \"\", "
             "\"module_type\": \"Net\", \"run\": 0}},\n"
             "{\"ph\": \"X\", \"cat\": \"backward\", \"name\": \"fc (backward)\", \"pid\": 1, "
             "\"tid\": 2, \"ts\": 22.000, \"dur\": 4.000, \"args\": {\"Module Hierarchy\": "
             "\"fc\", \"module_type\": \"Linear\", \"run\": 0}}\n]}\n");
  BOOST_TEST(recorder::testing::valid_json(json));
}

BOOST_AUTO_TEST_CASE(runs_lie_side_by_side_a_tenth_of_the_first_apart) {
  // The second run starts after the first one's backward (26 us) and a gap of 10% of the
  // first forward plus 1 us: at 28 us.
  const std::string json = chrome_trace_json({net_run(), net_run()}, "Net");
  BOOST_TEST(json.find("\"name\": \"Net\", \"pid\": 1, \"tid\": 1, \"ts\": 28.000, \"dur\": "
                       "10.000, \"args\": {\"Module Hierarchy\": \"\", \"module_type\": \"Net\", "
                       "\"run\": 1,") != std::string::npos);
  BOOST_TEST(recorder::testing::valid_json(json));
}

BOOST_AUTO_TEST_CASE(the_backend_needs_the_runs) {
  Trace t;
  t.model_name = "Net";
  std::ostringstream os;
  BOOST_CHECK_THROW(backend::ChromeTrace{}.render(t, {}, os), std::invalid_argument);
  const std::vector<TimedRun> runs{net_run()};
  backend::ChromeTrace{.runs = &runs}.render(t, {.graph_name = "Other"}, os);
  BOOST_TEST(os.str().find("\"model\": \"Other\"") != std::string::npos);
}
