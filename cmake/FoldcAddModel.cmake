# foldc_add_model(TARGET name SOURCE file.fold [DRIVER] [NAMESPACE ns] [IMPORT_DIRS dir...])
#
# Compiles a Fold program with foldc into name.h / name.cpp (and name_main.cpp
# with DRIVER) under the current binary dir, and adds:
#   - a static library `name`: the generated model, linked to Foldc::model,
#     whose users include "name.h";
#   - with DRIVER, an executable `name_driver`: `name_driver train|eval|infer`.
#     When CMake finds MPI (and FOLDC_MPI is not OFF), the driver links
#     MPI::MPI_CXX and trains data-parallel under `mpirun -np N`; without MPI
#     it is the same driver for one process.
# The code is regenerated when the .fold file or a header it imports changes
# (foldc writes a depfile), and when foldc itself changes.
#
# Generated models are compiled optimised (-O2, Eigen's internal asserts off)
# in every configuration, Debug and no CMAKE_BUILD_TYPE included: unoptimised
# Eigen kernels run 20-40x slower, which no one building a model wants.
# With FOLDC_NATIVE set (opt-in), they are compiled for this machine's CPU
# (-march=native: AVX2/AVX-512 element-wise kernels), and run only on such CPUs.
function(foldc_add_model)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "DRIVER" "TARGET;SOURCE;NAMESPACE" "IMPORT_DIRS")
  if(NOT ARG_TARGET OR NOT ARG_SOURCE)
    message(FATAL_ERROR "foldc_add_model: TARGET and SOURCE are required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "foldc_add_model: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  get_filename_component(source "${ARG_SOURCE}" ABSOLUTE)
  get_filename_component(source_dir "${source}" DIRECTORY)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${ARG_TARGET}.foldc")
  set(outputs "${dir}/${ARG_TARGET}.h" "${dir}/${ARG_TARGET}.cpp")
  set(args "${source}" -o "${dir}" --output-name "${ARG_TARGET}"
           --depfile "${dir}/${ARG_TARGET}.d")
  if(ARG_NAMESPACE)
    list(APPEND args --namespace "${ARG_NAMESPACE}")
  endif()
  set(import_dirs)
  foreach(import_dir IN LISTS ARG_IMPORT_DIRS)
    get_filename_component(import_dir "${import_dir}" ABSOLUTE)
    list(APPEND import_dirs "${import_dir}")
    list(APPEND args -I "${import_dir}")
  endforeach()
  if(ARG_DRIVER)
    list(APPEND args --driver)
    list(APPEND outputs "${dir}/${ARG_TARGET}_main.cpp")
  endif()

  # foldc rewrites only the files whose text changed (so that an edit that
  # leaves the C++ as it was recompiles nothing); the stamp, listed first, is
  # what Make compares with the .fold file, so foldc runs once per edit even
  # though the library and the driver both use its outputs.
  set(stamp "${dir}/${ARG_TARGET}.stamp")
  add_custom_command(
    OUTPUT "${stamp}" ${outputs}
    COMMAND Foldc::foldc ${args}
    COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
    DEPENDS "${source}" Foldc::foldc
    DEPFILE "${dir}/${ARG_TARGET}.d"
    COMMENT "foldc: compiling ${ARG_SOURCE}"
    VERBATIM)

  add_library(${ARG_TARGET} STATIC "${dir}/${ARG_TARGET}.cpp" "${dir}/${ARG_TARGET}.h")
  # Generated code includes imported headers, found where foldc found them:
  # beside the .fold file, then in IMPORT_DIRS.
  target_include_directories(${ARG_TARGET} PUBLIC "${dir}" "${source_dir}" ${import_dirs})
  target_link_libraries(${ARG_TARGET} PUBLIC Foldc::model)
  target_compile_features(${ARG_TARGET} PUBLIC cxx_std_20)
  _foldc_optimise(${ARG_TARGET})
  _foldc_native(${ARG_TARGET})

  if(ARG_DRIVER)
    add_executable(${ARG_TARGET}_driver "${dir}/${ARG_TARGET}_main.cpp")
    target_link_libraries(${ARG_TARGET}_driver PRIVATE ${ARG_TARGET} Foldc::driver)
    _foldc_optimise(${ARG_TARGET}_driver)
    _foldc_native(${ARG_TARGET}_driver)
    _foldc_link_mpi(${ARG_TARGET}_driver)
  endif()
endfunction()

# -march=native where FOLDC_NATIVE asks for it (GCC 12's false warnings inside
# its AVX-512 intrinsics silenced, as in foldc's own build).
function(_foldc_native target)
  if(FOLDC_NATIVE)
    target_compile_options(${target} PRIVATE -march=native
      $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized> $<$<CXX_COMPILER_ID:GNU>:-Wno-uninitialized>)
  endif()
endfunction()

# MPI for a driver, where there is one: FOLDC_WITH_MPI selects the driver's
# MpiCommunicator (runtime/driver/Driver.h).
function(_foldc_link_mpi target)
  _foldc_find_mpi(found)
  if(found)
    target_link_libraries(${target} PRIVATE MPI::MPI_CXX)
    target_compile_definitions(${target} PRIVATE FOLDC_WITH_MPI)
  endif()
endfunction()

# Sets `found` to whether drivers get MPI here: FOLDC_MPI is not OFF and CMake
# finds MPI (then MPI::MPI_CXX and MPIEXEC_EXECUTABLE exist). The C API only,
# without the deprecated C++ bindings.
function(_foldc_find_mpi found)
  set(${found} FALSE PARENT_SCOPE)
  if(DEFINED FOLDC_MPI AND NOT FOLDC_MPI)
    return()
  endif()
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI QUIET COMPONENTS CXX)
  set(${found} ${MPI_CXX_FOUND} PARENT_SCOPE)
endfunction()

# -O2 and EIGEN_NO_DEBUG where the configuration does not optimise already.
function(_foldc_optimise target)
  set(unoptimised "$<NOT:$<CONFIG:Release,RelWithDebInfo,MinSizeRel>>")
  target_compile_options(${target} PRIVATE "$<${unoptimised}:-O2>")
  target_compile_definitions(${target} PRIVATE "$<${unoptimised}:EIGEN_NO_DEBUG>")
endfunction()
