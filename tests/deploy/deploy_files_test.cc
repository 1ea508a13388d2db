// tests/deploy/deploy_files_test.cc
//
// What can be checked of deploy/ without a cluster: every Kubernetes manifest parses (all documents
// of each file); every --flag that deploy/ (manifests, systemd units, SLURM scripts, the container
// file, the code blocks of deploy/README.md) or bench/gpu hands rung-coordinator, rung-worker or
// `rung <command>` is in that binary's --help; the Service, the container ports, the probes and
// the --listen/--health-listen/--coordinator flags name the same ports; every absolute path a
// container is given lies on one of its volume mounts; a coordinator off loopback has TLS and a
// worker dialing off loopback has --tls-ca; shellcheck passes on the shell scripts of deploy/,
// bench/ and .ci/; the container file installs and builds with the steps CI runs; the GPU build's
// CMake path (RUNG_TRAINER_ONLY, RUNG_CPU_ATTENTION_SGEMM=OFF) configures against the installed
// LibTorch without gRPC and links rung-train without libblas.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/common/subprocess.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kSource = RUNG_SOURCE_DIR;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs a shell command; returns its stdout and stderr together.
std::string RunShell(const std::string& command, int* exit_status) {
  rung::SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", command};
  options.stdout_to = rung::Redirect::Pipe();
  options.stderr_to = rung::Redirect::ToStdout();
  rung::StatusOr<rung::SubprocessResult> result = rung::Subprocess::Run(options);
  if (!result.ok()) {
    *exit_status = -1;
    return result.status().ToString();
  }
  *exit_status = result->exit.signal == 0 ? result->exit.code : -1;
  return result->stdout_text;
}

std::vector<fs::path> FilesUnder(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- Invocations of rung binaries found in the deployment files ----

const std::set<std::string> kBinaries = {"rung-coordinator", "rung-worker", "rung"};

struct Invocation {
  std::string binary;      // rung-coordinator, rung-worker or rung
  std::string subcommand;  // for rung: validate, submit, status, ...
  std::vector<std::string> arguments;
  std::string where;  // file (and line) for messages

  std::vector<std::string> Flags() const {
    std::vector<std::string> flags;
    for (const std::string& argument : arguments) {
      if (argument.rfind("--", 0) == 0 && argument.size() > 2) flags.push_back(argument.substr(0, argument.find('=')));
    }
    return flags;
  }
  // The value of --flag (as --flag=value or --flag value); "" when absent.
  std::string Value(const std::string& flag) const {
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (arguments[i] == flag && i + 1 < arguments.size()) return arguments[i + 1];
      if (arguments[i].rfind(flag + "=", 0) == 0) return arguments[i].substr(flag.size() + 1);
    }
    return "";
  }
  bool Has(const std::string& flag) const {
    for (const std::string& found : Flags()) {
      if (found == flag) return true;
    }
    return false;
  }
};

std::string Basename(const std::string& word) {
  const size_t slash = word.rfind('/');
  return slash == std::string::npos ? word : word.substr(slash + 1);
}

// A shell word without quotes and JSON-array punctuation ("rung", -> rung).
std::string CleanWord(std::string word) {
  while (!word.empty() && std::strchr("\"'[`(", word.front()) != nullptr) word.erase(0, 1);
  while (!word.empty() && std::strchr("\"',]`)", word.back()) != nullptr) word.pop_back();
  return word;
}

bool EndsCommand(const std::string& word) {
  static const std::set<std::string> kSeparators = {"|", "||", "&&", ";", "&", ">", ">>", "2>", "2>&1", "<"};
  return word.empty() || kSeparators.count(word) > 0 || word.back() == ';';
}

