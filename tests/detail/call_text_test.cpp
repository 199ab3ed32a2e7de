/// Reading a call's Python source (detail/call_text.hpp): which calls pass no argument by position.
#define BOOST_TEST_MODULE detail_call_text
#include <boost/test/unit_test.hpp>

#include <recorder/detail/call_text.hpp>

using recorder::detail::is_keyword_argument;
using recorder::detail::passes_no_positional_argument;

BOOST_AUTO_TEST_CASE(keyword_arguments_are_names_and_one_equals_sign) {
  BOOST_TEST(is_keyword_argument("query=x"));
  BOOST_TEST(is_keyword_argument("attn_mask = mask[:, None]"));
  BOOST_TEST(is_keyword_argument("**kwargs"));
  BOOST_TEST(!is_keyword_argument("x"));
  BOOST_TEST(!is_keyword_argument("x == y"));
  BOOST_TEST(!is_keyword_argument("*args"));
  BOOST_TEST(!is_keyword_argument("f(a=1)"));
  BOOST_TEST(!is_keyword_argument("1=x"));
  BOOST_TEST(!is_keyword_argument("x="));
}

BOOST_AUTO_TEST_CASE(calls_with_keywords_only) {
  // What follows the callee in the source: `self.attn` + this.
  BOOST_TEST(passes_no_positional_argument("(query=x, key=x, value=x)"));
  BOOST_TEST(passes_no_positional_argument("(x=h, mask=m)\n        return h"));
  BOOST_TEST(passes_no_positional_argument(" (\n    x=x,\n    mask=torch.ones(2, 3),\n)\n"));
  BOOST_TEST(passes_no_positional_argument("()"));
  BOOST_TEST(passes_no_positional_argument("(x=g(a, b), y={'k': (1, 2)}, z=\"a,b)\")[0]"));
}

BOOST_AUTO_TEST_CASE(calls_with_a_positional_argument) {
  BOOST_TEST(!passes_no_positional_argument("(x, x, x, need_weights=False)"));
  BOOST_TEST(!passes_no_positional_argument("(q, key=x, value=x)"));
  BOOST_TEST(!passes_no_positional_argument("(x=x, *rest)"));
  BOOST_TEST(!passes_no_positional_argument("(x == y)"));
  BOOST_TEST(!passes_no_positional_argument("(h)"));
}

BOOST_AUTO_TEST_CASE(text_that_is_not_an_argument_list_is_unknown) {
  BOOST_TEST(!passes_no_positional_argument(""));
  BOOST_TEST(!passes_no_positional_argument(".forward(x=1)"));
  BOOST_TEST(!passes_no_positional_argument("[0](x=1)"));
  BOOST_TEST(!passes_no_positional_argument("(x=1"));
  BOOST_TEST(!passes_no_positional_argument("(x=1]"));
}
