#pragma once
/// Forward declarations of recorder's main types (no libtorch).

#include <recorder/policies/concepts.hpp>

#include <type_traits>

namespace recorder {

template <class P>  // a recording_policy, checked in its definition (check_recording_policy)
class RecorderTensor;

struct Trace;
class Graph;

/// True for `RecorderTensor<P>` with any policy (cv-ref qualifiers ignored).
template <class T>
struct is_recorder_tensor : std::false_type {};
template <class P>
struct is_recorder_tensor<RecorderTensor<P>> : std::true_type {};
template <class T>
inline constexpr bool is_recorder_tensor_v = is_recorder_tensor<std::remove_cvref_t<T>>::value;

}  // namespace recorder
