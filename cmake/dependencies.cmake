# Every dependency comes from a Debian package (tools/install_deps.sh installs them).
find_package(Threads REQUIRED)
find_package(Eigen3 3.3 REQUIRED NO_MODULE)
find_package(FlatBuffers REQUIRED CONFIG)
find_program(FLATC flatc REQUIRED)

if(ETC_BUILD_COMPILER)
  find_package(Protobuf REQUIRED)
  find_package(ONNX REQUIRED CONFIG)
  find_package(nlohmann_json 3.9 REQUIRED)
  find_package(CLI11 QUIET CONFIG)
  if(NOT CLI11_FOUND)
    find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
    add_library(CLI11::CLI11 INTERFACE IMPORTED)
    target_include_directories(CLI11::CLI11 INTERFACE ${CLI11_INCLUDE_DIR})
  endif()
endif()
if(ETC_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
if(ETC_BACKEND_ONEDNN)
  # Debian's dnnl-config.cmake requires OpenCL (its build has a GPU runtime
  # the CPU backend never uses): the library and header are found directly.
  find_library(DNNL_LIBRARY dnnl REQUIRED)
  find_path(DNNL_INCLUDE_DIR dnnl.hpp REQUIRED)
  add_library(DNNL::dnnl UNKNOWN IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${DNNL_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${DNNL_INCLUDE_DIR})
  find_package(OpenMP REQUIRED)
endif()

# Compiles a flatbuffer schema into a header-only target.
# Extra flatc flags may follow (e.g. --gen-object-api).
function(etc_flatbuffer_schema target schema out_dir)
  get_filename_component(name ${schema} NAME_WE)
  set(header ${out_dir}/${name}_generated.h)
  add_custom_command(OUTPUT ${header}
    COMMAND ${FLATC} --cpp --scoped-enums ${ARGN} -o ${out_dir} ${schema}
    DEPENDS ${schema} COMMENT "flatc ${name}.fbs")
  add_custom_target(${target}_gen DEPENDS ${header})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} INTERFACE ${CMAKE_BINARY_DIR}/generated)
  target_link_libraries(${target} INTERFACE flatbuffers::flatbuffers)
endfunction()
