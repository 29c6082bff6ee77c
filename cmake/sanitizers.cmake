# ETC_SANITIZE=ON builds everything with ASan + UBSan (tests must be clean under it).
# UBSan's null-pointer checks are left out: ASan reports a dereference of a
# null pointer itself (a SEGV on the zero page, with its stack), and the
# checks took 15-30% of a file's compile time (a compiler file 21 -> 15 s
# at -O1, a kernel file 61 -> 52 s).
if(ETC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=null -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# ETC_FUZZ=ON (clang only) instruments everything for libFuzzer, with ASan +
# UBSan, and links the targets in tests/fuzz against libFuzzer.
option(ETC_FUZZ "Build the fuzz targets with libFuzzer, ASan and UBSan (clang)" OFF)
if(ETC_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "ETC_FUZZ=ON needs clang (CXX=clang++ CC=clang)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# ETC_TSAN=ON builds with ThreadSanitizer (CI: the runtime alone, for the
# threaded tests; tests/tsan.supp names the uninstrumented libraries).
option(ETC_TSAN "Build with ThreadSanitizer" OFF)
if(ETC_TSAN)
  if(ETC_SANITIZE OR ETC_FUZZ)
    message(FATAL_ERROR "ETC_TSAN=ON cannot be combined with ETC_SANITIZE or ETC_FUZZ")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()

# In the sanitizer build, the compiler's libraries, the command-line tool's
# glue and the test harnesses compile without optimisation: about half the
# compile time (a CLI11 subcommand file 30 s at -O1, 16 s at -O0). They also
# leave out UBSan's alignment checks, a quarter of what is left
# (cmd_preprocess.cpp 28.6 -> 22.7 s, capability_partitioner.cpp 11.4 ->
# 8.2 s): what they read comes from protobuf and from their own allocations;
# the runtime, which reads program files and blobs, keeps the checks. The
# runtime (executor, kernels, backends), which the tests spend their time
# in, keeps -O1.
function(etc_unoptimized_under_sanitizers target)
  if(ETC_SANITIZE)
    target_compile_options(${target} PRIVATE -O0 -fno-sanitize=alignment)
  endif()
endfunction()

# Test harnesses (the test files themselves, the conformance runner) also
# compile without UBSan's checks, which took 40% of a test file's compile
# time; the code they test keeps them, and ASan covers the harness too.
function(etc_harness_under_sanitizers target)
  if(ETC_SANITIZE)
    target_compile_options(${target} PRIVATE -O0 -fno-sanitize=undefined)
  endif()
endfunction()

# The portable kernels compile without UBSan's alignment checks, which took
# a third of their compile time (gemm_avx2.cpp 58 -> 36 s, binary.cpp 55 ->
# 37 s): the pointers they read come from the arena and the constant
# segments, whose alignment the loader checks (program_validation.cpp:
# "constant data misaligned", "arena placement misaligned"). ASan and UBSan's
# other checks stay.
function(etc_kernels_under_sanitizers target)
  if(ETC_SANITIZE)
    target_compile_options(${target} PRIVATE -fno-sanitize=alignment)
  endif()
endfunction()
