// Python kernels through CPython's C API, in the candidate process of their op.
//
// The plain C API rather than pybind11: the bridge is small, every reference and every Python
// exception is handled in one place (no C++ exception may cross into or out of a kernel call),
// and nothing of it is a template instantiated in crucible's -Werror build.
#ifdef CRUCIBLE_HAVE_PYTHON
// Python.h first, as CPython asks (it sets feature macros the C library reads).
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#endif

#include "backends/python/python_kernel.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "backends/plugin/kernel_host.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "sandbox/sandbox.h"

#ifdef CRUCIBLE_HAVE_PYTHON
#include "backends/python/bridge_source.h"
#endif

namespace crucible {

std::string python_interpreter() {
  const char* e = std::getenv("CRUCIBLE_PYTHON");
#ifdef CRUCIBLE_PYTHON_EXECUTABLE
  return e && *e ? e : CRUCIBLE_PYTHON_EXECUTABLE;
#else
  return e && *e ? e : "/usr/bin/python3";
#endif
}

std::vector<std::string> python_program_dirs() {
  std::vector<std::string> dirs = system_toolchain_dirs();
  // <env>/bin/python -> <env> (a virtual environment, a conda or pyenv installation).
  std::string exe = python_interpreter();
  for (int up = 0; up < 2; ++up) {
    const size_t slash = exe.find_last_of('/');
    exe = slash == std::string::npos || slash == 0 ? "" : exe.substr(0, slash);
  }
  if (!exe.empty() && exe != "/usr" && exe != "/") dirs.push_back(exe);
  // pip install --user puts packages (Triton and its ptxas) under ~/.local.
  if (const char* home = std::getenv("HOME"); home && *home && std::string(home) != "/")
    dirs.push_back(std::string(home) + "/.local");
  const char* cuda = std::getenv("CUDA_HOME");
  dirs.push_back(cuda && *cuda ? cuda : "/usr/local/cuda");
  // Triton builds its launcher with $CC, else the first gcc, else clang on PATH: a compiler
  // installed outside the system's folders (/opt/gcc/bin/gcc) needs its prefix too.
  const char* cc = std::getenv("CC");
  for (const std::string& c :
       {std::string(cc && *cc ? cc : ""), std::string("gcc"), std::string("clang")})
    if (!c.empty())
      if (std::string p = program_prefix(c); !p.empty()) dirs.push_back(p);
  return dirs;
}

#ifndef CRUCIBLE_HAVE_PYTHON

LoadedKernel load_python_kernel(const PythonKernelSource& source) {
  compile_error(
      fmt::format("{} is a Python kernel, and this crucible was built without Python: install "
                  "libpython3-dev (scripts/install-deps.sh) and configure the build again",
                  source.origin));
}

std::string python_kernel_runtime() { return "no Python (built without libpython3-dev)"; }

ZygoteHooks python_zygote_hooks() { return {}; }

#else

namespace {

// An owned reference.
class Ref {
 public:
  Ref() = default;
  explicit Ref(PyObject* p) : p_(p) {}
  Ref(const Ref&) = delete;
  Ref& operator=(const Ref&) = delete;
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  Ref& operator=(Ref&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~Ref() { Py_XDECREF(p_); }
  PyObject* get() const { return p_; }
  PyObject* release() {
    PyObject* p = p_;
    p_ = nullptr;
    return p;
  }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

// A Python exception is pending: the C++ side unwinds to the kernel call with this.
struct PythonRaised {};

PyObject* check(PyObject* p) {
  if (!p) throw PythonRaised{};
  return p;
}

void ok(int rc) {
  if (rc != 0) throw PythonRaised{};
}

// The state of the one Python kernel of this process.
struct Kernel {
  const OpDef* op = nullptr;
  std::string origin;
  PyObject* bridge = nullptr;  // the module _crucible_bridge (owned for the process's life)
  PyObject* fn = nullptr;      // the kernel function
};
Kernel g_kernel;

Ref call_bridge(const char* name, PyObject* args) {
  Ref f(check(PyObject_GetAttrString(g_kernel.bridge, name)));
  return Ref(check(PyObject_CallObject(f.get(), args)));
}

// The text of the pending exception (formatted by the bridge), and whether it is one of the
// bridge's classes `cls` or a NotImplementedError. Clears it.
struct Raised {
  std::string text;
  std::string kind;  // "Unsupported", "Refused", "LoadError", "NotImplementedError" or ""
};

std::string str_of(PyObject* o) {
  Ref s(PyObject_Str(o));
  if (!s) {
    PyErr_Clear();
    return "<an exception whose str() raised>";
  }
  Py_ssize_t n = 0;
  const char* c = PyUnicode_AsUTF8AndSize(s.get(), &n);
  if (!c) {
    PyErr_Clear();
    return "<an exception with text that is not UTF-8>";
  }
  return std::string(c, static_cast<size_t>(n));
}

Raised take_exception() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  Ref t(type), v(value), b(tb);
  Raised r;
  if (!v) {
    r.text = "an exception without a value";
    return r;
  }
  if (b) PyException_SetTraceback(v.get(), b.get());
  for (const char* cls : {"Unsupported", "Refused", "LoadError"}) {
    Ref c(g_kernel.bridge ? PyObject_GetAttrString(g_kernel.bridge, cls) : nullptr);
    if (c && PyObject_IsInstance(v.get(), c.get()) == 1) r.kind = cls;
    PyErr_Clear();
  }
  if (r.kind.empty() && PyErr_GivenExceptionMatches(v.get(), PyExc_NotImplementedError))
    r.kind = "NotImplementedError";
  if (!r.kind.empty() && r.kind != "NotImplementedError") {
    r.text = str_of(v.get());
    return r;
  }
  // The kernel's own exception: "<file> raised <Type>: <message>" and its traceback.
  const std::string summary =
      fmt::format("{} raised {}: {}", g_kernel.origin, Py_TYPE(v.get())->tp_name, str_of(v.get()));
  std::string trace;
  if (g_kernel.bridge) {
    Ref f(PyObject_GetAttrString(g_kernel.bridge, "describe_exception"));
    Ref s(f ? PyObject_CallOneArg(f.get(), v.get()) : nullptr);
    if (s) trace = str_of(s.get());
    PyErr_Clear();
  }
  r.text = summary.substr(0, 600);
  if (!trace.empty()) {
    // The end of a traceback says most (the innermost frames and the exception).
    constexpr size_t kKeep = 1300;
    if (trace.size() > kKeep) trace = "[...]" + trace.substr(trace.size() - kKeep);
    r.text += "\n" + trace;
  }
  return r;
}

int32_t fail(crucible_call* call, const std::string& msg, int32_t status) {
  if (call->error && call->error_size > 0) {
    const size_t n = std::min(msg.size(), call->error_size - 1);
    std::memcpy(call->error, msg.data(), n);
    call->error[n] = '\0';
  }
  return status;
}

// A DLPack capsule over a crucible tensor (no copy). PyTorch takes it over (renaming it
// "used_dltensor") and calls the deleter when the tensor dies.
struct Managed {
  DLManagedTensor managed{};
  int64_t shape[CRUCIBLE_MAX_NDIM] = {};
  int64_t strides[CRUCIBLE_MAX_NDIM] = {};
};

void managed_deleter(DLManagedTensor* self) { delete static_cast<Managed*>(self->manager_ctx); }

void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;  // consumed
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (m && m->deleter) m->deleter(m);
}

// A torch.Tensor over `t`'s memory.
Ref to_tensor(const DLTensor* t) {
  if (t->ndim < 0 || t->ndim > CRUCIBLE_MAX_NDIM) {
    PyErr_SetString(PyExc_ValueError, "a tensor with a bad rank");
    throw PythonRaised{};
  }
  auto* m = new Managed;
  DLTensor& d = m->managed.dl_tensor;
  d = *t;
  // PyTorch's DLPack import before 2.x ignores byte_offset: fold it into the pointer.
  if (d.data) d.data = static_cast<char*>(d.data) + d.byte_offset;
  d.byte_offset = 0;
  d.shape = m->shape;
  d.strides = m->strides;
  for (int i = 0; i < t->ndim; ++i) {
    m->shape[i] = t->shape[i];
    m->strides[i] = t->strides[i];
  }
  // Types PyTorch's DLPack import refuses travel as integers of their width (the bridge views
  // them as their type): bool and float8 as uint8, wide unsigned integers as signed ones.
  const int code = t->dtype.code, bits = t->dtype.bits;
  if (code == CRUCIBLE_DL_BOOL || code == CRUCIBLE_DL_FLOAT8_E4M3FN ||
      code == CRUCIBLE_DL_FLOAT8_E5M2)
    d.dtype = {kDLUInt, 8, 1};
  else if (code == kDLUInt && bits > 8)
    d.dtype = {kDLInt, static_cast<uint8_t>(bits), 1};
  m->managed.manager_ctx = m;
  m->managed.deleter = managed_deleter;
  PyObject* cap = PyCapsule_New(&m->managed, "dltensor", capsule_destructor);
  if (!cap) {
    delete m;
    throw PythonRaised{};
  }
  Ref capsule(cap);
  Ref args(check(Py_BuildValue("(Oii)", capsule.get(), code, bits)));
  return call_bridge("tensor", args.get());
}

Ref from_code(const char* fn, int a, int b) {
  Ref args(check(Py_BuildValue("(ii)", a, b)));
  return call_bridge(fn, args.get());
}
Ref from_int(const char* fn, int a) {
  Ref args(check(Py_BuildValue("(i)", a)));
  return call_bridge(fn, args.get());
}

// The arguments of one call as Python values, and every input tensor for the checks.
struct PyArgs {
  std::map<const DLTensor*, PyObject*> tensors;  // borrowed from `inputs`
  Ref inputs;                                    // list of (name, tensor)
  std::vector<const DLTensor*> input_dl;         // parallel to `inputs`
};

Ref tensor_arg(const DLTensor* d, const std::string& name, PyArgs& pa) {
  Ref t = to_tensor(d);
  Ref pair(check(Py_BuildValue("(sO)", name.c_str(), t.get())));
  ok(PyList_Append(pa.inputs.get(), pair.get()));
  pa.tensors[d] = t.get();
  pa.input_dl.push_back(d);
  return t;
}

Ref to_python(const crucible_value& v, const std::string& name, PyArgs& pa) {
  switch (v.kind) {
    case CRUCIBLE_NONE:
      return Ref(Py_NewRef(Py_None));
    case CRUCIBLE_TENSOR:
      return tensor_arg(v.v.tensor, name, pa);
    case CRUCIBLE_TENSOR_LIST:
    case CRUCIBLE_OPT_TENSOR_LIST: {
      Ref l(check(PyList_New(0)));
      for (int64_t j = 0; j < v.v.tensors.size; ++j) {
        const DLTensor* d = v.v.tensors.items[j];
        Ref item = d ? tensor_arg(d, fmt::format("{}[{}]", name, j), pa) : Ref(Py_NewRef(Py_None));
        ok(PyList_Append(l.get(), item.get()));
      }
      return l;
    }
    case CRUCIBLE_INT:
      return Ref(check(PyLong_FromLongLong(v.v.i)));
    case CRUCIBLE_FLOAT:
      return Ref(check(PyFloat_FromDouble(v.v.f)));
    case CRUCIBLE_BOOL:
      return Ref(check(PyBool_FromLong(v.v.b)));
    case CRUCIBLE_STRING:
      return Ref(check(PyUnicode_FromString(v.v.s)));
    case CRUCIBLE_INT_LIST:
    case CRUCIBLE_FLOAT_LIST:
    case CRUCIBLE_BOOL_LIST: {
      const int64_t n = v.kind == CRUCIBLE_INT_LIST ? v.v.ints.size
                        : v.kind == CRUCIBLE_FLOAT_LIST ? v.v.floats.size
                                                        : v.v.bools.size;
      Ref l(check(PyList_New(n)));
      for (int64_t j = 0; j < n; ++j) {
        PyObject* x = v.kind == CRUCIBLE_INT_LIST ? PyLong_FromLongLong(v.v.ints.items[j])
                      : v.kind == CRUCIBLE_FLOAT_LIST ? PyFloat_FromDouble(v.v.floats.items[j])
                                                      : PyBool_FromLong(v.v.bools.items[j]);
        PyList_SET_ITEM(l.get(), j, check(x));
      }
      return l;
    }
    case CRUCIBLE_DTYPE:
      return from_code("dtype", v.v.dtype.code, v.v.dtype.bits);
    case CRUCIBLE_DEVICE:
      return from_code("device", v.v.device.device_type, v.v.device.device_id);
    case CRUCIBLE_LAYOUT:
      return from_int("layout", v.v.layout);
    case CRUCIBLE_MEMORY_FORMAT:
      return from_int("memory_format", v.v.memory_format);
    default:
      PyErr_Format(PyExc_ValueError, "argument '%s' has an unknown kind %d", name.c_str(),
                   static_cast<int>(v.kind));
      throw PythonRaised{};
  }
}

// Per return of the schema, what the bridge must check and fill (see finish() in the bridge).
Ref output_slots(crucible_call* call, const PyArgs& pa) {
  const Schema& s = g_kernel.op->schema;
  Ref slots(check(PyList_New(0)));
  for (int32_t k = 0; k < call->num_outputs; ++k) {
    const crucible_value& v = call->outputs[k];
    Ref slot;
    if (v.kind == CRUCIBLE_INT || v.kind == CRUCIBLE_FLOAT || v.kind == CRUCIBLE_BOOL) {
      slot = Ref(check(Py_BuildValue("(s)", "number")));
    } else if (v.kind == CRUCIBLE_TENSOR_LIST) {
      Ref l(check(PyList_New(0)));
      for (int64_t j = 0; j < v.v.tensors.size; ++j) {
        Ref t = to_tensor(v.v.tensors.items[j]);
        ok(PyList_Append(l.get(), t.get()));
      }
      slot = Ref(check(Py_BuildValue("(sO)", "list", l.get())));
    } else if (v.kind == CRUCIBLE_TENSOR) {
      auto mutated = pa.tensors.find(v.v.tensor);
      const bool view = static_cast<size_t>(k) < s.returns.size() && s.returns[k].alias &&
                        !s.returns[k].alias->is_write;
      if (mutated != pa.tensors.end()) {
        std::string name = "self";
        for (int32_t a = 0; a < call->num_args && static_cast<size_t>(a) < s.arguments.size(); ++a)
          if (call->args[a].kind == CRUCIBLE_TENSOR && call->args[a].v.tensor == v.v.tensor)
            name = s.arguments[a].name;
        slot = Ref(check(Py_BuildValue("(sOs)", "mutated", mutated->second, name.c_str())));
      } else if (!v.v.tensor->data && v.v.tensor->ndim == 0) {
        slot = Ref(check(Py_BuildValue("(s)", "data_dependent")));
      } else {
        Ref t = to_tensor(v.v.tensor);
        slot = Ref(check(Py_BuildValue("(sO)", view ? "view" : "fresh", t.get())));
      }
    } else {
      PyErr_Format(PyExc_ValueError, "output %d has an unknown kind %d", static_cast<int>(k),
                   static_cast<int>(v.kind));
      throw PythonRaised{};
    }
    ok(PyList_Append(slots.get(), slot.get()));
  }
  return slots;
}

std::vector<int64_t> int_list(PyObject* l) {
  std::vector<int64_t> out;
  const Py_ssize_t n = PyList_Size(l);
  for (Py_ssize_t i = 0; i < n; ++i) {
    out.push_back(PyLong_AsLongLong(PyList_GetItem(l, i)));
    if (PyErr_Occurred()) throw PythonRaised{};
  }
  return out;
}

// Carries out the bridge's actions: views, data-dependent outputs and numbers.
int32_t apply_actions(crucible_call* call, PyObject* actions, const PyArgs& pa) {
  const Py_ssize_t n = PyList_Size(actions);
  for (Py_ssize_t k = 0; k < n && k < call->num_outputs; ++k) {
    PyObject* a = PyList_GetItem(actions, k);
    if (a == Py_None) continue;
    const std::string what = PyUnicode_AsUTF8(PyTuple_GetItem(a, 0));
    crucible_value& out = call->outputs[k];
    if (what == "view") {
      const Py_ssize_t base = PyLong_AsSsize_t(PyTuple_GetItem(a, 1));
      const int64_t offset = PyLong_AsLongLong(PyTuple_GetItem(a, 2));
      const std::vector<int64_t> shape = int_list(PyTuple_GetItem(a, 3));
      const std::vector<int64_t> strides = int_list(PyTuple_GetItem(a, 4));
      if (base < 0 || static_cast<size_t>(base) >= pa.input_dl.size() ||
          shape.size() > CRUCIBLE_MAX_NDIM)
        return fail(call, fmt::format("output {}: a view crucible cannot describe", k),
                    CRUCIBLE_INTERNAL);
      const int32_t st =
          call->make_view(call, out.v.tensor, pa.input_dl[base], static_cast<int32_t>(shape.size()),
                          shape.data(), strides.data(), offset);
      if (st != CRUCIBLE_OK) return st;
    } else if (what == "data_dependent") {
      PyObject* r = PyTuple_GetItem(a, 1);
      const int code = static_cast<int>(PyLong_AsLong(PyTuple_GetItem(a, 2)));
      const int bits = static_cast<int>(PyLong_AsLong(PyTuple_GetItem(a, 3)));
      Ref shape_obj(check(PyObject_CallMethod(r, "size", nullptr)));
      Ref shape_list(check(PySequence_List(shape_obj.get())));
      const std::vector<int64_t> shape = int_list(shape_list.get());
      if (shape.size() > CRUCIBLE_MAX_NDIM)
        return fail(call, fmt::format("output {}: more than {} dimensions", k, CRUCIBLE_MAX_NDIM),
                    CRUCIBLE_INTERNAL);
      const DLDataType dt{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
      const int32_t st = call->alloc_output(call, out.v.tensor, static_cast<int32_t>(shape.size()),
                                            shape.data(), dt);
      if (st != CRUCIBLE_OK) return st;
      Ref t = to_tensor(out.v.tensor);
      Ref args(check(Py_BuildValue("(OO)", t.get(), r)));
      call_bridge("copy_into", args.get());
    } else if (what == "number") {
      PyObject* x = PyTuple_GetItem(a, 1);
      if (PyBool_Check(x)) {
        out.kind = CRUCIBLE_BOOL;
        out.v.b = x == Py_True ? 1 : 0;
      } else if (PyLong_Check(x)) {
        out.kind = CRUCIBLE_INT;
        out.v.i = PyLong_AsLongLong(x);
        if (PyErr_Occurred()) throw PythonRaised{};
      } else {
        out.kind = CRUCIBLE_FLOAT;
        out.v.f = PyFloat_AsDouble(x);
      }
    }
  }
  return CRUCIBLE_OK;
}

int32_t run_call(crucible_call* call) {
  const Schema& s = g_kernel.op->schema;
  PyArgs pa;
  pa.inputs = Ref(check(PyList_New(0)));
  Ref threads(check(Py_BuildValue("(i)", call->num_threads)));
  call_bridge("set_threads", threads.get());
  Ref positional(check(PyList_New(0)));
  Ref keywords(check(PyDict_New()));
  for (int32_t i = 0; i < call->num_args; ++i) {
    const Argument* a = static_cast<size_t>(i) < s.arguments.size() ? &s.arguments[i] : nullptr;
    const std::string name = a ? a->name : fmt::format("arg{}", i);
    Ref v = to_python(call->args[i], name, pa);
    if (a && a->kwarg_only)
      ok(PyDict_SetItemString(keywords.get(), name.c_str(), v.get()));
    else
      ok(PyList_Append(positional.get(), v.get()));
  }
  Ref slots = output_slots(call, pa);
  Ref args(check(PyList_AsTuple(positional.get())));
  Ref result(PyObject_Call(g_kernel.fn, args.get(), keywords.get()));
  if (!result) {
    Raised r = take_exception();
    return fail(call, r.text,
                r.kind == "Unsupported" || r.kind == "NotImplementedError" ? CRUCIBLE_UNSUPPORTED
                : r.kind == "Refused" ? CRUCIBLE_INTERNAL
                                      : CRUCIBLE_ERROR);
  }
  Ref op_name(check(PyUnicode_FromString(g_kernel.op->name.c_str())));
  Ref finish_args(
      check(Py_BuildValue("(OOOO)", op_name.get(), result.get(), slots.get(), pa.inputs.get())));
  Ref actions = call_bridge("finish", finish_args.get());
  return apply_actions(call, actions.get(), pa);
}

// The signal dispositions before CPython starts, or before a call. Its signal module installs a
// SIGINT handler when first imported (whatever PyConfig says), and a JIT compiler may install
// its own crash handlers while it compiles (Triton's LLVM sets SIGHUP, INT, QUIT, USR1, USR2,
// TERM, XCPU and XFSZ when it first builds a kernel): the candidate process must not keep them,
// so they are put back as they were, after the interpreter starts and after every call. What a
// call does with signals while it runs is its own; after it, the next call and the judge see
// crucible's dispositions. SIGSYS is the sandbox's and stays.
class SignalDispositions {
 public:
  SignalDispositions() {
    for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, nullptr, &saved_[sig]);
  }
  void restore() const {
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSYS) continue;
      struct sigaction now {};
      if (sigaction(sig, nullptr, &now) != 0) continue;
      if (now.sa_handler != saved_[sig].sa_handler || now.sa_flags != saved_[sig].sa_flags)
        sigaction(sig, &saved_[sig], nullptr);
    }
  }

