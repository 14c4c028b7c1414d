// The compile sandbox of kernel folders: what a compiler process may read, write and reach
// (enter_compile_sandbox, tried in a forked child), and real compiles of the attack sources of
// tests/fixtures/compile_attacks (reads outside the folder, a fifo that hangs the compiler, an
// output flood, forged text, a folder name full of shell syntax).
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "backends/dir/kernel_compiler.h"
#include "crucible/backends/backend.h"
#include "crucible/core/error.h"
#include "crucible/ops/op.h"
#include "sandbox/remove_tree.h"
#include "sandbox/sandbox.h"

namespace crucible::dir {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSecret = "CRUCIBLE-TEST-SECRET-5b7e1c launch codes";

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() /
               ("crucible-compile-sandbox-" + name + "-" + std::to_string(getpid()));
  crucible::remove_tree(std::filesystem::path(d).string());
  fs::create_directories(d);
  return d;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every file under `root` as one text (the compiler's logs, the cache's records).
std::string all_text_under(const fs::path& root) {
  std::string s;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() != ".so") s += read_text(it->path());
  return s;
}

// The attack folder copied under `d`/kernels, with what git cannot hold: the secret next to
// the kernel folder, a link to it inside one op's folder, a fifo inside another.
fs::path attack_folder(const fs::path& d) {
  const fs::path k = d / "kernels";
  fs::copy(fs::path(CRUCIBLE_SOURCE_DIR) / "tests/fixtures/compile_attacks", k,
           fs::copy_options::recursive);
  std::ofstream(d / "secret_outside.h") << kSecret << "\n";
  fs::create_symlink(d / "secret_outside.h", k / "exp.default" / "secret.h");
  EXPECT_EQ(mkfifo((k / "sin.default" / "hang.fifo").c_str(), 0600), 0);
  return k;
}

// Runs `body` in a forked child that has entered the compile sandbox `o`; returns its exit
// status (the body's return value), or -1 when the sandbox could not be entered.
int in_compile_sandbox(const CompileSandboxOptions& o, int (*body)(const fs::path&),
                       const fs::path& d) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!enter_compile_sandbox(o).empty()) _exit(255);
    _exit(body(d));
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) == 255) return -1;
  return WEXITSTATUS(st);
}

