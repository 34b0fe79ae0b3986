# lit configuration for foldc's suites: every .fold file under test/ is a test.
import os
import lit.formats

config.name = "foldc"
# Run RUN lines with /bin/sh so tests can check exact exit statuses ($?).
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".fold", ".test"]
config.excludes = ["Inputs", "Install", "Unit", "conformance", "fuzz"]  # ctest runs these
config.test_source_root = os.path.join(config.foldc_source_root, "test")
config.test_exec_root = os.path.join(config.foldc_binary_root, "test")

config.substitutions.append(("%foldc", os.path.join(config.foldc_binary_root, "tools", "foldc")))
config.substitutions.append(("%examples", os.path.join(config.foldc_source_root, "examples")))
config.substitutions.append(("FileCheck", config.filecheck))
# Compiles generated code as a user would: warnings are errors.
config.substitutions.append(("%cxx", config.cxx + " -std=c++20 -O1 -Wall -Wextra -Werror -I"
                             + config.foldc_source_root + " " + config.cxx_flags))
config.substitutions.append(("%unit", os.path.join(config.foldc_source_root, "test", "Unit")))
config.substitutions.append(("%runtime_lib", config.runtime_lib))
config.substitutions.append(("%inputs", os.path.join(config.foldc_source_root, "test", "Codegen", "Inputs")))
config.substitutions.append(("%sst_to_jsonl", os.path.join(config.foldc_binary_root, "examples", "sentiment", "sst_to_jsonl")))
config.substitutions.append(("%sst", os.path.join(config.foldc_source_root, "examples", "sentiment", "data", "sst")))
# `not` (inverts an exit status) comes from LLVM's tools, beside FileCheck.
# scripts/sanitize.sh's ThreadSanitizer pass asks serve-hostile for a
# shallower deep request (TSan's unwinder fails on 10^5 levels).
if "FOLDC_SERVE_DEEP" in os.environ:
    config.environment["FOLDC_SERVE_DEEP"] = os.environ["FOLDC_SERVE_DEEP"]
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(config.filecheck), os.environ.get("PATH", "")])
# Generated model drivers (built by examples/ through foldc_add_model).
# Named by target (the example's folder), e.g. %attention_driver.
for target in ["attention", "calculator", "gnn", "language_id", "ngrams", "seq2seq", "sentiment", "tagger", "weave"]:
    config.substitutions.append(("%" + target + "_driver",
                                 os.path.join(config.foldc_binary_root, "examples", target + "_driver")))
# Test-only models built by test/CMakeLists.txt.
config.substitutions.append(("%training_control_driver", os.path.join(
    config.foldc_binary_root, "test", "training_control_driver")))
# The conformance programs' drivers (test/Execution/conformance), e.g. %conformance/beam.
config.substitutions.append(("%conformance/", os.path.join(
    config.foldc_binary_root, "test", "Execution", "conformance", "conformance_")))
# bf16 inference (--precision bf16) runs where the CPU has AVX-512 BF16.
with open("/proc/cpuinfo") as cpuinfo:
    if " avx512_bf16" in cpuinfo.read():
        config.available_features.add("bf16")
# AddressSanitizer reserves terabytes of shadow memory: no address-space limit.
if "address" in config.sanitize:
    config.available_features.add("asan")
# Two ranks on any machine: as root (CI's containers), and more ranks than cores.
if config.mpiexec:
    config.available_features.add("mpi")
    config.substitutions.append(("%mpirun2", config.mpiexec +
                                 " --allow-run-as-root --oversubscribe -np 2"))
config.substitutions.append(("%check", "python3 " + os.path.join(
    config.foldc_source_root, "test", "Execution", "Inputs", "check.py")))