 private:
  struct sigaction saved_[NSIG] = {};
};

int32_t python_kernel_entry(crucible_call* call) {
  // A timing loop's repeated call leaves out the dispositions' save and restore (about 130
  // system calls, 200 us a call on a 2-core machine): what it changes stays in its own process,
  // where a judged call's check compares with the state that call starts from.
  std::optional<SignalDispositions> dispositions;
  if (!kernel_call_is_repeat()) dispositions.emplace();
  PyGILState_STATE gil = PyGILState_Ensure();
  int32_t status;
  try {
    status = run_call(call);
  } catch (const PythonRaised&) {
    Raised r = take_exception();
    status = fail(call, r.text,
                  r.kind == "Unsupported" || r.kind == "NotImplementedError" ? CRUCIBLE_UNSUPPORTED
                                                                             : CRUCIBLE_INTERNAL);
  }
  PyGILState_Release(gil);
  if (dispositions) dispositions->restore();
  return status;
}

void initialize_python() {
  if (Py_IsInitialized()) return;
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.install_signal_handlers = 0;  // crucible's signal dispositions stay as they are
  config.buffered_stdio = 0;           // prints reach the captured output before a crash
  config.write_bytecode = 0;           // nothing written beside the kernels
  config.parse_argv = 0;
#if PY_VERSION_HEX >= 0x030B0000
  // Never the working folder on sys.path: the interpreter may start in the candidate zygote,
  // outside the sandbox, where a `torch.py` beside the user's kernels must not be imported.
  config.safe_path = 1;
#endif
  const std::string exe = python_interpreter();
  PyStatus st = PyConfig_SetBytesString(&config, &config.program_name, exe.c_str());
  if (!PyStatus_Exception(st)) st = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(st))
    compile_error(fmt::format("cannot start the Python interpreter {}: {}", exe,
                              st.err_msg ? st.err_msg : "unknown error"));
}