// Each check sets one bit when the sandbox did not behave.
int probe_box(const fs::path& d) {
  int bad = 0;
  auto opens = [](const fs::path& p, int flags) {
    int fd = open(p.c_str(), flags | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    return fd >= 0;
  };
  if (!opens(d / "src" / "kernel.cpp", O_RDONLY)) bad |= 1;          // its folder: readable
  if (opens(d / "outside.txt", O_RDONLY)) bad |= 2;                  // outside: not readable
  if (!opens(d / "cache" / "out.o", O_WRONLY | O_CREAT)) bad |= 4;   // its cache entry: writable
  if (opens(d / "src" / "planted.h", O_WRONLY | O_CREAT)) bad |= 8;  // its folder: not writable
  if (opens(d / "outside.txt", O_WRONLY | O_APPEND)) bad |= 16;      // outside: not writable
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (s >= 0 || errno != EACCES) bad |= 32;  // no network
  pid_t child = fork();                      // the compiler starts its own programs
  if (child == 0) {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    _exit(99);
  }
  int st = 0;
  if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
    bad |= 64;
  if (kill(getppid(), 0) == 0) bad |= 128;  // no signals beyond the compile (Landlock ABI 6)
  return bad;
}

// A program outside the system's folders (a compiler under /opt/<x>/bin) is found on PATH and
// its install prefix is what the sandboxes let run; a system one needs nothing more.
TEST(CompileSandbox, AProgramOutsideTheSystemFoldersGivesItsInstallPrefix) {
  const fs::path root = fs::temp_directory_path() / ("crucible-prefix-" + std::to_string(getpid()));
  fs::create_directories(root / "bin");
  const fs::path cc = root / "bin" / "crucible-test-cc";
  std::ofstream(cc) << "#!/bin/sh\n";
  fs::permissions(cc, fs::perms::owner_all);
  const char* old = std::getenv("PATH");
  const std::string saved = old ? old : "";
  setenv("PATH", (root.string() + "/bin:" + saved).c_str(), 1);
  EXPECT_EQ(find_on_path("crucible-test-cc"), cc.string());
  EXPECT_EQ(program_prefix("crucible-test-cc"), fs::canonical(root).string());
  EXPECT_EQ(program_prefix(cc.string()), fs::canonical(root).string());
  EXPECT_EQ(program_prefix("sh"), "");  // /bin/sh: a system folder
  EXPECT_EQ(program_prefix("crucible-no-such-program"), "");
  setenv("PATH", saved.c_str(), 1);
  crucible::remove_tree(std::filesystem::path(root).string());
}

TEST(CompileSandbox, ReadsItsFoldersWritesItsEntryStartsProgramsAndHasNoNetwork) {
  fs::path d = fresh_dir("box");
  fs::create_directories(d / "src");
  fs::create_directories(d / "cache");
  std::ofstream(d / "src" / "kernel.cpp") << "int x;\n";
  std::ofstream(d / "outside.txt") << kSecret;
  CompileSandboxOptions o;
  o.exec_dirs = system_toolchain_dirs();
  o.read_dirs = {(d / "src").string()};
  o.read_files = {"/etc/ld.so.cache"};
  o.write_dir = (d / "cache").string();
  int bad = in_compile_sandbox(o, probe_box, d);
  const int abi = landlock_abi_version();
  if (abi > 0) {
    EXPECT_EQ(bad, abi >= 6 ? 0 : 128) << "failed checks, bit mask: " << bad;
    EXPECT_NE(compile_sandbox_description().find("landlock ABI"), std::string::npos);
  } else {
    // Without Landlock only the network is refused, and the description says so.
    EXPECT_EQ(bad & 32, 0);
    EXPECT_NE(compile_sandbox_description().find("no landlock"), std::string::npos);
  }
  EXPECT_EQ(read_text(d / "outside.txt"), kSecret);
  EXPECT_FALSE(fs::exists(d / "src" / "planted.h"));
  o.write_dir = (d / "missing").string();
  EXPECT_EQ(in_compile_sandbox(o, probe_box, d), -1) << "a missing write folder is an error";
  crucible::remove_tree(std::filesystem::path(d).string());
}

TEST(CompileSandbox, AttackSourcesFailToCompileAndLeakNothing) {
  ASSERT_GT(landlock_abi_version(), 0) << "these checks need Landlock (Linux 5.13 or later)";
  fs::path d = fresh_dir("attacks");
  fs::path k = attack_folder(d);
  CompilerConfig cfg = default_compiler_config();
  cfg.cache_dir = (d / "cache").string();
  cfg.timeout_s = 10;  // the right kernel must compile within it under ctest's parallel load
  std::vector<CompileJob> jobs;
  const std::vector<std::string> ops = {"floor", "abs", "neg", "exp", "sin", "sqrt", "cos", "tanh"};
  for (const std::string& op : ops)
    jobs.push_back({(k / (op + ".default") / (op + ".default.cpp")).string(), false});
  auto t0 = std::chrono::steady_clock::now();
  std::vector<CompileOutcome> r = compile_kernels(jobs, cfg);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 40) << "the hanging compile must be stopped at its 10 s limit";
  ASSERT_EQ(r.size(), ops.size());

  EXPECT_TRUE(r[0].ok) << r[0].problem << r[0].diagnostics;  // the correct kernel compiles
  for (size_t i = 1; i < ops.size(); ++i) EXPECT_FALSE(r[i].ok) << ops[i];
  // Reads outside the folder and the toolchain are refused by the sandbox.
  for (size_t i : {1, 2, 3, 5}) {
    EXPECT_TRUE(r[i].problem.empty()) << ops[i] << ": " << r[i].problem;
    EXPECT_NE(r[i].diagnostics.find("Permission denied"), std::string::npos)
        << ops[i] << ": " << r[i].diagnostics;
  }
  // The fifo hangs the compiler until its time limit.
  EXPECT_NE(r[4].problem.find("the compiler did not finish in 10 s"), std::string::npos)
      << r[4].problem;
  EXPECT_TRUE(r[4].log.empty()) << "a compile stopped at its limit is not cached";
  // The flood: 4 KiB kept, all of it counted.
  EXPECT_LE(r[6].diagnostics.size(), kCompileLogLimit);
  EXPECT_GT(r[6].output_bytes, size_t{100000});
  EXPECT_LE(fs::file_size(r[6].log), kCompileLogLimit);

  // The secret is in no output and in no file of the cache.
  for (const CompileOutcome& o : r) {
    EXPECT_EQ(o.diagnostics.find("5b7e1c"), std::string::npos) << o.diagnostics;
    EXPECT_EQ(o.problem.find("5b7e1c"), std::string::npos) << o.problem;
  }
  EXPECT_EQ(all_text_under(d / "cache").find("5b7e1c"), std::string::npos);
  // /etc/shadow's first line (readable to this user or not) is nowhere either.
  std::string shadow = read_text("/etc/shadow");
  shadow = shadow.substr(0, shadow.find('\n'));
  if (!shadow.empty()) {
    EXPECT_EQ(r[1].diagnostics.find(shadow), std::string::npos);
    EXPECT_EQ(all_text_under(d / "cache").find(shadow), std::string::npos);
  }
  // Nothing was written into the kernel folder.
  EXPECT_FALSE(fs::exists(k / "floor.default" / "a.out"));
  crucible::remove_tree(std::filesystem::path(d).string());
}

