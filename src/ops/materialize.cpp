// Materialisation: from (op, call literal, seed) to bound argument values, deterministically.
#include "crucible/ops/materialize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "crucible/cases/case.h"
#include "crucible/core/error.h"
#include "crucible/core/rng.h"
#include "crucible/ops/variants.h"
#include "ops/ref_parallel.h"

namespace crucible {

using cases::Literal;
using cases::LitKind;
using cases::TensorLit;

namespace {

// Values that break kernels: NaN, infinities, signed zeros, the largest finite values and
// values near overflow, subnormals, mixed with ordinary values (every other element). The
// most telling come first, so that even a tensor of 2 elements holds a NaN and one of 8 NaN,
// both infinities and -0.
double special_float(DType t, int64_t k, Rng& rng) {
  if (k % 2 != 0) return rng.normal();
  const FloatInfo fi = float_info(t);
  const double table[] = {std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          -0.0,
                          0.0,
                          fi.max,
                          -fi.max,
                          fi.true_min,
                          -fi.true_min,
                          fi.tiny,
                          fi.max * 0.75,
                          -fi.max * 0.5,
                          1.0,
                          -1.0,
                          0.5,
                          -2.0};
  constexpr int64_t n = sizeof(table) / sizeof(table[0]);
  return table[(k / 2) % n];
}

int64_t int_min(DType t) {
  switch (t) {
    case DType::Bool:
      return 0;
    case DType::UInt8:
      return 0;
    case DType::Int8:
      return INT8_MIN;
    case DType::Int16:
      return INT16_MIN;
    case DType::Int32:
      return INT32_MIN;
    default:
      return INT64_MIN;
  }
}
int64_t int_max(DType t) {
  switch (t) {
    case DType::Bool:
      return 1;
    case DType::UInt8:
      return UINT8_MAX;
    case DType::Int8:
      return INT8_MAX;
    case DType::Int16:
      return INT16_MAX;
    case DType::Int32:
      return INT32_MAX;
    default:
      return INT64_MAX;
  }
}

int64_t special_int(DType t, int64_t k, Rng& rng) {
  if (k % 3 != 0)
    return rng.integer(std::max<int64_t>(int_min(t), -9), std::min<int64_t>(int_max(t), 9));
  const int64_t table[] = {int_min(t), int_max(t), 0, 1, int_max(t) - 1, int_min(t) + 1};
  int64_t v = table[(k / 3) % 6];
  return std::clamp(v, int_min(t), int_max(t));
}

// The value regimes an implementation may branch on, one fill each (floating tensors; an
// integral tensor under one of them is drawn as by default, except 'integers'):
//  - "integers": small integer-valued floats (-8..8 with -0, powers of two up to 64, up to
//    ±100: sums of their products stay exact in f32), where fast paths for integers and
//    truncation live;
//  - "big_integers": integer-valued floats up to 2^(fraction bits + 1), every sign;
//  - "tiny": normal values of magnitude between the smallest normal and 1e-3, every sign;
//  - "subnormal": subnormals of the dtype mixed with ±0 and the smallest normals;
//  - "huge": magnitudes between max/16 and the dtype's max, every sign (sums and products
//    overflow);
//  - "wide": magnitudes log-uniform in [1, 1e6] (capped at half the dtype's max), every sign,
//    where range reduction (sin, cos, tan) switches algorithms;
//  - "exp_edge": around the thresholds where exp overflows (ln max - 10 .. ln max + 1, i.e.
//    78.7 .. 89.7 for f32) and underflows (ln true_min - 1 .. ln tiny + 1), every fourth value
//    an ordinary one.
double regime_float(DType t, const std::string& fill, int64_t k, Rng& rng) {
  const FloatInfo fi = float_info(t);
  const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
  auto log_uniform = [&](double lo, double hi) {
    return std::exp(std::log(lo) + rng.uniform() * (std::log(hi) - std::log(lo)));
  };
  if (fill == "integers") {
    switch (k % 4) {
      case 0:
        return k % 8 == 4 ? -0.0 : static_cast<double>(rng.integer(-8, 8));
      case 1:
        return sign * std::ldexp(1.0, static_cast<int>(rng.integer(0, 6)));
      default:
        return static_cast<double>(rng.integer(-100, 100));
    }
  }
  if (fill == "big_integers") {
    // Up to 2^(fraction bits + 1): every integer below it is exact; above, every value is one.
    const int64_t top = int64_t{1} << std::min(fi.mantissa_bits + 1, 40);
    return std::min(fi.max, sign * static_cast<double>(rng.integer(0, top)));
  }
  if (fill == "tiny") return sign * log_uniform(fi.tiny, 1e-3);
  if (fill == "subnormal") {
    if (k % 4 == 3) return k % 8 == 3 ? sign * 0.0 : sign * fi.tiny * (1 + rng.uniform());
    const auto steps = static_cast<int64_t>(std::llround(fi.tiny / fi.true_min));
    return sign * fi.true_min * static_cast<double>(rng.integer(1, steps - 1));
  }
  if (fill == "huge") return sign * fi.max * (1.0 / 16 + rng.uniform() * (15.0 / 16));
  if (fill == "wide") return sign * log_uniform(1.0, std::min(1e6, fi.max / 2));
  if (fill == "exp_edge") {
    const double hi = std::log(fi.max), lo = std::log(fi.true_min);
    switch (k % 4) {
      case 0:
      case 1:
        return hi - 10 + rng.uniform() * 11;
      case 2:
        return lo - 1 + rng.uniform() * (std::log(fi.tiny) - lo + 2);
      default:
        return rng.normal();
    }
  }
  internal_error("regime_float: unknown fill " + fill);
}

bool is_regime(const std::string& fill) {
  return fill == "integers" || fill == "big_integers" || fill == "tiny" || fill == "subnormal" ||
         fill == "huge" || fill == "wide" || fill == "exp_edge";
}

struct Drawing {
  ArgRole role;
  int64_t bound = -1;  // IndexInto
  // "", "special", "oob", "uniform", "positive", "offsets", or a value regime (is_regime)
  std::string fill;
};

// Bag boundaries (fill 'offsets'): a non-decreasing sequence that starts at 0 and stays
// within [0, bound], with every fourth boundary repeating the one before it so that bags of
// every length, empty ones included, occur.
void fill_offsets(const Tensor& flat, int64_t bound, Rng& rng) {
  const int64_t extent = flat.numel();
  std::vector<int64_t> v(static_cast<size_t>(extent), 0);
  for (int64_t k = 1; k < extent; ++k) v[k] = rng.integer(0, std::max<int64_t>(bound, 0));
  std::sort(v.begin(), v.end());
  if (extent > 0) v[0] = 0;
  for (int64_t k = 3; k < extent; k += 4) v[k] = v[k - 1];
  for (int64_t k = 0; k < extent; ++k) flat.set_int(k, v[k]);
}

// Complex tensors: the real and imaginary parts are each drawn as a real tensor of the
// component dtype would be (standard normal by default). fill='special' puts the special
// values in either part: the real part of element k takes special value k (every other
// element), the imaginary part special value k + (k/2) % 3, so both parts, only the real or
// only the imaginary part are special in turn (inf+infj, nan+nanj, 1+infj, ...). Positive and
// unit roles draw both parts positive / in [0, 1]; index roles are meaningless for complex
// and draw the real part as for an integral tensor.
void fill_complex(const Tensor& flat, const Drawing& how, Rng& rng) {
  const DType comp = to_real(flat.dtype());
  const int64_t extent = flat.numel();
  for (int64_t k = 0; k < extent; ++k) {
    double re = 0, im = 0;
    switch (how.role.kind) {
      case ArgRole::Kind::IndexInto: {
        const int64_t hi = how.bound > 0 ? how.bound - 1 : 0;
        const int64_t lo = (how.role.allow_negative && how.bound > 0) ? -how.bound : 0;
        flat.set_int(k, rng.integer(lo, hi));
        continue;
      }
      case ArgRole::Kind::Positive:
        re = std::abs(rng.normal()) + 0.25;
        im = std::abs(rng.normal()) + 0.25;
        break;
      case ArgRole::Kind::Unit:
        re = rng.uniform();
        im = rng.uniform();
        break;
      case ArgRole::Kind::NonPositive:
        re = -std::abs(rng.normal());
        im = -std::abs(rng.normal());
        break;
      case ArgRole::Kind::Data:
        if (how.fill == "special") {
          re = special_float(comp, k, rng);
          im = special_float(comp, k + (k / 2) % 3, rng);
        } else if (how.fill == "uniform") {
          re = rng.uniform();
          im = rng.uniform();
        } else if (how.fill == "positive") {
          re = std::abs(rng.normal()) + 0.25;
          im = std::abs(rng.normal()) + 0.25;
        } else {
          re = rng.normal();
          im = rng.normal();
        }
        break;
    }
    flat.set_complex(k, {re, im});
  }
  if (how.fill == "oob" && extent > 0)
    flat.set_int(rng.integer(0, extent - 1), how.bound > 0 ? how.bound : 1);
}

// extent standard normal values of the real floating dtype t into raw, as extent calls of
// rng.normal() stored one by one would (Rng::normals_to). From a block's start (a fresh stream),
// pair i is block i's: the tasks of whole pairs draw their parts of the sequence from copies of
// the stream moved on to them, spread over the references' threads.
void fill_normal(char* raw, DType t, int64_t extent, Rng& rng) {
  constexpr int64_t kTask = int64_t{1} << 18;  // elements a task (even)
  const int64_t tasks = extent / kTask;
  const size_t width = itemsize(t);
  int64_t done = 0;
  if (tasks >= 2 && rng.at_block_start()) {
    refpar::for_each_task(tasks, [&](int64_t task) {
      Rng part = rng;
      part.skip_blocks(static_cast<uint64_t>(task * (kTask / 2)));
      part.normals_to(raw + static_cast<size_t>(task * kTask) * width, t,
                      static_cast<size_t>(kTask));
    });
    done = tasks * kTask;
    rng.skip_blocks(static_cast<uint64_t>(done / 2));
  }
  rng.normals_to(raw + static_cast<size_t>(done) * width, t, static_cast<size_t>(extent - done));
}

Tensor make_tensor(const TensorLit& lit, const Drawing& how, Rng& rng, bool meta) {
  if (!lit.dtype_known)  // no longer produced by the parser (complex dtypes are DTypes)
    unsupported("tensors of dtype " + lit.dtype_text + " are not supported");
  for (int64_t s : lit.shape)
    if (s < 0) op_error(fmt::format("negative size {} in tensor {}", s, shape_str(lit.shape)));
  Shape strides = lit.strides ? *lit.strides : contiguous_strides(lit.shape);
  if (strides.size() != lit.shape.size())
    op_error(fmt::format("tensor {} has {} strides for {} dims", shape_str(lit.shape),
                         strides.size(), lit.shape.size()));
  int64_t extent = 0;  // storage elements needed, overflow-checked
  bool empty = false;
  bool overflow = false;
  for (size_t d = 0; d < lit.shape.size(); ++d) {
    if (lit.shape[d] == 0) empty = true;
    if (strides[d] < 0) op_error("negative strides are not supported in tensor literals");
    int64_t span = 0;
    overflow = overflow || __builtin_mul_overflow(lit.shape[d] - 1, strides[d], &span) ||
               __builtin_add_overflow(extent, span, &extent);
  }
  size_t nbytes = 0;
  overflow = overflow ||
             __builtin_mul_overflow(static_cast<size_t>(extent) + 1, itemsize(lit.dtype), &nbytes);
  if (overflow && !empty)
    throw Error(ErrorKind::Memory, "tensor of shape " + shape_str(lit.shape) + " with strides " +
                                       shape_str(strides) + " is too large");
  extent = empty ? 0 : extent + 1;
  if (meta) return Tensor::meta_strided(lit.shape, strides, lit.dtype);
  auto storage = Storage::allocate_cpu(empty ? 0 : nbytes);
  Tensor flat = Tensor::from_storage(storage, 0, {extent}, {1}, lit.dtype);
  const DType t = lit.dtype;
  const bool floating = is_floating(t);
  if (!how.fill.empty() && how.fill != "special" && how.fill != "oob" && how.fill != "uniform" &&
      how.fill != "positive" && how.fill != "offsets" && !is_regime(how.fill))
    op_error("unknown fill='" + how.fill +
             "' (known: special, uniform, positive, oob, offsets, integers, big_integers, tiny, "
             "subnormal, huge, wide, exp_edge)");
  if (is_complex(t)) {
    fill_complex(flat, how, rng);
    return Tensor::from_storage(storage, 0, lit.shape, strides, lit.dtype);
  }
  if (how.fill == "offsets") {
    if (floating || t == DType::Bool)
      op_error("fill='offsets' needs an integral tensor, not " + std::string(dtype_code(t)));
    fill_offsets(flat, how.bound, rng);
    return Tensor::from_storage(storage, 0, lit.shape, strides, lit.dtype);
  }
  // The fill, decided once per tensor rather than per element.
  const bool special = how.fill == "special";
  const bool regime = floating && is_regime(how.fill);
  const bool uniform = how.fill == "uniform";
  const bool positive = how.fill == "positive";
  // Standard normal data, the common case, is drawn a block at a time and stored straight into
  // the contiguous storage.
  char* raw = static_cast<char*>(storage->data());
  const bool normal = how.role.kind == ArgRole::Kind::Data && floating && !special && !regime &&
                      !uniform && !positive;
  if (normal) fill_normal(raw, t, extent, rng);
  for (int64_t k = 0; k < (normal ? 0 : extent); ++k) {
    switch (how.role.kind) {
      case ArgRole::Kind::IndexInto: {
        int64_t hi = how.bound > 0 ? how.bound - 1 : 0;
        int64_t lo = (how.role.allow_negative && how.bound > 0) ? -how.bound : 0;
        flat.set_int(k, rng.integer(lo, hi));
        continue;
      }
      case ArgRole::Kind::Positive:
        flat.set(k, std::abs(rng.normal()) + 0.25);
        continue;
      case ArgRole::Kind::Unit:
        flat.set(k, rng.uniform());
        continue;
      case ArgRole::Kind::NonPositive:
        flat.set(k, -std::abs(rng.normal()));
        continue;
      case ArgRole::Kind::Data:
        break;
    }
    if (special) {
      if (floating)
        flat.set(k, special_float(t, k, rng));
      else if (t == DType::Bool)
        flat.set_int(k, rng.integer(0, 1));
      else
        flat.set_int(k, special_int(t, k, rng));
    } else if (regime) {
      flat.set(k, regime_float(t, how.fill, k, rng));
    } else if (uniform) {
      floating ? flat.set(k, rng.uniform()) : flat.set_int(k, rng.integer(0, 1));
    } else if (positive) {
      floating ? flat.set(k, std::abs(rng.normal()) + 0.25) : flat.set_int(k, rng.integer(1, 9));
    } else if (floating) {
      internal_error("normal floating data is drawn by fill_normal");
    } else if (t == DType::Bool) {
      flat.set_int(k, rng.integer(0, 1));
    } else if (t == DType::UInt8) {
      flat.set_int(k, rng.integer(0, 18));
    } else {
      flat.set_int(k, rng.integer(-9, 9));
    }
  }
  if (how.fill == "oob" && extent > 0) {
    // One index out of range, so a kernel that does not check bounds is caught and one that
    // does raises as ATen does.
    flat.set_int(rng.integer(0, extent - 1), how.bound > 0 ? how.bound : 1);
  }
  return Tensor::from_storage(storage, 0, lit.shape, strides, lit.dtype);
}

Value symbol_value(const std::string& s) {
  if (s == "torch.strided") return Value(Layout::Strided);
  if (s == "torch.sparse_coo") return Value(Layout::SparseCoo);
  if (s == "torch.contiguous_format") return Value(MemoryFormat::Contiguous);
  if (s == "torch.preserve_format") return Value(MemoryFormat::Preserve);
  if (s == "torch.channels_last") return Value(MemoryFormat::ChannelsLast);
  if (s == "torch.channels_last_3d") return Value(MemoryFormat::ChannelsLast3d);
  if (auto t = parse_dtype(s)) return Value(*t);
  op_error("unsupported symbol '" + s + "' in a case");
}

class Materializer {
 public:
  Materializer(const OpDef& op, const cases::CallSpec& call, uint64_t seed, bool meta)
      : op_(op), call_(call), seed_(seed), meta_(meta) {
    // A derived out= overload draws its inputs as its functional op's case does (the same call
    // without the destinations): the two cases compute the same thing.
    cases::CallSpec key = call;
    if (const DerivedVariant* v = derived_variant(op.name); v && !v->inplace)
      std::erase_if(key.kwargs, [&](const auto& kw) {
        for (size_t d : v->destinations)
          if (op.schema.arguments[d].name == kw.first) return true;
        return false;
      });
    std::string text = cases::print_call(key);
    call_hash_ = hash64(text.data(), text.size());
  }