// The module _crucible_bridge (which imports torch), or nullptr with the Python exception set.
PyObject* import_bridge() {
  Ref code(Py_CompileString(python::kBridgeSource, "<crucible bridge>", Py_file_input));
  return code ? PyImport_ExecCodeModule("_crucible_bridge", code.get()) : nullptr;
}

// In the candidate zygote: the interpreter and the bridge, with torch, imported once for every
// candidate process it forks. g_zygote_thread is the zygote's thread state while it waits with
// the GIL released; g_warm_bridge the bridge a forked candidate process inherits.
PyThreadState* g_zygote_thread = nullptr;
PyObject* g_warm_bridge = nullptr;

void warm_in_zygote() {
  // libgomp reads its settings when PyTorch loads it: what a candidate process would set for
  // itself (become_clean_child) is set here first.
  setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
  const SignalDispositions dispositions;
  try {
    initialize_python();
  } catch (const Error&) {
    dispositions.restore();
    return;  // each candidate process tries again and reports why
  }
  g_warm_bridge = import_bridge();
  if (g_warm_bridge) {
    Ref pid(PyLong_FromLong(static_cast<long>(getpid())));
    if (!pid || PyObject_SetAttrString(g_warm_bridge, "WARMED_IN", pid.get()) != 0) PyErr_Clear();
  } else {
    PyErr_Clear();  // likewise: the candidate's own import says why
  }
  g_zygote_thread = PyEval_SaveThread();
  dispositions.restore();
}

