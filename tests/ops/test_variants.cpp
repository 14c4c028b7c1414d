// Derived in-place and out= overloads (include/crucible/ops/variants.h): completeness against
// ATen's operator list, the destination rules, and the cpu backend running them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernel_table.h"
#include "crucible/cases/literal.h"
#include "crucible/core/error.h"
#include "crucible/ops/materialize.h"
#include "crucible/ops/op.h"
#include "crucible/ops/variants.h"

namespace crucible {
namespace {

struct AtenOp {
  std::string name;
  Schema schema;
};

const std::vector<AtenOp>& aten_ops() {
  static const std::vector<AtenOp> ops = [] {
    std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/data/spec/all_aten_ops.json");
    nlohmann::json j = nlohmann::json::parse(in);
    std::vector<AtenOp> out;
    for (const auto& o : j["ops"]) {
      const std::string text = o["schema"].get<std::string>();
      out.push_back({o["op"].get<std::string>(), parse_schema(text)});
    }
    return out;
  }();
  return ops;
}

const OpRegistry& cat() { return OpRegistry::catalog(); }

// Same shape, dtype and values (compared as doubles; NaN equals NaN).
bool same(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = a.contiguous().to(DType::Float64), y = b.contiguous().to(DType::Float64);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double p = x.data<double>()[i], q = y.data<double>()[i];
    if (p != q && !(p != p && q != q)) return false;
  }
  return true;
}

// Every in-place and out= overload ATen has for a functional op of the catalog is in the
// catalog (derived, or written by hand), except the few listed with their reason.
TEST(VariantDerivation, EveryAtenVariantOfACatalogOpIsInTheCatalog) {
  std::set<std::string> excluded;
  for (const auto& [name, why] : variants_not_derived()) {
    excluded.insert(name);
    EXPECT_FALSE(why.empty()) << name;
  }
  int derivable = 0;
  for (const AtenOp& a : aten_ops()) {
    const auto match = functional_counterpart(a.schema, cat());
    if (!match) continue;
    ++derivable;
    if (excluded.count(a.name)) {
      EXPECT_EQ(cat().find(a.name), nullptr) << a.name << " is listed as not derived";
      continue;
    }
    const OpDef* op = cat().find(a.name);
    ASSERT_NE(op, nullptr) << a.name << " (of " << match->functional
                           << ") is missing: regenerate src/ops/variant_schemas.inc with "
                              "scripts/gen_variant_schemas.py";
    EXPECT_EQ(op->schema, a.schema) << a.name;
    if (const DerivedVariant* v = derived_variant(a.name)) {
      EXPECT_EQ(v->functional->name, match->functional) << a.name;
    }
  }
  EXPECT_GT(derivable, 300);
}

// Every derived overload is an ATen overload, with ATen's schema.
TEST(VariantDerivation, EveryDerivedOverloadIsAtens) {
  std::map<std::string, const Schema*> by_name;
  for (const AtenOp& a : aten_ops()) by_name[a.name] = &a.schema;
  int derived = 0;
  for (const OpDef* op : cat().all()) {
    const DerivedVariant* v = derived_variant(op->name);
    if (!v) continue;
    ++derived;
    auto it = by_name.find(op->name);
    ASSERT_NE(it, by_name.end()) << op->name;
    EXPECT_EQ(*it->second, op->schema) << op->name;
    EXPECT_EQ(v->inplace, op->schema.is_inplace()) << op->name;
    EXPECT_EQ(op->family, v->functional->family) << op->name;
  }
  EXPECT_GT(derived, 300);
}

// Every name in the cpu backend's kernel table is a catalog op.
TEST(VariantDerivation, EveryCpuKernelIsACatalogOp) {
  for (const auto& [name, entry] : cpu::kernel_table().entries())
    EXPECT_NE(cat().find(name), nullptr) << name << " has a cpu kernel but is not in the catalog";
}

// The elementwise, reduction, softmax, mse, norm, embedding, distance, convolution, pooling,
// matmul, padding, join and factory kernels are destination-passing: the op's meta function checks
// a call once and its outputs are allocated before the kernel runs; the elementwise entries lay out
// their fresh outputs as ATen's TensorIterator does.
TEST(VariantDerivation, ElementwiseAndReductionKernelsComputeIntoTheMetaFunctionsOutputs) {
  const char* const destination_passing[] = {"aten.add.Tensor",
                                             "aten.sub.out",
                                             "aten.relu_.default",
                                             "aten.exp.out",
                                             "aten.where.self",
                                             "aten.masked_fill_.Scalar",
                                             "aten.clamp.Tensor",
                                             "aten.gelu_backward.default",
                                             "aten.sum.dim_IntList",
                                             "aten.mean.dim",
                                             "aten.amax.default",
                                             "aten.max.dim",
                                             "aten.argmin.default",
                                             "aten.any.dims",
                                             "aten.var_mean.correction",
                                             "aten.prod.dim_int",
                                             "aten.logsumexp.default",
                                             "aten._softmax.default",
                                             "aten._log_softmax_backward_data.default",
                                             "aten.mse_loss.default",
                                             "aten.mse_loss_backward.default",
                                             "aten.native_layer_norm.default",
                                             "aten.native_layer_norm_backward.default",
                                             "aten.native_group_norm.default",
                                             "aten.native_group_norm_backward.default",
                                             "aten.native_batch_norm.default",
                                             "aten._native_batch_norm_legit.no_stats",
                                             "aten._native_batch_norm_legit_no_training.default",
                                             "aten.native_batch_norm_backward.default",
                                             "aten.embedding.default",
                                             "aten.embedding_dense_backward.default",
                                             "aten._cdist_forward.default",
                                             "aten._pdist_forward.default",
                                             "aten.convolution.default",
                                             "aten.convolution_backward.default",
                                             "aten.max_pool2d_with_indices.default",
                                             "aten.max_pool3d_with_indices_backward.default",
                                             "aten.adaptive_max_pool2d_backward.default",
                                             "aten.avg_pool2d_backward.default",
                                             "aten._adaptive_avg_pool3d.default",
                                             "aten.mm.default",
                                             "aten.addmm.default",
                                             "aten.bmm.default",
                                             "aten.baddbmm.default",
                                             "aten.reflection_pad2d.default",
                                             "aten.replication_pad3d_backward.default",
                                             "aten.constant_pad_nd.default",
                                             "aten.cat.default",
                                             "aten.stack.default",
                                             "aten.roll.default",
                                             "aten.tril.default",
                                             "aten.empty_strided.default",
                                             "aten.full_like.default",
                                             "aten.fill.Tensor",
                                             "aten.copy.default",
                                             "aten.arange.start_step"};
  for (const char* n : destination_passing) {
    const cpu::KernelEntry* e = cpu::kernel_table().find(n);
    ASSERT_NE(e, nullptr) << n;
    EXPECT_NE(e->run_into, nullptr) << n;
    EXPECT_EQ(e->run, nullptr) << n;
  }
  for (const char* n : {"aten.mul.Tensor", "aten.clamp.Tensor", "aten.sigmoid.default"})
    EXPECT_NE(cpu::kernel_table().find(n)->layout, nullptr) << n;
}

// Every cpu kernel is destination-passing but those that cannot be: a view returns its input's
// storage (its schema's returns alias an argument; _unsafe_view's has no annotation but is one),
// a data-dependent op sizes its own outputs, and an op that returns no tensor has nothing to
// allocate.
TEST(VariantDerivation, EveryCpuKernelButTheViewsDataDependentAndScalarOpsIsDestinationPassing) {
  int returning = 0;
  for (const auto& [name, entry] : cpu::kernel_table().entries()) {
    if (entry.run_into) continue;
    ++returning;
    const OpDef& op = cat().get(name);
    bool views = !op.schema.returns.empty(), no_tensor = true;
    for (const Argument& r : op.schema.returns) {
      views = views && r.alias.has_value();
      no_tensor = no_tensor && r.type.base != BaseType::Tensor;
    }
    EXPECT_TRUE(op.data_dependent || views || no_tensor || name == "aten._unsafe_view.default")
        << name << " returns fresh tensors but its cpu kernel allocates them itself (run)";
  }
  // The views, the data-dependent and the scalar ops: 31 of the table's 417.
  EXPECT_LE(returning, 31);
}

Values call(const OpDef& op, const std::string& text, uint64_t seed = 3) {
  return materialize(op, cases::parse_call(text), seed);
}

std::string raised(const OpDef& op, const Values& args, ErrorKind* kind = nullptr) {
  try {
    op.run_ref(args);
  } catch (const Error& e) {
    if (kind) *kind = e.kind();
    return e.what();
  }
  return "";
}

TEST(VariantRules, InPlaceWritesSelfWithTheFunctionalResult) {
  const OpDef& inplace = cat().get("aten.acos_.default");
  const OpDef& f = cat().get("aten.acos.default");
  Values args = call(inplace, "((T([4, 5], f32),), {})");
  const Tensor before = args[0].tensor().clone();
  const Values out = inplace.run_ref(args);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].tensor().shares_storage(args[0].tensor()));
  const Tensor want = f.run_ref({Value(before)})[0].tensor();
  EXPECT_TRUE(same(want, args[0].tensor()));
  // The meta function returns self itself and computes nothing.
  const Values meta = inplace.run_meta({Value(Tensor::meta({4, 5}, DType::Float32))});
  EXPECT_TRUE(meta[0].tensor().is_meta());
}