  Values run() {
    const Schema& s = op_.schema;
    Values positional;
    for (size_t i = 0; i < call_.args.size(); ++i) {
      const Argument* arg = i < s.arguments.size() ? &s.arguments[i] : nullptr;
      positional.push_back(convert(call_.args[i], arg, static_cast<int>(i)));
    }
    std::vector<std::pair<std::string, Value>> keywords;
    for (size_t i = 0; i < call_.kwargs.size(); ++i) {
      const auto& [name, lit] = call_.kwargs[i];
      int idx = s.find_argument(name);
      const Argument* arg = idx >= 0 ? &s.arguments[idx] : nullptr;
      keywords.emplace_back(name, convert(lit, arg, 1000 + static_cast<int>(i)));
    }
    return bind_arguments(s, positional, keywords);
  }

 private:
  // The literal that will be bound to argument `name` (positional or keyword), if any.
  const Literal* literal_of(const std::string& name) const {
    int idx = op_.schema.find_argument(name);
    if (idx >= 0 && static_cast<size_t>(idx) < call_.args.size()) return &call_.args[idx];
    for (const auto& [k, v] : call_.kwargs)
      if (k == name) return &v;
    return nullptr;
  }

  Drawing drawing_for(const Argument* arg, const TensorLit& lit) const {
    Drawing d;
    if (arg) d.role = op_.role_of(arg->name);
    if (lit.fill) d.fill = *lit.fill;
    if (d.role.kind == ArgRole::Kind::IndexInto) {
      // The bag boundaries of the embedding-bag ops are offsets into `indices`, drawn sorted.
      if (arg && arg->name == "offsets" && !lit.fill) d.fill = "offsets";
      d.bound = d.role.bound;
      if (!d.role.of.empty()) {
        const Literal* of = literal_of(d.role.of);
        if (of && of->kind == LitKind::Tensor) {
          const Shape& sh = of->tensor.shape;
          int64_t dim = d.role.dim < 0 ? d.role.dim + static_cast<int64_t>(sh.size()) : d.role.dim;
          d.bound = (dim >= 0 && dim < static_cast<int64_t>(sh.size())) ? sh[dim] : 1;
          if (d.fill == "offsets") d.bound = numel_of(sh);  // indices are read flattened
        } else if (of && of->kind == LitKind::Int) {
          d.bound = of->i;  // a size given as an int argument (num_weights)
        }
      }
    }
    return d;
  }