// The three fork hooks CPython asks for (PyOS_BeforeFork and its pair), with the GIL held.
void zygote_before_fork() {
  if (!g_zygote_thread) return;
  PyEval_RestoreThread(g_zygote_thread);
  PyOS_BeforeFork();
}

void zygote_after_fork_parent() {
  if (!g_zygote_thread) return;
  PyOS_AfterFork_Parent();
  g_zygote_thread = PyEval_SaveThread();
}

// The child keeps the GIL, as after Py_Initialize: load_python_kernel goes on from there.
void zygote_after_fork_child() {
  if (!g_zygote_thread) return;
  PyOS_AfterFork_Child();
  g_zygote_thread = nullptr;
}

// The bridge for this process: the one inherited from the zygote, its os.environ brought up to
// date with what this process has set since, or a fresh import.
PyObject* bridge_for_this_process() {
  if (!g_warm_bridge) return import_bridge();
  PyObject* bridge = g_warm_bridge;
  g_warm_bridge = nullptr;
  Ref env(PyDict_New());
  if (!env) return nullptr;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq || eq == *e) continue;
    Ref k(PyBytes_FromStringAndSize(*e, eq - *e));
    Ref v(PyBytes_FromString(eq + 1));
    if (!k || !v || PyDict_SetItem(env.get(), k.get(), v.get()) != 0) return nullptr;
  }
  Ref sync(PyObject_GetAttrString(bridge, "sync_environ"));
  Ref args(sync ? Py_BuildValue("(O)", env.get()) : nullptr);
  Ref done(args ? PyObject_CallObject(sync.get(), args.get()) : nullptr);
  if (!done) return nullptr;
  return bridge;
}

}  // namespace