// Logical lines (backslash continuations joined) of a text file; for Markdown, only the lines of
// fenced code blocks. Comments (from a word starting with '#') are dropped.
std::vector<std::pair<int, std::string>> LogicalLines(const fs::path& path) {
  std::vector<std::pair<int, std::string>> lines;
  std::istringstream in(ReadFile(path));
  const bool markdown = path.extension() == ".md";
  bool in_code = !markdown;
  std::string line, joined;
  int number = 0, start = 0;
  while (std::getline(in, line)) {
    ++number;
    if (markdown && line.rfind("```", 0) == 0) {
      in_code = !in_code;
      continue;
    }
    if (!in_code) continue;
    if (joined.empty()) start = number;
    if (!line.empty() && line.back() == '\\') {
      joined += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    joined += line;
    std::istringstream words(joined);
    std::string word, kept;
    while (words >> word) {
      if (word.front() == '#') break;
      kept += word + " ";
    }
    if (!kept.empty()) lines.emplace_back(start, kept);
    joined.clear();
  }
  return lines;
}

Invocation StartInvocation(const std::string& binary, const std::vector<std::string>& rest, const std::string& where) {
  Invocation invocation{binary, "", {}, where};
  for (const std::string& word : rest) {
    if (word.empty() || EndsCommand(word)) break;
    invocation.arguments.push_back(word);
  }
  if (binary == "rung" && !invocation.arguments.empty() && invocation.arguments[0].front() != '-') {
    invocation.subcommand = invocation.arguments[0];
  }
  return invocation;
}

void InvocationsInText(const fs::path& path, std::vector<Invocation>* out) {
  for (const auto& [number, line] : LogicalLines(path)) {
    std::istringstream in(line);
    std::vector<std::string> words;
    std::string word;
    while (in >> word) words.push_back(CleanWord(word));
    static const std::set<std::string> kPrefixes = {"exec", "sudo", "srun", "nohup", "time", "env"};
    bool command_position = true;  // the first word, after a separator, `exec`, or VAR=value
    for (size_t i = 0; i < words.size(); ++i) {
      const bool here = command_position;
      command_position = EndsCommand(words[i]) || kPrefixes.count(words[i]) > 0 ||
                         (here && std::regex_match(words[i], std::regex("[A-Za-z_][A-Za-z0-9_]*=.*")));
      if (!here || kBinaries.count(Basename(words[i])) == 0) continue;
      out->push_back(StartInvocation(Basename(words[i]),
                                     std::vector<std::string>(words.begin() + static_cast<long>(i) + 1, words.end()),
                                     path.string() + ":" + std::to_string(number)));
    }
  }
}

std::vector<std::string> Strings(const YAML::Node& sequence) {
  std::vector<std::string> values;
  if (!sequence || !sequence.IsSequence()) return values;
  for (const YAML::Node& item : sequence) values.push_back(item.as<std::string>());
  return values;
}

// Containers (and init containers) of every document: command + args.
void ContainersIn(const YAML::Node& node, std::vector<YAML::Node>* out) {
  if (node.IsMap()) {
    if (node["command"] && node["command"].IsSequence() && node["image"]) out->push_back(node);
    for (const auto& entry : node) ContainersIn(entry.second, out);
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node) ContainersIn(item, out);
  }
}

std::vector<YAML::Node> ManifestDocuments(const fs::path& path) { return YAML::LoadAllFromFile(path.string()); }

std::vector<fs::path> Manifests() {
  std::vector<fs::path> manifests;
  for (const fs::path& path : FilesUnder(kSource / "deploy")) {
    if (path.extension() == ".yaml" || path.extension() == ".yml") manifests.push_back(path);
  }
  return manifests;
}

void InvocationsInManifest(const fs::path& path, std::vector<Invocation>* out) {
  std::vector<YAML::Node> containers;
  for (const YAML::Node& document : ManifestDocuments(path)) ContainersIn(document, &containers);
  for (const YAML::Node& container : containers) {
    std::vector<std::string> words = Strings(container["command"]);
    for (const std::string& arg : Strings(container["args"])) words.push_back(arg);
    if (words.empty() || kBinaries.count(Basename(words[0])) == 0) continue;
    out->push_back(StartInvocation(Basename(words[0]), std::vector<std::string>(words.begin() + 1, words.end()),
                                   path.string() + " container " + container["name"].as<std::string>()));
  }
}

std::vector<Invocation> AllInvocations() {
  std::vector<Invocation> invocations;
  std::vector<fs::path> files = FilesUnder(kSource / "deploy");
  for (const fs::path& path : FilesUnder(kSource / "bench" / "gpu")) files.push_back(path);
  for (const fs::path& path : files) {
    if (path.extension() == ".yaml" || path.extension() == ".yml") {
      InvocationsInManifest(path, &invocations);
    } else if (path.extension() != ".py") {
      InvocationsInText(path, &invocations);
    }
  }
  return invocations;
}

// The --flags in a binary's --help (for rung, of one subcommand).
std::set<std::string> HelpFlags(const std::string& binary, const std::string& subcommand, std::string* help_text) {
  static const std::map<std::string, std::string> kPaths = {
      {"rung-coordinator", RUNG_COORDINATOR_BINARY}, {"rung-worker", RUNG_WORKER_BINARY}, {"rung", RUNG_CLI_BINARY}};
  int status = 0;
  *help_text = RunShell(kPaths.at(binary) + (subcommand.empty() ? "" : " " + subcommand) + " --help", &status);
  std::set<std::string> flags;
  if (status != 0) return flags;
  static const std::regex kFlag("--[a-z][a-z0-9-]*");
  for (std::sregex_iterator it(help_text->begin(), help_text->end(), kFlag), end; it != end; ++it) {
    flags.insert(it->str());
  }
  return flags;
}