TEST(VariantRules, CastRuleRefusesAnOutTheResultCannotBeCastTo) {
  const OpDef& out = cat().get("aten.acos.out");
  EXPECT_EQ(raised(out, call(out, "((T([3], f32),), {'out': T([3], i64)})")),
            "result type Float can't be cast to the desired output type Long");
  // A wider out is written in its dtype.
  Values args = call(out, "((T([3], f32),), {'out': T([3], f64)})");
  EXPECT_EQ(raised(out, args), "");
  EXPECT_EQ(args[1].tensor().dtype(), DType::Float64);
  // The same check in the meta function, on meta tensors.
  try {
    out.run_meta({Value(Tensor::meta({3}, DType::Float32)), Value(Tensor::meta({3}, DType::Bool))});
    ADD_FAILURE() << "meta accepted a bool out for a float result";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "result type Float can't be cast to the desired output type Bool");
  }
}

TEST(VariantRules, InPlaceSelfMustHoldTheResult) {
  const OpDef& add = cat().get("aten.bitwise_and_.Tensor");
  EXPECT_EQ(raised(add, call(add, "((T([5], i32), T([4, 5], i32)), {})")),
            "output with shape [5] doesn't match the broadcast shape [4, 5]");
  EXPECT_EQ(raised(add, call(add, "((T([4, 5], i32, stride=(0, 1)), T([4, 5], i32)), {})")),
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.");
  const OpDef& sin = cat().get("aten.asin_.default");
  EXPECT_EQ(raised(sin, call(sin, "((T([4], i64),), {})")),
            "result type Float can't be cast to the desired output type Long");
}

TEST(VariantRules, AnOutOfAnotherShapeIsNotResized) {
  const OpDef& mm = cat().get("aten.mm.out");
  ErrorKind kind = ErrorKind::OpError;
  const std::string why =
      raised(mm, call(mm, "((T([2, 3], f32), T([3, 4], f32)), {'out': T([2], f32)})"), &kind);
  EXPECT_EQ(kind, ErrorKind::Unsupported) << why;
  EXPECT_NE(why.find("from [2] to the result's shape [2, 4]"), std::string::npos) << why;
}

TEST(VariantRules, FactoryOutTakesItsDtypeFromTheDestination) {
  const OpDef& full = cat().get("aten.full.out");
  Values args = call(full, "(([2, 3], 2.5), {'out': T([2, 3], f16)})");
  const Values out = full.run_ref(args);
  const Tensor t = out[0].tensor();
  EXPECT_EQ(t.dtype(), DType::Float16);
  EXPECT_TRUE(t.shares_storage(args[2].tensor()));
  const Tensor d = t.contiguous().to(DType::Float64);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(d.data<double>()[i], 2.5);
}

TEST(VariantRules, MultipleOutputsAndListsGoToTheirDestinations) {
  const OpDef& mx = cat().get("aten.max.dim_max");
  Values args = call(mx, "((T([3, 4], f32), 1), {'max': T([3], f32), 'max_values': T([3], i64)})");
  const Values out = mx.run_ref(args);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].tensor().shares_storage(args[3].tensor()));
  EXPECT_TRUE(out[1].tensor().shares_storage(args[4].tensor()));
  const Values want = cat().get("aten.max.dim").run_ref({args[0], args[1], args[2]});
  EXPECT_TRUE(same(want[0].tensor(), args[3].tensor()));
  EXPECT_TRUE(same(want[1].tensor(), args[4].tensor()));

  const OpDef& unbind = cat().get("aten.unbind_copy.int_out");
  EXPECT_EQ(
      raised(unbind, call(unbind, "((T([3, 2], f32), 0), {'out': [T([2], f32), T([2], f32)]})")),
      "unbind_copy_out() expected an out= argument of size 3, got size 2");
}

