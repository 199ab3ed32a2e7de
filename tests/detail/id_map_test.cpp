/// The library's hash tables (detail/id_map.hpp) against std::unordered_map as the oracle.
#define BOOST_TEST_MODULE detail_id_map
#include <boost/test/unit_test.hpp>

#include <recorder/detail/id_map.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace rd = recorder::detail;

BOOST_AUTO_TEST_CASE(an_empty_map_finds_nothing) {
  const rd::IdMap m;
  BOOST_TEST(m.empty());
  BOOST_TEST(m.find(0) == nullptr);
  BOOST_TEST(!m.contains(std::numeric_limits<std::uint64_t>::max()));
}

BOOST_AUTO_TEST_CASE(every_key_works_and_the_first_value_stays) {
  rd::IdMap m;
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  BOOST_TEST(m.try_emplace(0, 7).second);
  BOOST_TEST(m.try_emplace(max, 8).second);
  const auto [v, fresh] = m.try_emplace(0, 9);
  BOOST_TEST(!fresh);
  BOOST_TEST(*v == 7u);
  *v = 10;
  BOOST_TEST(*m.find(0) == 10u);
  BOOST_TEST(*m.find(max) == 8u);
  BOOST_TEST(m.size() == 2u);
  BOOST_TEST(m.insert(5));
  BOOST_TEST(!m.insert(5));
  BOOST_TEST(m.contains(5));
  BOOST_TEST(!m.contains(6));
  BOOST_TEST(rd::IdMap::pair_key(1, 2) == (std::uint64_t{1} << 32 | 2u));
}

// Random keys, packed id pairs and aligned addresses (the three kinds the library stores),
// across many growths: the same contents as std::unordered_map after every step.
BOOST_AUTO_TEST_CASE(matches_unordered_map_over_many_growths) {
  std::mt19937_64 rng(42);
  rd::IdMap m;
  std::unordered_map<std::uint64_t, std::uint64_t> oracle;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    std::uint64_t key = 0;
    switch (i % 3) {
      case 0:
        key = rng() % 5000;
        break;  // repeats
      case 1:
        key = rd::IdMap::pair_key(static_cast<std::uint32_t>(i % 97),
                                  static_cast<std::uint32_t>(i / 97));
        break;
      default:
        key = 0x7f0000000000ULL + 16 * (rng() % 4000);
        break;  // addresses
    }
    const auto [v, fresh] = m.try_emplace(key, i);
    const auto [it, oracle_fresh] = oracle.try_emplace(key, i);
    BOOST_REQUIRE(fresh == oracle_fresh);
    BOOST_REQUIRE(*v == it->second);
  }
  BOOST_TEST(m.size() == oracle.size());
  for (const auto& [key, value] : oracle) BOOST_REQUIRE(*m.find(key) == value);
  for (std::uint64_t k = 5000; k < 6000; ++k) BOOST_REQUIRE(m.contains(k) == oracle.contains(k));
}

BOOST_AUTO_TEST_CASE(a_table_keeps_values_in_insertion_order_by_address) {
  rd::IdTable<std::string> t;
  int a = 0, b = 0;
  BOOST_TEST(t.find(&a) == nullptr);
  BOOST_TEST(*t.try_emplace(&a, "first").first == "first");
  const auto [v, fresh] = t.try_emplace(&a, "again");
  BOOST_TEST(!fresh);
  BOOST_TEST(*v == "first");
  BOOST_TEST(t.try_emplace(&b, 3, 'x').second);
  BOOST_TEST(*t.find(&b) == "xxx");
  BOOST_TEST(t.size() == 2u);
}

struct Fussy {
  explicit Fussy(int v) : value(v) {
    if (v < 0) throw std::invalid_argument("negative");
  }
  int value;
};

BOOST_AUTO_TEST_CASE(a_value_that_fails_to_build_leaves_nothing_behind) {
  rd::IdTable<Fussy> t;
  BOOST_CHECK_THROW(t.try_emplace(std::uint64_t{1}, -1), std::invalid_argument);
  BOOST_TEST(t.size() == 0u);
  BOOST_TEST(t.find(std::uint64_t{1}) == nullptr);
  BOOST_TEST(t.try_emplace(std::uint64_t{1}, 4).first->value == 4);
}

BOOST_AUTO_TEST_CASE(strings_get_dense_ids_in_order_of_first_sight) {
  rd::StringIds ids;
  BOOST_TEST(ids.id("conv2d").first == 0u);
  BOOST_TEST(ids.id("relu").first == 1u);
  const auto [again, fresh] = ids.id("conv2d");
  BOOST_TEST(again == 0u);
  BOOST_TEST(!fresh);
  BOOST_TEST(ids.id("").first == 2u);
  BOOST_TEST(ids.id(std::string_view("a\0b", 3)).first == 3u);  // any bytes
  BOOST_TEST(ids.id(std::string_view("a\0c", 3)).first == 4u);
  BOOST_TEST(ids.size() == 5u);
  BOOST_TEST(ids.at(1) == "relu");
  BOOST_TEST(ids.at(2) == "");
}

BOOST_AUTO_TEST_CASE(strings_whose_hashes_collide_stay_apart) {
  rd::StringIds ids;
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  for (std::size_t i = 0; i < names.size(); ++i)
    BOOST_TEST(ids.id(names[i], 99).first == i);  // one hash for all
  for (std::size_t i = names.size(); i-- > 0;) {
    const auto [id, fresh] = ids.id(names[i], 99);
    BOOST_TEST(id == i);
    BOOST_TEST(!fresh);
  }
  BOOST_TEST(ids.id("f").first == 5u);  // its own hash may be any of the probed keys
  BOOST_TEST(ids.id("a", 99).first == 0u);
}