TEST(DeployFilesTest, EveryManifestParsesAndEveryDocumentHasAKind) {
  const std::vector<fs::path> manifests = Manifests();
  ASSERT_GE(manifests.size(), 4u) << "deploy/kubernetes has the namespace, the PVC, the coordinator and the workers";
  for (const fs::path& path : manifests) {
    std::vector<YAML::Node> documents;
    try {
      documents = ManifestDocuments(path);
    } catch (const YAML::Exception& error) {
      ADD_FAILURE() << path << ": " << error.what();
      continue;
    }
    EXPECT_FALSE(documents.empty()) << path;
    for (const YAML::Node& document : documents) {
      EXPECT_TRUE(document["apiVersion"] && document["kind"]) << path << ": a document without apiVersion or kind";
    }
  }
}

TEST(DeployFilesTest, EveryFlagGivenToARungBinaryIsInItsHelp) {
  const std::vector<Invocation> invocations = AllInvocations();
  std::map<std::string, int> flags_checked;
  std::map<std::string, std::set<std::string>> help_cache;
  for (const Invocation& invocation : invocations) {
    const std::string key = invocation.binary + " " + invocation.subcommand;
    if (help_cache.count(key) == 0) {
      std::string help;
      help_cache[key] = HelpFlags(invocation.binary, invocation.subcommand, &help);
      EXPECT_FALSE(help_cache[key].empty()) << key << "--help failed (used at " << invocation.where << "):\n" << help;
    }
    for (const std::string& flag : invocation.Flags()) {
      EXPECT_EQ(help_cache[key].count(flag), 1u) << invocation.where << ": " << key << " has no " << flag;
      ++flags_checked[invocation.binary];
    }
  }
  // The files do configure all three binaries: a parser that found nothing must not pass.
  EXPECT_GE(flags_checked["rung-coordinator"], 20);
  EXPECT_GE(flags_checked["rung-worker"], 20);
  EXPECT_GE(flags_checked["rung"], 5);
}

bool IsLoopbackHostPort(const std::string& address) {
  return address.rfind("127.", 0) == 0 || address.rfind("localhost:", 0) == 0 || address.rfind("[::1]:", 0) == 0 ||
         address.rfind("unix:", 0) == 0;
}

TEST(DeployFilesTest, CoordinatorsOffLoopbackServeTlsAndWorkersDialWithACa) {
  int coordinators = 0, workers = 0;
  for (const Invocation& invocation : AllInvocations()) {
    if (invocation.binary == "rung-coordinator" && invocation.Has("--db")) {
      ++coordinators;
      const std::string listen = invocation.Value("--listen");
      if (!listen.empty() && !IsLoopbackHostPort(listen)) {
        EXPECT_TRUE(invocation.Has("--tls-cert") && invocation.Has("--tls-key"))
            << invocation.where << ": --listen " << listen << " without --tls-cert and --tls-key is refused";
      }
    }
    if (invocation.binary == "rung-worker" && invocation.Has("--worker-token-file")) {
      ++workers;
      const std::string coordinator = invocation.Value("--coordinator");
      if (!IsLoopbackHostPort(coordinator)) {
        EXPECT_TRUE(invocation.Has("--tls-ca")) << invocation.where << ": dials " << coordinator << " without TLS";
      }
    }
  }
  EXPECT_GE(coordinators, 3);  // systemd, Kubernetes, SLURM
  EXPECT_GE(workers, 3);
}

int PortOf(const std::string& address) {
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? -1 : std::stoi(address.substr(colon + 1));
}

YAML::Node FindDocument(const fs::path& path, const std::string& kind) {
  for (const YAML::Node& document : ManifestDocuments(path)) {
    if (document["kind"].as<std::string>() == kind) return document;
  }
  return YAML::Node();
}

