// safetensors: what the writer writes is the real format, reads back bit for bit, and every
// corruption is one line naming the file and the tensor.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "crucible/core/error.h"
#include "crucible/graph/parse.h"
#include "crucible/graph/safetensors.h"
#include "crucible/graph/values.h"
#include "graph/graph_test_util.h"

namespace crucible::graph {
namespace {

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("crucible-safetensors-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

// A file of the raw format: the header text (padded as given) and `data` bytes.
std::string raw_file(const std::string& name, const std::string& header, const std::string& data,
                     int64_t length_delta = 0) {
  const std::string path = temp_file(name);
  std::ofstream f(path, std::ios::binary);
  const uint64_t len = header.size() + static_cast<uint64_t>(length_delta);
  for (int k = 0; k < 8; ++k) f.put(static_cast<char>(len >> (8 * k)));
  f << header << data;
  return path;
}

std::string read_error(const std::string& path) {
  try {
    read_safetensors(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    return m;
  }
  return "";
}

Tensor filled(const Shape& shape, DType t, double scale) {
  Tensor x = Tensor::empty(shape, t);
  for (int64_t k = 0; k < x.numel(); ++k) x.set(k, std::fmod(k * scale, 7.0) - 3.0);
  return x;
}

TEST(Safetensors, WritesTheFormatAndReadsItBack) {
  const std::string path = temp_file("roundtrip.safetensors");
  const Tensor f32 = filled({3, 4}, DType::Float32, 0.37);
  const Tensor f32_t = f32.transpose(0, 1);  // stored contiguous
  const Tensor i64 = filled({5}, DType::Int64, 3);
  Tensor b8 = Tensor::empty({4}, DType::Bool);
  for (int k = 0; k < 4; ++k) b8.set_int(k, k % 2);
  const std::vector<std::pair<std::string, Tensor>> ts = {
      {"a.weight", f32_t},
      {"ids", i64},
      {"mask", b8},
      {"h", filled({2, 3}, DType::Float16, 0.5)},
      {"b", filled({2, 3}, DType::BFloat16, 0.25)},
      {"d", filled({2}, DType::Float64, 0.1)},
      {"u", filled({3}, DType::UInt8, 1)},
      {"i8", filled({3}, DType::Int8, 1)},
      {"i16", filled({3}, DType::Int16, 1)},
      {"i32", filled({3}, DType::Int32, 1)},
      {"scalar", Tensor::scalar(2.5, DType::Float32)},
      {"empty", Tensor::empty({0, 3}, DType::Float32)},
  };
  write_safetensors(path, ts, {{"format", "pt"}});

  // The raw bytes: an 8-byte little-endian length, a JSON header, the data 8-byte aligned.
  std::ifstream in(path, std::ios::binary);
  unsigned char len_bytes[8];
  in.read(reinterpret_cast<char*>(len_bytes), 8);
  uint64_t len = 0;
  for (int k = 7; k >= 0; --k) len = (len << 8) | len_bytes[k];
  EXPECT_EQ((8 + len) % 8, 0u);
  std::string header(len, '\0');
  in.read(header.data(), static_cast<std::streamsize>(len));
  const auto j = nlohmann::json::parse(header);
  EXPECT_EQ(j["__metadata__"]["format"], "pt");
  EXPECT_EQ(j["a.weight"]["dtype"], "F32");
  EXPECT_EQ(j["a.weight"]["shape"], nlohmann::json({4, 3}));
  EXPECT_EQ(j["a.weight"]["data_offsets"], nlohmann::json({0, 48}));
  EXPECT_EQ(j["ids"]["data_offsets"], nlohmann::json({48, 88}));
  EXPECT_EQ(j["mask"]["dtype"], "BOOL");
  EXPECT_EQ(j["b"]["dtype"], "BF16");
  float first[2];
  in.read(reinterpret_cast<char*>(first), sizeof first);
  EXPECT_EQ(first[0], static_cast<float>(f32_t.get(0)));
  EXPECT_EQ(first[1], static_cast<float>(f32_t.get(1)));

  const Safetensors back = read_safetensors(path);
  EXPECT_EQ(back.metadata.at("format"), "pt");
  ASSERT_EQ(back.tensors.size(), ts.size());
  for (const auto& [name, t] : ts) {
    const Tensor& r = back.tensors.at(name);
    EXPECT_EQ(r.dtype(), t.dtype()) << name;
    EXPECT_EQ(r.shape(), t.shape()) << name;
    EXPECT_TRUE(r.is_contiguous());
    for (int64_t k = 0; k < t.numel(); ++k) EXPECT_EQ(r.get(k), t.get(k)) << name << " " << k;
  }
}

TEST(Safetensors, BytesInMemoryAreTheFileFormat) {
  const Tensor t = filled({2, 5}, DType::Float32, 0.7);
  const std::string bytes = safetensors_bytes({{"t", t}}, {{"k", "v"}});
  const std::string path = temp_file("bytes.safetensors");
  write_safetensors(path, {{"t", t}}, {{"k", "v"}});
  std::ifstream in(path, std::ios::binary);
  const std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file, bytes);
  const Safetensors back = parse_safetensors(bytes, "payload");
  EXPECT_EQ(back.metadata.at("k"), "v");
  for (int64_t k = 0; k < t.numel(); ++k) EXPECT_EQ(back.tensors.at("t").get(k), t.get(k));
  try {
    parse_safetensors(bytes.substr(0, bytes.size() - 1), "payload");
    FAIL() << "a cut payload was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "payload: tensor 't': data_offsets [0, 40] out of range: the data holds 39 bytes");
  }
}

TEST(Safetensors, WriterRefusesWhatTheFormatCannotHold) {
  EXPECT_THROW(
      write_safetensors(temp_file("c.safetensors"), {{"z", Tensor::empty({2}, DType::Complex64)}}),
      Error);
}

TEST(Safetensors, EveryCorruptionNamesTheFileAndTensor) {
  const std::string ok = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\0');
  EXPECT_EQ(read_error(raw_file("fine", ok, data)), "");

  const std::string tiny = temp_file("tiny");
  std::ofstream(tiny, std::ios::binary) << "abc";
  EXPECT_EQ(read_error(tiny), tiny + ": truncated: 3 bytes, less than the 8-byte header length");

  std::string p = raw_file("longheader", ok, data, 100);
  EXPECT_EQ(read_error(p), p + ": truncated: the header needs " + std::to_string(ok.size() + 100) +
                               " bytes, the file holds " + std::to_string(ok.size() + 8) +
                               " after its length");

  p = raw_file("json", R"({"w":{"dtype":"F32",)", data);
  EXPECT_EQ(read_error(p).rfind(p + ": the header is not valid JSON: ", 0), 0u) << read_error(p);

  p = raw_file("dtype", R"({"w":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})", data);
  EXPECT_EQ(read_error(p),
            p + ": tensor 'w': dtype 'F8' is not one of F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL");

  p = raw_file("range", R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", data);
  EXPECT_EQ(read_error(p),
            p + ": tensor 'w': data_offsets [4, 12] out of range: the data holds 8 bytes");

  // A file cut inside its data: the offsets reach past its end.
  p = raw_file("cut", ok, std::string(5, '\0'));
  EXPECT_EQ(read_error(p),
            p + ": tensor 'w': data_offsets [0, 8] out of range: the data holds 5 bytes");

  p = raw_file("size", R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", data);
  EXPECT_EQ(read_error(p), p + ": tensor 'w': data_offsets [0, 8] hold 8 bytes; F32 [3] needs 12");

  p = raw_file("overlap",
               R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"I32","shape":[1],"data_offsets":[4,8]}})",
               data);
  EXPECT_EQ(read_error(p), p + ": tensor 'b': its data_offsets overlap those of tensor 'a'");

  p = raw_file("offsets", R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data);
  EXPECT_EQ(read_error(p), p + ": tensor 'w': data_offsets is not [begin, end]");

  p = raw_file("shape", R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data);
  EXPECT_EQ(read_error(p), p + ": tensor 'w': the shape holds -2, not a size");

  p = raw_file("meta", R"({"__metadata__":{"k":1}})", "");
  EXPECT_EQ(read_error(p), p + ": __metadata__ 'k' is not a string");

  p = raw_file("array", R"([1, 2])", "");
  EXPECT_EQ(read_error(p), p + ": the header is not a JSON object");

  EXPECT_EQ(read_error(temp_file("absent")),
            temp_file("absent") + ": cannot read the safetensors file");
}

TEST(Safetensors, LoadsParamsAndBuffersByNameAndChecksThem) {
  const Graph g = read_graph(testing::example("conv_bn.graph"));
  const TensorMap seeded = materialize_declarations(g, 3);
  std::vector<std::pair<std::string, Tensor>> ts;
  for (const Declaration& d : g.decls) {
    if (d.kind != DeclKind::Param && d.kind != DeclKind::Buffer) continue;
    Tensor t = seeded.at(d.name).clone();
    for (int64_t k = 0; k < t.numel(); ++k) t.set(k, t.get(k) + 1.0);
    ts.emplace_back(d.name, t);
  }
  const std::string path = temp_file("weights.safetensors");
  write_safetensors(path, ts);
  const Safetensors w = read_safetensors(path);
  const TensorMap loaded = materialize_declarations(g, 3, &w.tensors, path);
  for (const auto& [name, t] : ts) {
    for (int64_t k = 0; k < t.numel(); ++k) EXPECT_EQ(loaded.at(name).get(k), t.get(k)) << name;
  }
  // Inputs and consts still come from the initialisers and the seed.
  for (const char* name : {"x", "scale"}) {
    const Tensor& a = loaded.at(name);
    for (int64_t k = 0; k < a.numel(); ++k) EXPECT_EQ(a.get(k), seeded.at(name).get(k));
  }

  auto load_error = [&](std::vector<std::pair<std::string, Tensor>> edited) {
    write_safetensors(path, edited);
    const Safetensors bad = read_safetensors(path);
    try {
      materialize_declarations(g, 3, &bad.tensors, path);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      return std::string(e.what());
    }
    return std::string();
  };
  auto without = ts;
  std::erase_if(without, [](const auto& p) { return p.first == "bn.running_var"; });
  EXPECT_EQ(load_error(without), path +
                                     ": tensor 'bn.running_var': missing: the graph declares "
                                     "buffer %bn.running_var : T([4], f32)");
  auto mistyped = ts;
  for (auto& [name, t] : mistyped)
    if (name == "conv.weight") t = t.to(DType::Float16);
  EXPECT_EQ(load_error(mistyped), path +
                                      ": tensor 'conv.weight': is f16 [4, 3, 3, 3]; the graph "
                                      "declares T([4, 3, 3, 3], f32)");
  auto reshaped = ts;
  for (auto& [name, t] : reshaped)
    if (name == "bn.bias") t = Tensor::zeros({2, 2}, DType::Float32);
  EXPECT_EQ(load_error(reshaped),
            path + ": tensor 'bn.bias': is f32 [2, 2]; the graph declares T([4], f32)");
}

}  // namespace
}  // namespace crucible::graph