// Every correctness sample of a derived overload runs through the reference and raises an op
// error exactly when its label says so; the cpu backend agrees with the reference on the
// computing ones (it runs the functional kernel and the same destination rules).
TEST(VariantSamples, ReferenceRaisesExactlyOnErrorCasesAndCpuAgrees) {
  auto cpu = make_cpu_backend();
  int computed = 0, on_cpu = 0;
  for (const OpDef* op : cat().all()) {
    if (!derived_variant(op->name)) continue;
    const std::vector<Sample> ss = op->samples(SampleContext{});
    EXPECT_FALSE(ss.empty()) << op->name;
    for (const Sample& s : ss) {
      const std::string text = cases::print_call(s.call);
      Values args;
      try {
        args = materialize(*op, s.call, 11);
      } catch (const Error& e) {
        ADD_FAILURE() << op->name << " " << text << ": does not materialise: " << e.what();
        continue;
      }
      ErrorKind kind = ErrorKind::OpError;
      const std::string error = raised(*op, args, &kind);
      EXPECT_TRUE(error.empty() || kind == ErrorKind::OpError)
          << op->name << " " << text << ": " << error;
      EXPECT_EQ(!error.empty(), s.label.starts_with("error:"))
          << op->name << " [" << s.label << "] " << text << (error.empty() ? "" : ": " + error);
      if (!error.empty()) continue;
      ++computed;
      if (op->compare.random || op->compare.values_unspecified ||
          op->compare.kind != ComparePolicy::Kind::Values || !cpu->supports(*op, args, nullptr))
        continue;
      Values ref_args = materialize(*op, s.call, 11), cpu_args = materialize(*op, s.call, 11);
      const Values want = op->run_ref(ref_args);
      const Values got = cpu->run(*op, cpu_args);
      ASSERT_EQ(want.size(), got.size()) << op->name;
      for (size_t k = 0; k < want.size(); ++k) {
        if (!want[k].is_tensor()) continue;
        const TensorCheck c = compare_tensors(want[k].tensor(), got[k].tensor(), 4.0, "output");
        EXPECT_TRUE(c.passed) << op->name << " " << text << ": " << c.reason;
      }
      ++on_cpu;
    }
  }
  EXPECT_GT(computed, 1000);
  EXPECT_GT(on_cpu, 500);
}

}  // namespace
}  // namespace crucible
