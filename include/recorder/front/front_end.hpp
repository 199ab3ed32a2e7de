#pragma once
/// The protocol a front end that runs a model of its own kind (a TorchScript module, an exported
/// program) plugs into `Tracer::run` by: a specialization of `detail::FrontEnd<M>` for its model
/// type, in the front end's own header, so that the tracer names none of them and a translation
/// unit compiles a front end only when it includes it. No libtorch.
///
/// ```
/// template <>
/// struct FrontEnd<MyModel> {
///   using Cache = ...;  // what the tracer keeps for the front end between runs
///   static Traced<c10::IValue> run_plain(Cache&, const MyModel&, std::vector<c10::IValue>,
///                                        const TraceOptions&);  // record::Off
///   static Traced<c10::IValue> trace(Cache&, const MyModel&, std::vector<c10::IValue>,
///                                    const TraceOptions&, std::vector<CallHooks*> hooks,
///                                    bool aten_ops, const std::shared_ptr<GraphStorage>&);
/// };
/// ```

namespace recorder::detail {

/// A front end for models of type `M`; specialized by `<recorder/script.hpp>`
/// (`torch::jit::Module`) and `<recorder/exported.hpp>` (`recorder::ExportedProgram`).
template <class M>
struct FrontEnd;

/// True when a front end for `M` is included.
template <class M>
inline constexpr bool front_end_included = requires {
  typename FrontEnd<M>::Cache;
};

}  // namespace recorder::detail
