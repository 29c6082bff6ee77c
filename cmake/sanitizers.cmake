# ETC_SANITIZE=ON builds everything with ASan + UBSan (tests must be clean under it).
if(ETC_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
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

# In the sanitizer build, test harnesses and the command-line tool's glue
# compile without optimisation: half the compile time (measured: a CLI11
# subcommand file 30 s at -O1, 16 s at -O0), still fully instrumented. The
# libraries they drive (compiler, runtime, kernels, backends) keep -O1.
function(etc_unoptimized_under_sanitizers target)
  if(ETC_SANITIZE)
    target_compile_options(${target} PRIVATE -O0)
  endif()
endfunction()