TEST(DeployFilesTest, ServiceProbesAndFlagsAgreeOnPorts) {
  const fs::path dir = kSource / "deploy" / "kubernetes";
  const YAML::Node service = FindDocument(dir / "coordinator.yaml", "Service");
  const YAML::Node statefulset = FindDocument(dir / "coordinator.yaml", "StatefulSet");
  const YAML::Node deployment = FindDocument(dir / "workers.yaml", "Deployment");
  ASSERT_TRUE(service && statefulset && deployment);

  const YAML::Node container = statefulset["spec"]["template"]["spec"]["containers"][0];
  std::vector<Invocation> found;
  InvocationsInManifest(dir / "coordinator.yaml", &found);
  ASSERT_EQ(found.size(), 1u);
  const int listen_port = PortOf(found[0].Value("--listen"));
  const int health_port = PortOf(found[0].Value("--health-listen"));
  EXPECT_NE(listen_port, health_port);

  std::map<std::string, int> container_ports;
  for (const YAML::Node& port : container["ports"]) {
    container_ports[port["name"].as<std::string>()] = port["containerPort"].as<int>();
  }
  const YAML::Node service_port = service["spec"]["ports"][0];
  const std::string target = service_port["targetPort"].as<std::string>();
  const int target_port = container_ports.count(target) ? container_ports[target] : std::stoi(target);
  EXPECT_EQ(target_port, listen_port) << "the Service must reach --listen";
  EXPECT_EQ(container_ports["health"], health_port);
  for (const char* probe : {"startupProbe", "readinessProbe", "livenessProbe"}) {
    ASSERT_TRUE(container[probe]["grpc"]) << probe << " is a grpc probe";
    EXPECT_EQ(container[probe]["grpc"]["port"].as<int>(), health_port)
        << probe << ": kubelet's grpc probe speaks plaintext: it must ask --health-listen, not the TLS port";
  }
  // The Service selects the coordinator pods.
  for (const auto& label : service["spec"]["selector"]) {
    EXPECT_EQ(statefulset["spec"]["template"]["metadata"]["labels"][label.first.as<std::string>()].as<std::string>(),
              label.second.as<std::string>());
  }

  std::vector<Invocation> workers;
  InvocationsInManifest(dir / "workers.yaml", &workers);
  ASSERT_EQ(workers.size(), 1u);
  const std::string dial = workers[0].Value("--coordinator");
  EXPECT_EQ(PortOf(dial), service_port["port"].as<int>());
  const std::string expected_host =
      service["metadata"]["name"].as<std::string>() + "." + service["metadata"]["namespace"].as<std::string>() + ".svc";
  EXPECT_EQ(dial.substr(0, dial.rfind(':')), expected_host);
  // The certificate must name the host the workers dial (deploy/README.md's openssl command).
  EXPECT_THAT(ReadFile(kSource / "deploy" / "README.md"), HasSubstr("DNS:" + expected_host));
}

TEST(DeployFilesTest, EveryAbsolutePathAContainerIsGivenLiesOnOneOfItsMounts) {
  int paths = 0;
  for (const fs::path& path : Manifests()) {
    std::vector<YAML::Node> containers;
    for (const YAML::Node& document : ManifestDocuments(path)) ContainersIn(document, &containers);
    for (const YAML::Node& container : containers) {
      std::vector<std::string> mounts;
      for (const YAML::Node& mount : container["volumeMounts"]) mounts.push_back(mount["mountPath"].as<std::string>());
      std::vector<std::string> words = Strings(container["command"]);
      for (const std::string& arg : Strings(container["args"])) words.push_back(arg);
      static const std::regex kAbsolutePath("(^|[= ])(/[A-Za-z0-9._/-]+)");
      for (const std::string& word : words) {
        for (std::sregex_iterator it(word.begin(), word.end(), kAbsolutePath), end; it != end; ++it) {
          const std::string file = (*it)[2].str();
          ++paths;
          bool mounted = false;
          for (const std::string& mount : mounts) mounted = mounted || file == mount || file.rfind(mount + "/", 0) == 0;
          EXPECT_TRUE(mounted) << path << " container " << container["name"] << ": " << file << " is on no volume mount";
        }
      }
    }
  }
  EXPECT_GE(paths, 10);
}

bool IsShellScript(const fs::path& path) {
  if (path.extension() == ".sh" || path.extension() == ".sbatch") return true;
  if (path.has_extension()) return false;
  const std::string head = ReadFile(path).substr(0, 64);
  return head.rfind("#!", 0) == 0 && (head.find("bash") != std::string::npos || head.find("/sh") != std::string::npos);
}

TEST(DeployFilesTest, ShellcheckPassesOnEveryShellScript) {
  const std::string shellcheck = RUNG_SHELLCHECK;
  ASSERT_TRUE(!shellcheck.empty() && shellcheck.find("NOTFOUND") == std::string::npos)
      << "shellcheck not found: deploy/install-deps.sh installs it";
  std::vector<std::string> scripts;
  for (const char* dir : {"deploy", "bench", ".ci"}) {
    for (const fs::path& path : FilesUnder(kSource / dir)) {
      if (IsShellScript(path)) scripts.push_back(fs::relative(path, kSource).string());
    }
  }
  ASSERT_GE(scripts.size(), 6u);
  std::string command = "cd '" + kSource.string() + "' && '" + shellcheck + "' -x";
  for (const std::string& script : scripts) command += " '" + script + "'";
  int status = 0;
  const std::string output = RunShell(command, &status);
  EXPECT_EQ(status, 0) << output;
}

