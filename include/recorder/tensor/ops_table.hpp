#pragma once
/// The one table of traced ops; `RecorderTensor`'s overloads are generated from it.
///
/// Each entry is `X(name, (parameters after self), (arguments after self))`. `Arg` is a tensor
/// operand (a `RecorderTensor` or a plain `at::Tensor`, which becomes a constant or parameter
/// node); every other parameter is passed through to libtorch unchanged. Adding an op is one
/// line here. Overloads of one name are separate lines.

// Ops that have an in-place variant too (`x.add(y)` and `x.add_(y)`); both are generated from
// these lines. The in-place node is named `name`, flagged in place, and the tensor's node
// advances to the op's output.
#define RECORDER_INPLACE_CAPABLE_OPS(X)                                                          \
  X(relu, (), ())                                                                                \
  X(sigmoid, (), ())                                                                             \
  X(tanh, (), ())                                                                                \
  X(add, (Arg other, const at::Scalar& alpha = 1), (other, alpha))                               \
  X(add, (const at::Scalar& other, const at::Scalar& alpha = 1), (other, alpha))                 \
  X(sub, (Arg other, const at::Scalar& alpha = 1), (other, alpha))                               \
  X(sub, (const at::Scalar& other, const at::Scalar& alpha = 1), (other, alpha))                 \
  X(mul, (Arg other), (other))                                                                   \
  X(mul, (const at::Scalar& other), (other))                                                     \
  X(div, (Arg other), (other))                                                                   \
  X(div, (const at::Scalar& other), (other))                                                     \
  X(masked_fill, (Arg mask, const at::Scalar& value), (mask, value))                             \
  X(clamp,                                                                                       \
    (const c10::optional<at::Scalar>& min, const c10::optional<at::Scalar>& max = c10::nullopt), \
    (min, max))

// Ops that are both `at::Tensor` methods and free functions found by ADL (`relu(x)`, `x.relu()`).
// The free function calls the method, so no `ATen/ops/*.h` header is needed for them.
#define RECORDER_METHOD_AND_FREE_OPS(X)                                                           \
  X(exp, (), ())                                                                                  \
  X(log, (), ())                                                                                  \
  X(sqrt, (), ())                                                                                 \
  X(rsqrt, (), ())                                                                                \
  X(abs, (), ())                                                                                  \
  X(neg, (), ())                                                                                  \
  X(softmax, (int64_t dim, c10::optional<at::ScalarType> dtype = c10::nullopt), (dim, dtype))     \
  X(log_softmax, (int64_t dim, c10::optional<at::ScalarType> dtype = c10::nullopt), (dim, dtype)) \
  X(matmul, (Arg other), (other))                                                                 \
  X(mm, (Arg other), (other))                                                                     \
  X(bmm, (Arg other), (other))                                                                    \
  X(flatten, (int64_t start_dim = 0, int64_t end_dim = -1), (start_dim, end_dim))                 \
  X(reshape, (at::IntArrayRef shape), (shape))                                                    \
  X(permute, (at::IntArrayRef dims), (dims))                                                      \
  X(transpose, (int64_t dim0, int64_t dim1), (dim0, dim1))                                        \
  X(unsqueeze, (int64_t dim), (dim))                                                              \
  X(squeeze, (), ())                                                                              \
  X(squeeze, (int64_t dim), (dim))                                                                \
  X(chunk, (int64_t chunks, int64_t dim = 0), (chunks, dim))                                      \
  X(split, (int64_t split_size, int64_t dim = 0), (split_size, dim))                              \
  X(split, (at::IntArrayRef split_sizes, int64_t dim), (split_sizes, dim))                        \
  X(sum, (), ())                                                                                  \
  X(sum, (at::IntArrayRef dim, bool keepdim = false), (dim, keepdim))                             \
  X(mean, (), ())                                                                                 \
  X(mean, (at::IntArrayRef dim, bool keepdim = false), (dim, keepdim))                            \
  X(max, (), ())                                                                                  \
  X(max, (int64_t dim, bool keepdim = false), (dim, keepdim))                                     \
  X(max, (Arg other), (other))                                                                    \
  X(min, (), ())                                                                                  \
  X(min, (int64_t dim, bool keepdim = false), (dim, keepdim))                                     \
  X(min, (Arg other), (other))                                                                    \
  X(pow, (const at::Scalar& exponent), (exponent))                                                \
  X(pow, (Arg exponent), (exponent))                                                              \
  X(eq, (Arg other), (other))                                                                     \
  X(eq, (const at::Scalar& other), (other))                                                       \
  X(ne, (Arg other), (other))                                                                     \
  X(ne, (const at::Scalar& other), (other))                                                       \
  X(lt, (const at::Scalar& other), (other))                                                       \
  X(gt, (const at::Scalar& other), (other))                                                       \
  X(masked_fill, (Arg mask, Arg value), (mask, value))                                            \
  X(select, (int64_t dim, int64_t index), (dim, index))                                           \
  X(index_select, (int64_t dim, Arg index), (dim, index))                                         \
  X(narrow, (int64_t dim, int64_t start, int64_t length), (dim, start, length))                   \
  RECORDER_INPLACE_CAPABLE_OPS(X)

// Ops that exist only as `at::Tensor` methods (`x.view({2, -1})`).
#define RECORDER_METHOD_OPS(X)                                     \
  X(view, (at::IntArrayRef size), (size))                          \
  X(contiguous, (), ())                                            \
  X(expand, (at::IntArrayRef size), (size))                        \
  X(repeat, (at::IntArrayRef repeats), (repeats))                  \
  X(unflatten, (int64_t dim, at::IntArrayRef sizes), (dim, sizes)) \
  X(slice,                                                         \
    (int64_t dim = 0, c10::optional<int64_t> start = c10::nullopt, \
     c10::optional<int64_t> end = c10::nullopt, int64_t step = 1), \
    (dim, start, end, step))                                       \
  X(to, (at::ScalarType dtype), (dtype))                           \
  X(clone, (), ())                                                 \
  X(detach, (), ())

// Ops that exist only as free functions in namespace `at` (`gelu(x)`, `dropout(x, p, train)`).
#define RECORDER_FREE_OPS(X)                                                                    \
  X(gelu, (c10::string_view approximate = "none"), (approximate))                               \
  X(dropout, (double p, bool train), (p, train))                                                \
  X(layer_norm,                                                                                 \
    (at::IntArrayRef normalized_shape, const c10::optional<at::Tensor>& weight = {},            \
     const c10::optional<at::Tensor>& bias = {}, double eps = 1e-05, bool cudnn_enable = true), \
    (normalized_shape, weight, bias, eps, cudnn_enable))                                        \
  X(linear, (Arg weight, const c10::optional<at::Tensor>& bias = {}), (weight, bias))           \
  X(where, (Arg self_, Arg other), (self_, other))

// Ops over a list of tensors: `cat(std::vector{a, b}, 1)` or `recorder::cat({a, b}, 1)`.
#define RECORDER_LIST_OPS(X)       \
  X(cat, (int64_t dim = 0), (dim)) \
  X(stack, (int64_t dim = 0), (dim))
