// The typed C++ call API for catalog ops: `ops::add(a, b)` binds the arguments against the op's
// schema and runs it on the current backend. The model layer builds on it.
//
//   auto cpu = BackendRegistry::instance().create("ref");
//   ops::BackendScope scope(*cpu);          // calls on this thread go to `cpu`
//   Tensor y = ops::relu(ops::add(x, b));
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "crucible/backends/backend.h"

namespace crucible::ops {

// The backend typed calls on this thread dispatch to: the innermost BackendScope's, else `ref`.
Backend& current_backend();

class BackendScope {
 public:
  explicit BackendScope(Backend& b);
  ~BackendScope();
  BackendScope(const BackendScope&) = delete;
  BackendScope& operator=(const BackendScope&) = delete;

 private:
  Backend* previous_;
};

// Binds and runs any catalog op by name on `backend` (or the current backend).
Values call(Backend& backend, std::string_view op, const Values& positional,
            const std::vector<std::pair<std::string, Value>>& keywords = {});
Values call(std::string_view op, const Values& positional,
            const std::vector<std::pair<std::string, Value>>& keywords = {});

Tensor relu(const Tensor& self);
Tensor relu_(const Tensor& self);
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1);
Tensor add_(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor mul(const Tensor& self, const Tensor& other);
Tensor mul(const Tensor& self, const Scalar& other);
Tensor div(const Tensor& self, const Tensor& other);
Tensor neg(const Tensor& self);
Tensor exp(const Tensor& self);
Tensor tanh(const Tensor& self);
Tensor sigmoid(const Tensor& self);
Tensor gelu(const Tensor& self, const std::string& approximate = "none");
Tensor mm(const Tensor& self, const Tensor& mat2);
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
Tensor bmm(const Tensor& self, const Tensor& mat2);
Tensor sum(const Tensor& self, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim = false,
           std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);
Tensor amax(const Tensor& self, const std::vector<int64_t>& dim = {}, bool keepdim = false);
Tensor softmax(const Tensor& self, int64_t dim, bool half_to_float = false);      // _softmax
Tensor log_softmax(const Tensor& self, int64_t dim, bool half_to_float = false);  // _log_softmax
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     const std::vector<int64_t>& normalized_shape,
                                                     const Tensor& weight, const Tensor& bias,
                                                     double eps);
Tensor clone(const Tensor& self);
Tensor to_copy(const Tensor& self, std::optional<DType> dtype = std::nullopt);  // _to_copy
Tensor copy_(const Tensor& self, const Tensor& src);
Tensor view(const Tensor& self, const std::vector<int64_t>& size);
Tensor permute(const Tensor& self, const std::vector<int64_t>& dims);
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);

}  // namespace crucible::ops