TEST(CompileSandbox, TheDetailQuotesTheCompilerLabelledCutAndEscaped) {
  fs::path d = fresh_dir("detail");
  fs::path k = attack_folder(d);
  setenv("CRUCIBLE_KERNEL_CACHE", (d / "cache").c_str(), 1);
  setenv("CRUCIBLE_KERNEL_COMPILE_TIMEOUT", "2", 1);
  std::unique_ptr<Backend> b = BackendRegistry::instance().create("dir:" + k.string());
  unsetenv("CRUCIBLE_KERNEL_CACHE");
  unsetenv("CRUCIBLE_KERNEL_COMPILE_TIMEOUT");
  EXPECT_NE(b->version().find("compiled in a sandbox: " + compile_sandbox_description()),
            std::string::npos)
      << b->version();
  auto detail_of = [&](const std::string& op) {
    Tensor x = Tensor::empty({2}, DType::Float32);
    try {
      b->run(OpRegistry::catalog().get(op), {Value(x)});
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::CompileError) << op << ": " << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << op << " ran";
    return std::string();
  };
  const std::string label = "the compiler said (kernel source text, not crucible's): \u00ab";
  // The flood: the quotation holds at most ~600 bytes of the compiler's text.
  std::string flood = detail_of("aten.cos.default");
  size_t open = flood.find(label), close = flood.find("\u00bb");
  ASSERT_NE(open, std::string::npos) << flood;
  ASSERT_NE(close, std::string::npos) << flood;
  EXPECT_LE(close - open - label.size(), 700u) << flood;
  EXPECT_NE(flood.find("more bytes]"), std::string::npos) << flood;
  EXPECT_LT(flood.size(), 1500u) << flood;
  // The kernel folder's path is left out of the compiler's file names.
  EXPECT_NE(flood.find("cos.default/cos.default.cpp:"), std::string::npos) << flood;
  EXPECT_EQ(flood.substr(open, close - open).find(k.string()), std::string::npos) << flood;
  // Forged text: the quotation cannot be closed from inside; no escape byte gets through.
  std::string forged = detail_of("aten.tanh.default");
  open = forged.find(label);
  ASSERT_NE(open, std::string::npos) << forged;
  const size_t first_close = forged.find("\u00bb", open);
  EXPECT_EQ(forged.find("\u00bb", first_close + 1), std::string::npos) << forged;
  EXPECT_NE(forged.find(">> crucible: all cases passed \\x1b[2J"), std::string::npos) << forged;
  EXPECT_EQ(forged.find('\x1b'), std::string::npos) << forged;
  // The hung compile is crucible's words, not a quotation.
  std::string hung = detail_of("aten.sin.default");
  EXPECT_NE(hung.find("sin.default/sin.default.cpp did not compile: the compiler did not finish "
                      "in 2 s"),
            std::string::npos)
      << hung;
  std::string secret = detail_of("aten.neg.default");
  EXPECT_EQ(secret.find("5b7e1c"), std::string::npos) << secret;
  EXPECT_NE(secret.find("Permission denied"), std::string::npos) << secret;
  crucible::remove_tree(std::filesystem::path(d).string());
}

TEST(CompileSandbox, AFolderNameFullOfShellSyntaxIsJustAName) {
  fs::path d = fresh_dir("shell");
  const fs::path k = d / "k $(touch pwned1); `touch pwned2` 'x\" -o pwned5 | touch pwned3 &";
  fs::create_directories(k / "floor.default");
  fs::copy_file(fs::path(CRUCIBLE_SOURCE_DIR) /
                    "tests/fixtures/compile_attacks/floor.default/floor.default.cpp",
                k / "floor.default" / "floor.default.cpp");
  CompilerConfig cfg = default_compiler_config();
  cfg.cache_dir = (d / "cache $(touch pwned4)").string();
  const fs::path cwd = fs::current_path();
  fs::current_path(d);
  std::vector<CompileOutcome> r =
      compile_kernels({{(k / "floor.default" / "floor.default.cpp").string(), false}}, cfg);
  fs::current_path(cwd);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].ok) << r[0].problem << r[0].diagnostics;
  for (const char* f : {"pwned1", "pwned2", "pwned3", "pwned4", "pwned5"}) {
    EXPECT_FALSE(fs::exists(d / f)) << f;
    EXPECT_FALSE(fs::exists(cwd / f)) << f;
    EXPECT_FALSE(fs::exists(d / "cache $(touch pwned4)" / f)) << f;
  }
  crucible::remove_tree(std::filesystem::path(d).string());
}

}  // namespace
}  // namespace crucible::dir