  Value convert(const Literal& lit, const Argument* arg, int slot) {
    Value v = convert_raw(lit, arg, slot);
    if (!arg) return v;
    // A string given to a Device argument is a device.
    if (arg->type.base == BaseType::Device && v.kind() == ValueKind::String)
      return Value(parse_device(v.str_value()));
    if (arg->type.is_list && arg->type.base == BaseType::Tensor && v.kind() == ValueKind::IntList &&
        v.to_int_list().empty())
      return Value::tensor_list({}, arg->type.element_optional);
    return coerce_to_type(v, arg->type, arg->name);
  }

  Value convert_raw(const Literal& lit, const Argument* arg, int slot) {
    switch (lit.kind) {
      case LitKind::None:
        return Value();
      case LitKind::Bool:
        return Value(lit.b);
      case LitKind::Int:
        return Value(lit.i);
      case LitKind::Float:
        return Value(lit.f);
      case LitKind::String:
        return Value(lit.text);
      case LitKind::DType:
        return Value(lit.dtype);
      case LitKind::Symbol:
        return symbol_value(lit.text);
      case LitKind::Tensor: {
        Rng rng(seed_, call_hash_ ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(slot + 1)));
        return Value(make_tensor(lit.tensor, drawing_for(arg, lit.tensor), rng, meta_));
      }
      case LitKind::List:
      case LitKind::Tuple:
        return convert_list(lit, arg, slot);
      case LitKind::Dict:
        op_error("a dict literal cannot be an operator argument");
    }
    internal_error("materialize: unknown literal kind");
  }

