// EXPECT: recorder compile-fail sanity check: this must not compile
/// A valid source registered as a compile-fail case (compile_fail_sanity_check_error): the
/// harness must report that it compiled, and WILL_FAIL turns that report into a pass. If this
/// test fails, the harness passes cases that compile, and every compile-fail test is void.
inline constexpr bool compiles = true;
