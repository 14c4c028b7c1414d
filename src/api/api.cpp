// The typed call API: bind against the schema, run on the current backend.
#include "crucible/api/api.h"

#include "crucible/core/error.h"

namespace crucible::ops {

namespace {
thread_local Backend* tls_backend = nullptr;

Backend& ref_backend() {
  static std::unique_ptr<Backend> ref = BackendRegistry::instance().create("ref");
  return *ref;
}

Value opt(const Tensor& t) { return t.defined() ? Value(t) : Value(); }
Value opt(std::optional<DType> d) { return d ? Value(*d) : Value(); }

Tensor first(Values vs, std::string_view op) {
  if (vs.empty() || !vs[0].is_tensor())
    internal_error("typed call " + std::string(op) + ": the backend returned no tensor");
  return vs[0].tensor();
}
}  // namespace

Backend& current_backend() { return tls_backend ? *tls_backend : ref_backend(); }

BackendScope::BackendScope(Backend& b) : previous_(tls_backend) { tls_backend = &b; }
BackendScope::~BackendScope() { tls_backend = previous_; }

Values call(Backend& backend, std::string_view op, const Values& positional,
            const std::vector<std::pair<std::string, Value>>& keywords) {
  const OpDef& def = OpRegistry::catalog().get(op);
  Values args = bind_arguments(def.schema, positional, keywords);
  std::string why;
  if (!backend.supports(def, args, &why)) unsupported(why);
  return backend.run(def, args);
}

Values call(std::string_view op, const Values& positional,
            const std::vector<std::pair<std::string, Value>>& keywords) {
  return call(current_backend(), op, positional, keywords);
}

#define CRUCIBLE_T(op, ...) first(call(op, __VA_ARGS__), op)

Tensor relu(const Tensor& self) { return CRUCIBLE_T("aten.relu.default", {self}); }
Tensor relu_(const Tensor& self) { return CRUCIBLE_T("aten.relu_.default", {self}); }
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return CRUCIBLE_T("aten.add.Tensor", {self, other}, {{"alpha", Value(alpha)}});
}
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return CRUCIBLE_T("aten.add.Scalar", {self, Value(other), Value(alpha)});
}
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return CRUCIBLE_T("aten.add_.Tensor", {self, other}, {{"alpha", Value(alpha)}});
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return CRUCIBLE_T("aten.sub.Tensor", {self, other}, {{"alpha", Value(alpha)}});
}
Tensor mul(const Tensor& self, const Tensor& other) {
  return CRUCIBLE_T("aten.mul.Tensor", {self, other});
}
Tensor mul(const Tensor& self, const Scalar& other) {
  return CRUCIBLE_T("aten.mul.Scalar", {self, Value(other)});
}
Tensor div(const Tensor& self, const Tensor& other) {
  return CRUCIBLE_T("aten.div.Tensor", {self, other});
}
Tensor neg(const Tensor& self) { return CRUCIBLE_T("aten.neg.default", {self}); }
Tensor exp(const Tensor& self) { return CRUCIBLE_T("aten.exp.default", {self}); }
Tensor tanh(const Tensor& self) { return CRUCIBLE_T("aten.tanh.default", {self}); }
Tensor sigmoid(const Tensor& self) { return CRUCIBLE_T("aten.sigmoid.default", {self}); }
Tensor gelu(const Tensor& self, const std::string& approximate) {
  return CRUCIBLE_T("aten.gelu.default", {self}, {{"approximate", Value(approximate)}});
}
Tensor mm(const Tensor& self, const Tensor& mat2) {
  return CRUCIBLE_T("aten.mm.default", {self, mat2});
}
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
             const Scalar& alpha) {
  return CRUCIBLE_T("aten.addmm.default", {self, mat1, mat2},
                    {{"beta", Value(beta)}, {"alpha", Value(alpha)}});
}
Tensor bmm(const Tensor& self, const Tensor& mat2) {
  return CRUCIBLE_T("aten.bmm.default", {self, mat2});
}
Tensor sum(const Tensor& self, std::optional<DType> dtype) {
  return CRUCIBLE_T("aten.sum.default", {self}, {{"dtype", opt(dtype)}});
}
Tensor sum(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim,
           std::optional<DType> dtype) {
  return CRUCIBLE_T("aten.sum.dim_IntList", {self, Value(dim), Value(keepdim)},
                    {{"dtype", opt(dtype)}});
}
Tensor mean(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim,
            std::optional<DType> dtype) {
  return CRUCIBLE_T("aten.mean.dim", {self, Value(dim), Value(keepdim)}, {{"dtype", opt(dtype)}});
}
Tensor amax(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim) {
  return CRUCIBLE_T("aten.amax.default", {self, Value(dim), Value(keepdim)});
}
Tensor softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return CRUCIBLE_T("aten._softmax.default", {self, Value(dim), Value(half_to_float)});
}
Tensor log_softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return CRUCIBLE_T("aten._log_softmax.default", {self, Value(dim), Value(half_to_float)});
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     const std::vector<int64_t>& normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps) {
  Values out = call("aten.native_layer_norm.default",
                    {input, Value(normalized_shape), opt(weight), opt(bias), Value(eps)});
  if (out.size() != 3) internal_error("native_layer_norm: expected 3 outputs");
  return {out[0].tensor(), out[1].tensor(), out[2].tensor()};
}
Tensor clone(const Tensor& self) { return CRUCIBLE_T("aten.clone.default", {self}); }
Tensor to_copy(const Tensor& self, std::optional<DType> dtype) {
  return CRUCIBLE_T("aten._to_copy.default", {self}, {{"dtype", opt(dtype)}});
}
Tensor copy_(const Tensor& self, const Tensor& src) {
  return CRUCIBLE_T("aten.copy_.default", {self, src});
}
Tensor view(const Tensor& self, const std::vector<int64_t>& size) {
  return CRUCIBLE_T("aten.view.default", {self, Value(size)});
}
Tensor permute(const Tensor& self, const std::vector<int64_t>& dims) {
  return CRUCIBLE_T("aten.permute.default", {self, Value(dims)});
}
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx) {
  return CRUCIBLE_T("aten.embedding.default", {weight, indices, Value(padding_idx)});
}

#undef CRUCIBLE_T

}  // namespace crucible::ops