ZygoteHooks python_zygote_hooks() {
  ZygoteHooks h;
  h.warm = warm_in_zygote;
  h.before_fork = zygote_before_fork;
  h.after_fork_parent = zygote_after_fork_parent;
  h.after_fork_child = zygote_after_fork_child;
  return h;
}

LoadedKernel load_python_kernel(const PythonKernelSource& source) {
  if (g_kernel.fn) internal_error("one Python kernel per candidate process");
  const OpDef* op = OpRegistry::catalog().find(source.op);
  if (!op) internal_error("a Python kernel for an op outside the catalog: " + source.op);
  // Triton caches what it compiles in the op's shared JIT cache (kept for the op's later
  // processes: share_jit_cache_in_sandbox), else in the process's scratch folder: the places the
  // sandbox lets it write.
  if (const char* shared = std::getenv("CRUCIBLE_JIT_CACHE"); shared && *shared)
    setenv("TRITON_CACHE_DIR", (std::string(shared) + "/triton").c_str(), 1);
  else if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp)
    setenv("TRITON_CACHE_DIR", (std::string(tmp) + "/triton-cache").c_str(), 1);
  const SignalDispositions dispositions;
  initialize_python();
  g_kernel.op = op;
  g_kernel.origin = source.origin;
  std::string error;
  {
    Ref module(bridge_for_this_process());
    if (!module) {
      Raised r = take_exception();
      compile_error(fmt::format(
          "{}: cannot import torch in the Python of {} (set CRUCIBLE_PYTHON to an interpreter "
          "of Python {}.{} with PyTorch; python3-torch on Debian): {}",
          source.origin, python_interpreter(), PY_MAJOR_VERSION, PY_MINOR_VERSION, r.text));
    }
    g_kernel.bridge = module.release();
    Ref names(PyList_New(0));
    for (const std::string& n : source.names) {
      Ref s(PyUnicode_FromString(n.c_str()));
      PyList_Append(names.get(), s.get());
    }
    Ref args(Py_BuildValue("(sssO)", source.path.c_str(), source.origin.c_str(),
                           source.root.c_str(), names.get()));
    Ref load(PyObject_GetAttrString(g_kernel.bridge, "load"));
    Ref got(load && args ? PyObject_CallObject(load.get(), args.get()) : nullptr);
    if (!got) {
      error = take_exception().text;
    } else {
      g_kernel.fn = Py_NewRef(PyTuple_GetItem(got.get(), 0));
    }
  }
  // The kernel's calls take the GIL themselves (threads the kernel started may run between
  // calls, where crucible's checks can see them).
  PyEval_SaveThread();
  dispositions.restore();
  if (!error.empty()) compile_error(error);
  LoadedKernel k;
  k.op = source.op;
  k.fn = &python_kernel_entry;
  k.origin = source.origin;
  return k;
}

std::string python_kernel_runtime() {
  return fmt::format("CPython {} embedded (torch from the environment of {})", PY_VERSION,
                     python_interpreter());
}

#endif

}  // namespace crucible