  Value convert_list(const Literal& lit, const Argument* arg, int slot) {
    bool any_tensor = false, any_none = false, any_float = false, all_bool = !lit.items.empty();
    for (const Literal& item : lit.items) {
      any_tensor |= item.kind == LitKind::Tensor;
      any_none |= item.kind == LitKind::None;
      any_float |= item.kind == LitKind::Float;
      all_bool &= item.kind == LitKind::Bool;
    }
    if (any_tensor || (any_none && arg && arg->type.base == BaseType::Tensor)) {
      std::vector<Tensor> ts;
      for (size_t j = 0; j < lit.items.size(); ++j) {
        const Literal& item = lit.items[j];
        if (item.kind == LitKind::None) {
          ts.emplace_back();
          continue;
        }
        if (item.kind != LitKind::Tensor) op_error("a tensor list holds a non-tensor element");
        Rng rng(seed_, call_hash_ ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(slot + 1)) ^
                           (0xbf58476d1ce4e5b9ULL * (j + 1)));
        ts.push_back(make_tensor(item.tensor, drawing_for(arg, item.tensor), rng, meta_));
      }
      return Value::tensor_list(std::move(ts), any_none);
    }
    if (all_bool) {
      std::vector<bool> bs;
      for (const Literal& item : lit.items) bs.push_back(item.b);
      return Value(bs);
    }
    if (any_float) {
      std::vector<double> fs;
      for (const Literal& item : lit.items) {
        if (item.kind != LitKind::Float && item.kind != LitKind::Int)
          op_error("a float list holds a non-number element");
        fs.push_back(item.kind == LitKind::Float ? item.f : static_cast<double>(item.i));
      }
      return Value(fs);
    }
    std::vector<int64_t> is;
    for (const Literal& item : lit.items) {
      if (item.kind != LitKind::Int) op_error("an int list holds a non-integer element");
      is.push_back(item.i);
    }
    return Value(is);
  }

  const OpDef& op_;
  const cases::CallSpec& call_;
  uint64_t seed_;
  bool meta_;
  uint64_t call_hash_ = 0;
};

}  // namespace

Values materialize(const OpDef& op, const cases::CallSpec& call, uint64_t seed) {
  return Materializer(op, call, seed, false).run();
}

Values materialize_meta(const OpDef& op, const cases::CallSpec& call) {
  return Materializer(op, call, 0, true).run();
}

}  // namespace crucible
