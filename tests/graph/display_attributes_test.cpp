// The one rule both front ends follow for the attributes a module shows beside its parameters
// (graph/display_attributes.hpp): which classes, and how torchinfo writes the values.
#include <boost/test/unit_test.hpp>

#include <recorder/graph/display_attributes.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using recorder::display_attributes;
using recorder::DisplayAttributes;

BOOST_AUTO_TEST_SUITE(display_attributes_rule)

BOOST_AUTO_TEST_CASE(convolutions_and_poolings_by_class_name) {
  for (const char* c : {"Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d"})
    BOOST_TEST((display_attributes(c) == DisplayAttributes::convolution), c);
  for (const char* c : {"MaxPool1d", "MaxPool2d", "AvgPool2d", "AvgPool3d"})
    BOOST_TEST((display_attributes(c) == DisplayAttributes::pooling), c);
  for (const char* c : {"AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Linear", "BatchNorm2d", ""})
    BOOST_TEST((display_attributes(c) == DisplayAttributes::none), c);
}

BOOST_AUTO_TEST_CASE(values_are_written_as_torchinfo_writes_them) {
  using Attrs = std::vector<std::pair<std::string, std::string>>;
  const std::vector<std::int64_t> square{3, 3}, wide{3, 2};
  recorder::ModuleInfo conv, pool, unknown_groups, none;
  append_display_attributes(conv, DisplayAttributes::convolution, square, 32);
  BOOST_TEST((conv.attributes == Attrs{{"kernel_size", "[3, 3]"}, {"groups", "32"}}));
  append_display_attributes(pool, DisplayAttributes::pooling, square, 4);  // no groups
  append_display_attributes(pool, DisplayAttributes::pooling, wide);
  BOOST_TEST((pool.attributes == Attrs{{"kernel_size", "3"}, {"kernel_size", "[3, 2]"}}));
  append_display_attributes(unknown_groups, DisplayAttributes::convolution, wide);
  BOOST_TEST((unknown_groups.attributes == Attrs{{"kernel_size", "[3, 2]"}}));
  append_display_attributes(none, DisplayAttributes::none, square, 1);
  BOOST_TEST(none.attributes.empty());
}

BOOST_AUTO_TEST_SUITE_END()