// The make prerequisites of `target` in the Makefile ("test: build corpus" -> build, corpus).
std::vector<std::string> MakePrerequisites(const std::string& target) {
  std::istringstream in(ReadFile(kSource / "Makefile"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(target + ":", 0) != 0) continue;
    std::istringstream words(line.substr(target.size() + 1));
    std::vector<std::string> prerequisites;
    std::string word;
    while (words >> word) prerequisites.push_back(word);
    return prerequisites;
  }
  return {};
}

TEST(DeployFilesTest, ContainerFileInstallsAndBuildsAsCiDoes) {
  const std::string ci = ReadFile(kSource / ".ci" / "run");
  ASSERT_THAT(ci, HasSubstr("make test")) << "CI's command changed: update deploy/Containerfile and this test";
  const std::vector<std::string> test_steps = MakePrerequisites("test");
  ASSERT_FALSE(test_steps.empty());
  ASSERT_EQ(MakePrerequisites("build"), std::vector<std::string>{"configure"});
  ASSERT_EQ(MakePrerequisites("configure"), std::vector<std::string>{"deps"});

  const std::string containerfile = ReadFile(kSource / "deploy" / "Containerfile");
  EXPECT_TRUE(std::regex_search(containerfile, std::regex("\nFROM (docker\\.io/library/)?debian:(12|bookworm)")))
      << "the base is Debian 12";
  EXPECT_TRUE(std::regex_search(containerfile, std::regex("\nRUN deploy/install-deps\\.sh")))
      << "the container installs with CI's script";
  std::smatch make;
  ASSERT_TRUE(std::regex_search(containerfile, make, std::regex("\nRUN make ([^\\n&]*)")));
  for (const std::string& step : test_steps) {
    EXPECT_THAT(make[1].str(), HasSubstr(step)) << "`make test` runs `" << step << "`: the image must build it too";
  }
  EXPECT_THAT(containerfile, HasSubstr("make install"));
  EXPECT_FALSE(MakePrerequisites("install").empty()) << "the Makefile has an install target";
}

// `make gpu-build`'s CMake path, configured here against Debian's LibTorch (a GPU machine has
// PyTorch's): no gRPC, no coordinator or agent, no tests, and rung-train linked without libblas
// (PyTorch's LibTorch exports no sgemm_) nor the CPU kernel's RUNG_HAVE_SGEMM.
TEST(DeployFilesTest, GpuBuildConfiguresWithoutGrpcAndLinksNoBlas) {
  const fs::path dir = fs::path(RUNG_TEST_SCRATCH_DIR) / "gpu-build-configure";
  fs::remove_all(dir);
  int status = 0;
  const std::string output = RunShell("'" RUNG_CMAKE_COMMAND "' -S '" + kSource.string() + "' -B '" + dir.string() +
                                          "' -DCMAKE_BUILD_TYPE=Release -DRUNG_TRAINER_ONLY=ON "
                                          "-DRUNG_CPU_ATTENTION_SGEMM=OFF",
                                      &status);
  ASSERT_EQ(status, 0) << output;
  const std::string cache = ReadFile(dir / "CMakeCache.txt");
  EXPECT_THAT(cache, HasSubstr("RUNG_BUILD_TESTS:BOOL=OFF"));
  EXPECT_THAT(cache, ::testing::Not(HasSubstr("gRPC_DIR:")));
  EXPECT_FALSE(fs::exists(dir / "coordinator")) << "the coordinator needs gRPC";
  EXPECT_FALSE(fs::exists(dir / "worker" / "agent")) << "the agent needs gRPC";
  const std::string link = ReadFile(dir / "worker" / "CMakeFiles" / "rung-train.dir" / "link.txt");
  ASSERT_THAT(link, HasSubstr("rung-train"));
  EXPECT_THAT(link, ::testing::Not(HasSubstr("libblas")));
  EXPECT_THAT(ReadFile(dir / "core" / "CMakeFiles" / "rung_core.dir" / "flags.make"),
              ::testing::Not(HasSubstr("RUNG_HAVE_SGEMM")));
  fs::remove_all(dir);
}

}  // namespace
