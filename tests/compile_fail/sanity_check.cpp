// EXPECT: recorder compile-fail sanity check: this must not compile
/// The harness's sanity pair, as {fmt}'s check/check-error: this case fails with the expected
/// words (compile_fail_sanity_check passes), and sanity_check_valid.cpp, which compiles, is
/// registered as expected to fail (compile_fail_sanity_check_error: the harness must report a
/// failure, which WILL_FAIL turns into a pass).
#ifdef RECORDER_COMPILE_FAIL_TWIN
inline constexpr bool compiles = true;
#else
static_assert(sizeof(int) == 0, "recorder compile-fail sanity check: this must not compile");
#endif
